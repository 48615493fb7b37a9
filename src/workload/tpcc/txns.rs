//! The five TPC-C transactions (clauses 2.4 to 2.8) as one terminal runs them, and the checks
//! on what they read.

use super::check;
use super::client::TpccClient;
use super::input::Customer;
use super::load::{DISTRICTS, fixed};
use crate::db::QueryCounts;
use crate::db::{Conn, DbError, ErrorClass, Param, StmtId, Target, TextRow};
use crate::error::Error;
impl TpccClient {
    /// The customer id of a Payment or Order-Status: by id, or the middle one (n/2 rounded up)
    /// of those with the last name, ordered by first name.
    pub(super) fn customer_id(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        w: i64,
        d: i64,
        c: &Customer,
    ) -> Result<Option<i64>, DbError> {
        match c {
            Customer::Id(id) => Ok(Some(*id)),
            Customer::LastName(name) => {
                self.ids.clear();
                let ids = &mut self.ids;
                let n = conn.query_each(
                    self.st.c_by_name,
                    &[Param::Int(w), Param::Int(d), Param::Text(name)],
                    &mut |r| ids.push(int(r, 0)),
                )?;
                q.read(n);
                Ok(self.ids.get(self.ids.len().div_ceil(2).max(1) - 1).copied())
            }
        }
    }

    pub(super) fn new_order(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        d_id: i64,
        c_id: i64,
        items: &[(i64, i64, i64)],
        all_local: bool,
    ) -> Result<bool, DbError> {
        let (st, w_id) = (&self.st, self.w_id);
        let w_tax = one(conn, q, st.w_tax, &[Param::Int(w_id)], |r| rate(r, 0))?;
        let (d_tax, o_id) = one(
            conn,
            q,
            st.d_lock,
            &[Param::Int(w_id), Param::Int(d_id)],
            |r| (rate(r, 0), int(r, 1)),
        )?
        .ok_or_else(|| missing("district", w_id, d_id))?;
        q.dml(conn.execute(
            st.d_next,
            &[Param::Int(o_id + 1), Param::Int(w_id), Param::Int(d_id)],
        )?);
        let discount = one(
            conn,
            q,
            st.c_discount,
            &[Param::Int(w_id), Param::Int(d_id), Param::Int(c_id)],
            |r| rate(r, 0),
        )?
        .unwrap_or(0.0);
        q.dml(conn.execute(
            st.o_insert,
            &[
                Param::Int(o_id),
                Param::Int(d_id),
                Param::Int(w_id),
                Param::Int(c_id),
                Param::Int(items.len() as i64),
                Param::Int(i64::from(all_local)),
            ],
        )?);
        q.dml(conn.execute(
            st.no_insert,
            &[Param::Int(o_id), Param::Int(d_id), Param::Int(w_id)],
        )?);
        let mut total = 0i64;
        for (n, &(i_id, supply, quantity)) in items.iter().enumerate() {
            let Some(price) = one(conn, q, st.i_select, &[Param::Int(i_id)], |r| cents(r, 0))?
            else {
                // The unused item: the specification's expected rollback.
                conn.rollback()?;
                q.others += 1;
                return Ok(true);
            };
            let s_lock = st.s_lock[(d_id - 1) as usize];
            let text = &mut self.text;
            let s_quantity = one(
                conn,
                q,
                s_lock,
                &[Param::Int(i_id), Param::Int(supply)],
                |r| {
                    text.clear();
                    text.push_str(std::str::from_utf8(r.get(2).unwrap_or_default()).unwrap_or(""));
                    int(r, 0)
                },
            )?
            .ok_or_else(|| missing("stock", supply, i_id))?;
            let left = if s_quantity - quantity >= 10 {
                s_quantity - quantity
            } else {
                s_quantity - quantity + 91
            };
            q.dml(conn.execute(
                st.s_update,
                &[
                    Param::Int(left),
                    Param::Int(quantity),
                    Param::Int(i64::from(supply != w_id)),
                    Param::Int(i_id),
                    Param::Int(supply),
                ],
            )?);
            let amount = quantity * price;
            total += amount;
            q.dml(conn.execute(
                st.ol_insert,
                &[
                    Param::Int(o_id),
                    Param::Int(d_id),
                    Param::Int(w_id),
                    Param::Int(n as i64 + 1),
                    Param::Int(i_id),
                    Param::Int(supply),
                    Param::Int(quantity),
                    Param::Text(&fixed(amount, 2)),
                    Param::Text(&self.text),
                ],
            )?);
        }
        // The order total the terminal would show (clause 2.4.2.2).
        std::hint::black_box(
            total as f64 * (1.0 - discount) * (1.0 + w_tax.unwrap_or(0.0) + d_tax),
        );
        Ok(false)
    }

