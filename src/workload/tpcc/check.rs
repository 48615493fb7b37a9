//! The twelve consistency conditions (docs/workloads.md section 7; TPC-C clause 3.3.2), each a query
//! that returns the first offending row, or none. Money is compared to the cent (SQLite keeps
//! NUMERIC sums as doubles).

use crate::db::{Conn, DbError};

pub struct Condition {
    pub number: u32,
    pub text: &'static str,
    /// Names of the columns the query returns, to print an offending row.
    pub columns: &'static [&'static str],
    pub sql: &'static str,
}

/// Per customer: balance, year-to-date payment, delivered order-line amounts and payments, as
/// one aggregation over a union (one pass over each table: joins of grouped subqueries make
/// some planners loop).
macro_rules! customer_sums {
    ($having:literal) => {
        concat!(
            "SELECT w, d, c, SUM(bal), SUM(ytd), SUM(deliv), SUM(paid) FROM (\
             SELECT c_w_id AS w, c_d_id AS d, c_id AS c, c_balance AS bal, c_ytd_payment AS ytd, 0 AS deliv, 0 AS paid FROM customer \
             UNION ALL SELECT o_w_id, o_d_id, o_c_id, 0, 0, ol_amount, 0 FROM orders JOIN order_line \
             ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL \
             UNION ALL SELECT h_c_w_id, h_c_d_id, h_c_id, 0, 0, 0, h_amount FROM history\
             ) x GROUP BY w, d, c HAVING ",
            $having,
            " ORDER BY w, d, c LIMIT 1"
        )
    };
}

