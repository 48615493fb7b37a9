//! The TPC-C statements, prepared once per connection in the dialect of the target.

use super::load::DISTRICTS;
use crate::db::{Conn, DbError, Dialect, StmtId};
/// The statements of every transaction, prepared once per connection.
pub(super) struct Stmts {
    // New-Order
    pub(super) w_tax: StmtId,
    pub(super) d_lock: StmtId,
    pub(super) d_next: StmtId,
    pub(super) c_discount: StmtId,
    pub(super) o_insert: StmtId,
    pub(super) no_insert: StmtId,
    pub(super) i_select: StmtId,
    /// One per district: each reads its own s_dist_NN.
    pub(super) s_lock: Vec<StmtId>,
    pub(super) s_update: StmtId,
    pub(super) ol_insert: StmtId,
    // Payment
    pub(super) w_ytd: StmtId,
    pub(super) w_select: StmtId,
    pub(super) d_ytd: StmtId,
    pub(super) d_select: StmtId,
    pub(super) c_by_name: StmtId,
    pub(super) c_lock: StmtId,
    pub(super) c_data: StmtId,
    pub(super) c_pay: StmtId,
    pub(super) c_pay_bc: StmtId,
    pub(super) h_insert: StmtId,
    // Order-Status
    pub(super) c_balance: StmtId,
    pub(super) o_last: StmtId,
    pub(super) ol_select: StmtId,
    // Delivery
    pub(super) no_first: StmtId,
    pub(super) no_delete: StmtId,
    pub(super) o_customer: StmtId,
    pub(super) o_carrier: StmtId,
    pub(super) ol_deliver: StmtId,
    pub(super) ol_sum: StmtId,
    pub(super) c_deliver: StmtId,
    // Stock-Level
    pub(super) d_next_o_id: StmtId,
    pub(super) stock_count: StmtId,
}

impl Stmts {
    pub(super) fn prepare(conn: &mut dyn Conn, dialect: Dialect) -> Result<Stmts, DbError> {
        // SQLite has no row locks: its write transactions take the database's write lock first.
        let lock = if dialect == Dialect::Sqlite {
            ""
        } else {
            " FOR UPDATE"
        };
        let mut p = |sql: &str| conn.prepare(sql);
        let s_lock = (1..=DISTRICTS)
            .map(|d| {
                p(&format!(
                    "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock WHERE s_i_id = ? AND s_w_id = ?{lock}"
                ))
            })
            .collect::<Result<_, _>>()?;
        Ok(Stmts {
            w_tax: p("SELECT w_tax FROM warehouse WHERE w_id = ?")?,
            d_lock: p(&format!(
                "SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?{lock}"
            ))?,
            d_next: p("UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?")?,
            c_discount: p(
                "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            o_insert: p(
                "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
            )?,
            no_insert: p("INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)")?,
            i_select: p("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?")?,
            s_lock,
            s_update: p(
                "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
            )?,
            ol_insert: p(
                "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
            )?,
            w_ytd: p("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?")?,
            w_select: p(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?",
            )?,
            d_ytd: p("UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?")?,
            d_select: p(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?",
            )?,
            c_by_name: p(
                "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
            )?,
            c_lock: p(&format!(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{lock}"
            ))?,
            c_data: p("SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")?,
            c_pay: p(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            c_pay_bc: p(
                "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            h_insert: p(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
            )?,
            c_balance: p(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            o_last: p(
                "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
            )?,
            ol_select: p(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            )?,
            no_first: p(
                "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1",
            )?,
            no_delete: p(
                "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
            )?,
            o_customer: p(
                "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            )?,
            o_carrier: p(
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            )?,
            ol_deliver: p(
                "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            )?,
            ol_sum: p(
                "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            )?,
            c_deliver: p(
                "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            )?,
            d_next_o_id: p("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")?,
            stock_count: p(
                "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
            )?,
        })
    }
}