    pub(super) fn payment(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        d_id: i64,
        (c_w_id, c_d_id): (i64, i64),
        customer: &Customer,
        amount: i64,
    ) -> Result<(), DbError> {
        let w_id = self.w_id;
        let amount_text = fixed(amount, 2);
        let amt = Param::Text(&amount_text);
        q.dml(conn.execute(self.st.w_ytd, &[amt, Param::Int(w_id)])?);
        let w_name = one(conn, q, self.st.w_select, &[Param::Int(w_id)], |r| {
            text(r, 0)
        })?
        .ok_or_else(|| missing("warehouse", w_id, 0))?;
        q.dml(conn.execute(self.st.d_ytd, &[amt, Param::Int(w_id), Param::Int(d_id)])?);
        let d_name = one(
            conn,
            q,
            self.st.d_select,
            &[Param::Int(w_id), Param::Int(d_id)],
            |r| text(r, 0),
        )?
        .ok_or_else(|| missing("district", w_id, d_id))?;
        let c_id = self
            .customer_id(conn, q, c_w_id, c_d_id, customer)?
            .ok_or_else(|| missing("customer", c_w_id, c_d_id))?;
        let key = [Param::Int(c_w_id), Param::Int(c_d_id), Param::Int(c_id)];
        let credit = one(conn, q, self.st.c_lock, &key, |r| text(r, 10))?
            .ok_or_else(|| missing("customer", c_w_id, c_id))?;
        if credit == "BC" {
            let old = one(conn, q, self.st.c_data, &key, |r| text(r, 0))?.unwrap_or_default();
            let mut data = format!("{c_id} {c_d_id} {c_w_id} {d_id} {w_id} {amount_text} | {old}");
            truncate(&mut data, 500);
            q.dml(conn.execute(
                self.st.c_pay_bc,
                &[amt, amt, Param::Text(&data), key[0], key[1], key[2]],
            )?);
        } else {
            q.dml(conn.execute(self.st.c_pay, &[amt, amt, key[0], key[1], key[2]])?);
        }
        let mut h_data = format!("{w_name}    {d_name}");
        truncate(&mut h_data, 24);
        q.dml(conn.execute(
            self.st.h_insert,
            &[
                Param::Int(c_id),
                Param::Int(c_d_id),
                Param::Int(c_w_id),
                Param::Int(d_id),
                Param::Int(w_id),
                amt,
                Param::Text(&h_data),
            ],
        )?);
        Ok(())
    }

    pub(super) fn order_status(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        d_id: i64,
        customer: &Customer,
    ) -> Result<(), DbError> {
        let w_id = self.w_id;
        let c_id = self
            .customer_id(conn, q, w_id, d_id, customer)?
            .ok_or_else(|| missing("customer", w_id, d_id))?;
        let key = [Param::Int(w_id), Param::Int(d_id), Param::Int(c_id)];
        one(conn, q, self.st.c_balance, &key, |r| cents(r, 0))?;
        if let Some(o_id) = one(conn, q, self.st.o_last, &key, |r| int(r, 0))? {
            let n = conn.query_each(
                self.st.ol_select,
                &[key[0], key[1], Param::Int(o_id)],
                &mut |r| {
                    std::hint::black_box(cents(r, 3));
                },
            )?;
            q.read(n);
        }
        Ok(())
    }

