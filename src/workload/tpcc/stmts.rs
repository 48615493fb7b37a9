//! The TPC-C statements, prepared once per connection in the dialect of the target.

use super::load::DISTRICTS;
use crate::db::{Conn, DbError, Dialect, StmtId};
/// The statements of every transaction: their SQL (`Stmts<String>`, [`Stmts::sql`]), or
/// their ids once prepared on a connection (`Stmts<StmtId>`). The terminals bench's floor
/// client prepares the same SQL.
#[derive(Clone)]
pub struct Stmts<T = StmtId> {
    // New-Order
    pub w_tax: T,
    pub d_lock: T,
    pub d_next: T,
    pub c_discount: T,
    pub o_insert: T,
    pub no_insert: T,
    pub i_select: T,
    /// One per district: each reads its own s_dist_NN.
    pub s_lock: Vec<T>,
    pub s_update: T,
    pub ol_insert: T,
    // Payment
    pub w_ytd: T,
    pub w_select: T,
    pub d_ytd: T,
    pub d_select: T,
    pub c_by_name: T,
    pub c_lock: T,
    pub c_data: T,
    pub c_pay: T,
    pub c_pay_bc: T,
    pub h_insert: T,
    // Order-Status
    pub c_balance: T,
    pub o_last: T,
    pub ol_select: T,
    // Delivery
    pub no_first: T,
    pub no_delete: T,
    pub o_customer: T,
    pub o_carrier: T,
    pub ol_deliver: T,
    pub ol_sum: T,
    pub c_deliver: T,
    // Stock-Level
    pub d_next_o_id: T,
    pub stock_count: T,
}

impl Stmts {
    pub(super) fn prepare(conn: &mut dyn Conn, dialect: Dialect) -> Result<Stmts, DbError> {
        Stmts::sql(dialect).try_map(|sql| conn.prepare(&sql))
    }
}

impl Stmts<String> {
    /// Every statement's SQL in `dialect`, with `?` placeholders.
    pub fn sql(dialect: Dialect) -> Stmts<String> {
        // SQLite has no row locks: its write transactions take the database's write lock first.
        let lock = if dialect == Dialect::Sqlite {
            ""
        } else {
            " FOR UPDATE"
        };
        let p = |sql: &str| sql.to_string();
        let s_lock = (1..=DISTRICTS)
            .map(|d| {
                p(&format!(
                    "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock WHERE s_i_id = ? AND s_w_id = ?{lock}"
                ))
            })
            .collect();
        Stmts {
            w_tax: p("SELECT w_tax FROM warehouse WHERE w_id = ?"),
            d_lock: p(&format!(
                "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?{lock}"
            )),
            d_next: p("UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?"),
            c_discount: p(
                "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            ),
            o_insert: p(
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
            ),
            no_insert: p("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"),
            i_select: p("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?"),
            s_lock,
            s_update: p(
                "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
            ),
            ol_insert: p(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
            ),
            w_ytd: p("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"),
            w_select: p(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
            ),
            d_ytd: p("UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"),
            d_select: p(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
            ),
            c_by_name: p(
                "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
            ),
            c_lock: p(&format!(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{lock}"
            )),
            c_data: p("SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
            c_pay: p(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            ),
            c_pay_bc: p(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            ),
            h_insert: p(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
            ),
            c_balance: p(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            ),
            o_last: p(
                "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
            ),
            ol_select: p(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            ),
            no_first: p(
                "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1",
            ),
            no_delete: p("DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"),
            o_customer: p("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"),
            o_carrier: p(
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            ),
            ol_deliver: p(
                "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            ),
            ol_sum: p(
                "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            ),
            c_deliver: p(
                "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            ),
            d_next_o_id: p("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
            stock_count: p(
                "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
            ),
        }
    }
}

impl<T> Stmts<T> {
    /// The same statements, each mapped by `f` (in the order of the fields).
    pub fn try_map<U, E>(self, mut f: impl FnMut(T) -> Result<U, E>) -> Result<Stmts<U>, E> {
        Ok(Stmts {
            w_tax: f(self.w_tax)?,
            d_lock: f(self.d_lock)?,
            d_next: f(self.d_next)?,
            c_discount: f(self.c_discount)?,
            o_insert: f(self.o_insert)?,
            no_insert: f(self.no_insert)?,
            i_select: f(self.i_select)?,
            s_lock: self
                .s_lock
                .into_iter()
                .map(&mut f)
                .collect::<Result<_, _>>()?,
            s_update: f(self.s_update)?,
            ol_insert: f(self.ol_insert)?,
            w_ytd: f(self.w_ytd)?,
            w_select: f(self.w_select)?,
            d_ytd: f(self.d_ytd)?,
            d_select: f(self.d_select)?,
            c_by_name: f(self.c_by_name)?,
            c_lock: f(self.c_lock)?,
            c_data: f(self.c_data)?,
            c_pay: f(self.c_pay)?,
            c_pay_bc: f(self.c_pay_bc)?,
            h_insert: f(self.h_insert)?,
            c_balance: f(self.c_balance)?,
            o_last: f(self.o_last)?,
            ol_select: f(self.ol_select)?,
            no_first: f(self.no_first)?,
            no_delete: f(self.no_delete)?,
            o_customer: f(self.o_customer)?,
            o_carrier: f(self.o_carrier)?,
            ol_deliver: f(self.ol_deliver)?,
            ol_sum: f(self.ol_sum)?,
            c_deliver: f(self.c_deliver)?,
            d_next_o_id: f(self.d_next_o_id)?,
            stock_count: f(self.stock_count)?,
        })
    }
}