pub const CONDITIONS: [Condition; 12] = [
    Condition {
        number: 1,
        text: "W_YTD = sum(D_YTD) for each warehouse",
        columns: &["w_id", "w_ytd", "sum(d_ytd)"],
        sql: "SELECT w.w_id, w.w_ytd, d.s FROM warehouse w JOIN \
              (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id \
              WHERE ABS(w.w_ytd - d.s) > 0.005 ORDER BY w.w_id LIMIT 1",
    },
    Condition {
        number: 2,
        text: "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district",
        columns: &["d_w_id", "d_id", "d_next_o_id", "max(o_id)", "max(no_o_id)"],
        sql: "SELECT d.d_w_id, d.d_id, d.d_next_o_id, o.m, n.m FROM district d \
              LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS m FROM orders GROUP BY o_w_id, o_d_id) o \
              ON o.o_w_id = d.d_w_id AND o.o_d_id = d.d_id \
              LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS m FROM new_order GROUP BY no_w_id, no_d_id) n \
              ON n.no_w_id = d.d_w_id AND n.no_d_id = d.d_id \
              WHERE o.m IS NULL OR d.d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND n.m <> o.m) \
              ORDER BY d.d_w_id, d.d_id LIMIT 1",
    },
    Condition {
        number: 3,
        text: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW_ORDER for each district",
        columns: &["no_w_id", "no_d_id", "max - min + 1", "count"],
        sql: "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order \
              GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) \
              ORDER BY no_w_id, no_d_id LIMIT 1",
    },
    Condition {
        number: 4,
        text: "sum(O_OL_CNT) = rows in ORDER_LINE for each district",
        columns: &["o_w_id", "o_d_id", "sum(o_ol_cnt)", "order lines"],
        sql: "SELECT o.o_w_id, o.o_d_id, o.s, l.c FROM \
              (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o \
              LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id) l \
              ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id \
              WHERE l.c IS NULL OR o.s <> l.c ORDER BY o.o_w_id, o.o_d_id LIMIT 1",
    },
    Condition {
        number: 5,
        text: "O_CARRIER_ID is null exactly when a NEW_ORDER row exists",
        columns: &["o_w_id", "o_d_id", "o_id", "o_carrier_id", "no_o_id"],
        sql: "SELECT o_w_id, o_d_id, o_id, o_carrier_id, no_o_id FROM orders LEFT JOIN new_order \
              ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
              WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL) \
              ORDER BY o_w_id, o_d_id, o_id LIMIT 1",
    },
    Condition {
        number: 6,
        text: "O_OL_CNT = rows in ORDER_LINE for each order",
        columns: &["o_w_id", "o_d_id", "o_id", "o_ol_cnt", "order lines"],
        sql: "SELECT o.o_w_id, o.o_d_id, o.o_id, o.o_ol_cnt, l.c FROM orders o LEFT JOIN \
              (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS c FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l \
              ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id AND l.ol_o_id = o.o_id \
              WHERE l.c IS NULL OR o.o_ol_cnt <> l.c ORDER BY o.o_w_id, o.o_d_id, o.o_id LIMIT 1",
    },
    Condition {
        number: 7,
        text: "OL_DELIVERY_D is null exactly when the order's O_CARRIER_ID is null",
        columns: &[
            "ol_w_id",
            "ol_d_id",
            "ol_o_id",
            "ol_number",
            "ol_delivery_d",
            "o_carrier_id",
        ],
        sql: "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number, ol_delivery_d, o_carrier_id FROM order_line \
              JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
              WHERE (ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL) \
              ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number LIMIT 1",
    },
    Condition {
        number: 8,
        text: "W_YTD = sum(H_AMOUNT) for each warehouse",
        columns: &["w_id", "w_ytd", "sum(h_amount)"],
        sql: "SELECT w.w_id, w.w_ytd, h.s FROM warehouse w LEFT JOIN \
              (SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h ON h.h_w_id = w.w_id \
              WHERE h.s IS NULL OR ABS(w.w_ytd - h.s) > 0.005 ORDER BY w.w_id LIMIT 1",
    },
    Condition {
        number: 9,
        text: "D_YTD = sum(H_AMOUNT) for each district",
        columns: &["d_w_id", "d_id", "d_ytd", "sum(h_amount)"],
        sql: "SELECT d.d_w_id, d.d_id, d.d_ytd, h.s FROM district d LEFT JOIN \
              (SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id, h_d_id) h \
              ON h.h_w_id = d.d_w_id AND h.h_d_id = d.d_id \
              WHERE h.s IS NULL OR ABS(d.d_ytd - h.s) > 0.005 ORDER BY d.d_w_id, d.d_id LIMIT 1",
    },
    Condition {
        number: 10,
        text: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) for each customer",
        columns: &[
            "c_w_id",
            "c_d_id",
            "c_id",
            "c_balance",
            "c_ytd_payment",
            "delivered",
            "paid",
        ],
        sql: customer_sums!("ABS(SUM(bal) - (SUM(deliv) - SUM(paid))) > 0.005"),
    },
    Condition {
        number: 11,
        text: "count(ORDERS) - count(NEW_ORDER) = 2100 for each district (before any Delivery)",
        columns: &["o_w_id", "o_d_id", "orders", "new orders"],
        sql: "SELECT o.o_w_id, o.o_d_id, o.c, COALESCE(n.c, 0) FROM \
              (SELECT o_w_id, o_d_id, COUNT(*) AS c FROM orders GROUP BY o_w_id, o_d_id) o LEFT JOIN \
              (SELECT no_w_id, no_d_id, COUNT(*) AS c FROM new_order GROUP BY no_w_id, no_d_id) n \
              ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id \
              WHERE o.c - COALESCE(n.c, 0) <> 2100 ORDER BY o.o_w_id, o.o_d_id LIMIT 1",
    },
    Condition {
        number: 12,
        text: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) for each customer",
        columns: &[
            "c_w_id",
            "c_d_id",
            "c_id",
            "c_balance",
            "c_ytd_payment",
            "delivered",
            "paid",
        ],
        sql: customer_sums!("ABS(SUM(bal) + SUM(ytd) - SUM(deliv)) > 0.005"),
    },
];

/// One condition's outcome: None when it holds, else the first offending row, described.
pub fn run(conn: &mut dyn Conn, c: &Condition) -> Result<Option<String>, DbError> {
    let rows = conn.query_rows(c.sql, c.columns.len())?;
    Ok(rows.first().map(|row| {
        c.columns
            .iter()
            .zip(row)
            .map(|(name, v)| format!("{name}={}", v.as_deref().unwrap_or("NULL")))
            .collect::<Vec<_>>()
            .join(" ")
    }))
}