    pub(super) fn delivery(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        carrier: i64,
    ) -> Result<(), DbError> {
        let (st, w_id) = (&self.st, self.w_id);
        for d_id in 1..=DISTRICTS {
            let wd = [Param::Int(w_id), Param::Int(d_id)];
            let Some(o_id) = one(conn, q, st.no_first, &wd, |r| int(r, 0))? else {
                continue; // no undelivered order in this district: skipped, as allowed
            };
            let key = [wd[0], wd[1], Param::Int(o_id)];
            let deleted = conn.execute(st.no_delete, &key)?;
            q.dml(deleted);
            if deleted == 0 {
                continue; // another terminal's Delivery took it meanwhile
            }
            let c_id = one(conn, q, st.o_customer, &key, |r| int(r, 0))?
                .ok_or_else(|| missing("orders", w_id, o_id))?;
            q.dml(conn.execute(st.o_carrier, &[Param::Int(carrier), key[0], key[1], key[2]])?);
            q.dml(conn.execute(st.ol_deliver, &key)?);
            let sum = one(conn, q, st.ol_sum, &key, |r| cents(r, 0))?.unwrap_or(0);
            q.dml(conn.execute(
                st.c_deliver,
                &[Param::Text(&fixed(sum, 2)), wd[0], wd[1], Param::Int(c_id)],
            )?);
        }
        Ok(())
    }

    pub(super) fn stock_level(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        threshold: i64,
    ) -> Result<(), DbError> {
        let (st, w_id, d_id) = (&self.st, self.w_id, self.d_id);
        let next = one(
            conn,
            q,
            st.d_next_o_id,
            &[Param::Int(w_id), Param::Int(d_id)],
            |r| int(r, 0),
        )?
        .ok_or_else(|| missing("district", w_id, d_id))?;
        std::hint::black_box(one(
            conn,
            q,
            st.stock_count,
            &[
                Param::Int(w_id),
                Param::Int(d_id),
                Param::Int(next),
                Param::Int(next - 20),
                Param::Int(w_id),
                Param::Int(threshold),
            ],
            |r| int(r, 0),
        )?);
        Ok(())
    }
}

/// Runs `stmt` and maps its first row with `f` (None when there is none); counts the read.
pub(super) fn one<T>(
    conn: &mut dyn Conn,
    q: &mut QueryCounts,
    stmt: StmtId,
    params: &[Param],
    mut f: impl FnMut(&dyn TextRow) -> T,
) -> Result<Option<T>, DbError> {
    let mut out = None;
    let n = conn.query_each(stmt, params, &mut |r| {
        if out.is_none() {
            out = Some(f(r));
        }
    })?;
    q.read(n);
    Ok(out)
}

pub(super) fn text(r: &dyn TextRow, i: usize) -> String {
    String::from_utf8_lossy(r.get(i).unwrap_or_default()).into_owned()
}

pub(super) fn int(r: &dyn TextRow, i: usize) -> i64 {
    std::str::from_utf8(r.get(i).unwrap_or_default())
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

pub(super) fn rate(r: &dyn TextRow, i: usize) -> f64 {
    std::str::from_utf8(r.get(i).unwrap_or_default())
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0)
}

/// A money value in cents (SQLite may hand back a double such as 1234.5600000001).
pub(super) fn cents(r: &dyn TextRow, i: usize) -> i64 {
    (rate(r, i) * 100.0).round() as i64
}

pub(super) fn truncate(s: &mut String, max: usize) {
    if s.len() > max {
        let mut at = max;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
    }
}

/// A row the loaded data must have is gone: the tables are not what `tpcc prepare` made.
pub(super) fn missing(table: &str, a: i64, b: i64) -> DbError {
    DbError::new(
        ErrorClass::Fatal,
        "tpcc",
        format!(
            "no {table} row for ({a}, {b}): the TPC-C tables are not as `dbsweep tpcc prepare` loaded them"
        ),
    )
}

/// The consistency conditions on the database at `target`: all twelve after the load, or
/// after transactions ran (`after_run`, as after a crash) all but condition 11, which
/// deliveries end. The first that fails is the error.
pub fn verify_conditions(target: &dyn Target, after_run: bool) -> Result<(), Error> {
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    for c in check::CONDITIONS
        .iter()
        .filter(|c| !(after_run && c.number == 11))
    {
        if let Some(row) = check::run(conn.as_mut(), c).map_err(|e| Error::db(&url, e))? {
            return Err(Error::Run(format!(
                "{url}: consistency condition {} fails {}: {row}",
                c.number,
                if after_run {
                    "after the run"
                } else {
                    "after the load"
                }
            )));
        }
    }
    Ok(())
}
