//! The TPC-C transaction mix (clauses 2.4 to 2.8) as a [`Workload`]: each client has a home
//! warehouse, deals its transactions from a shuffled deck, and reports each transaction's type so
//! that the runner keeps their figures apart.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::load::{self, CUSTOMERS, DISTRICTS, ITEMS, fixed, last_name};
use super::{check, schema};
use crate::db::QueryCounts;
use crate::db::{Conn, DbError, Dialect, ErrorClass, Param, StmtId, Target, TextRow};
use crate::error::Error;
use crate::metrics::KindStats;
use crate::results::figures::LoadReport;
use crate::results::{Latency, TpccFigures, TxnFigures};
use crate::workload::rand::Rand;
use crate::workload::{Client, TableSet, Workload, WorkloadOptions};

/// The transaction types, in the order the runner and the results list them.
pub const KINDS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];
const NEW_ORDER: usize = 0;
const PAYMENT: usize = 1;
const ORDER_STATUS: usize = 2;
const DELIVERY: usize = 3;
const STOCK_LEVEL: usize = 4;

/// Cards of each type in a deck of 100: Payment 43%, Order-Status, Delivery and Stock-Level 4%
/// each (the specification's minimums), New-Order the rest.
pub const DECK: [u32; 5] = [45, 43, 4, 4, 4];
/// Keying and mean think times in seconds (clause 5.2.5.7), by type.
const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
const THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];
/// The 90th-percentile response-time limits in seconds (clause 5.2.5.3), by type.
pub const LIMIT_P90_S: [f64; 5] = [5.0, 5.0, 5.0, 5.0, 20.0];

/// The run-time constants C of NURand for customer ids, last names and item ids.
#[derive(Clone, Copy, Debug)]
struct NurandC {
    c_id: u64,
    c_last: u64,
    i_id: u64,
}

pub struct Tpcc {
    warehouses: u32,
    wait: bool,
    think_scale: f64,
    threads: u32,
    seed: u64,
    c: NurandC,
}

impl Tpcc {
    pub fn new(o: &WorkloadOptions) -> Tpcc {
        let seed = o.rand.rand_seed;
        let mut r = Rand::for_thread(seed, u32::MAX);
        Tpcc {
            warehouses: o.warehouses.max(1),
            wait: o.wait,
            think_scale: o.think_scale,
            threads: o.threads.max(1),
            seed,
            c: NurandC {
                c_id: r.uniform(0, 1023),
                c_last: r.uniform(0, 255),
                i_id: r.uniform(0, 8191),
            },
        }
    }
}

impl Workload for Tpcc {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    /// No sysbench tables: prepare, cleanup and the checks below handle the nine TPC-C tables.
    fn tables(&self) -> TableSet {
        TableSet::sysbench(0)
    }

    fn kinds(&self) -> &'static [&'static str] {
        &KINDS
    }

    fn prepare(
        &self,
        target: &dyn Target,
        _opts: &WorkloadOptions,
        force: bool,
        stop: &AtomicBool,
    ) -> Result<LoadReport, Error> {
        let r = load::prepare(
            target,
            self.warehouses,
            self.threads,
            self.seed,
            force,
            stop,
        )?;
        Ok(LoadReport {
            tables: schema::TABLES.len() as u32,
            rows: r.rows,
            seconds: r.seconds,
            rows_per_s: r.rows_per_s,
            client_cpu_s: r.client_cpu_s,
        })
    }

    /// The twelve consistency conditions.
    fn verify(&self, target: &dyn Target) -> Result<(), Error> {
        verify_conditions(target, false)
    }

    fn cleanup(&self, target: &dyn Target) -> Result<u32, Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        let dropped = load::drop_tables(conn.as_mut(), &url)?;
        Ok(dropped.len() as u32)
    }

    fn tables_missing(&self, conn: &mut dyn Conn) -> Result<bool, DbError> {
        Ok(load::existing_tables(conn)?.len() < schema::TABLES.len())
    }

    /// Every table exists and holds the cardinalities of `--warehouses` warehouses (orders
    /// grow during runs, so only their floor is checked).
    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        _opts: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        let hint = format!(
            "run `dbsweep tpcc prepare --warehouses {}` (with --force to reload)",
            self.warehouses
        );
        let existing = load::existing_tables(conn).map_err(|e| Error::db(url, e))?;
        let missing: Vec<&str> = schema::TABLES
            .iter()
            .filter(|t| !existing.contains(t))
            .copied()
            .collect();
        if !missing.is_empty() {
            return Err(Error::Usage(format!(
                "{url}: the TPC-C table(s) {} do not exist: {hint}",
                missing.join(", ")
            )));
        }
        let w = i64::from(self.warehouses);
        let loaded = conn
            .query_i64("SELECT COUNT(*) FROM warehouse")
            .map_err(|e| Error::db(url, e))?
            .unwrap_or(0);
        if loaded != w {
            return Err(Error::Usage(format!(
                "{url}: {loaded} warehouse(s) are loaded, not --warehouses {w}: {hint}"
            )));
        }
        let expect = [
            ("item", ITEMS, true),
            ("district", w * DISTRICTS, true),
            ("customer", w * DISTRICTS * CUSTOMERS, true),
            ("stock", w * ITEMS, true),
            ("orders", w * DISTRICTS * load::ORDERS, false),
        ];
        for (table, rows, exact) in expect {
            let n = conn
                .query_i64(&format!("SELECT COUNT(*) FROM {table}"))
                .map_err(|e| Error::db(url, e))?
                .unwrap_or(0);
            if n < rows || (exact && n != rows) {
                return Err(Error::Usage(format!(
                    "{url}: table {table} holds {n} rows, not the {rows} of {w} warehouse(s): it is partly loaded; {hint}"
                )));
            }
        }
        Ok(())
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        Ok(Box::new(TpccClient::new(self, conn, thread)?))
    }
}

/// A transaction's input, drawn before it runs and kept until it succeeds, so that a retry
/// after a deadlock runs the same transaction again.
#[derive(Clone, Debug)]
enum Input {
    NewOrder {
        d_id: i64,
        c_id: i64,
        /// (item id, supplying warehouse, quantity); an unused item id last when it must roll back.
        items: Vec<(i64, i64, i64)>,
        all_local: bool,
    },
    Payment {
        d_id: i64,
        c_w_id: i64,
        c_d_id: i64,
        customer: Customer,
        /// In cents.
        amount: i64,
    },
    OrderStatus {
        d_id: i64,
        customer: Customer,
    },
    Delivery {
        carrier: i64,
    },
    StockLevel {
        threshold: i64,
    },
}

impl Input {
    fn kind(&self) -> usize {
        match self {
            Input::NewOrder { .. } => NEW_ORDER,
            Input::Payment { .. } => PAYMENT,
            Input::OrderStatus { .. } => ORDER_STATUS,
            Input::Delivery { .. } => DELIVERY,
            Input::StockLevel { .. } => STOCK_LEVEL,
        }
    }
}

#[derive(Clone, Debug)]
enum Customer {
    Id(i64),
    LastName(String),
}

/// The statements of every transaction, prepared once per connection.
struct Stmts {
    // New-Order
    w_tax: StmtId,
    d_lock: StmtId,
    d_next: StmtId,
    c_discount: StmtId,
    o_insert: StmtId,
    no_insert: StmtId,
    i_select: StmtId,
    /// One per district: each reads its own s_dist_NN.
    s_lock: Vec<StmtId>,
    s_update: StmtId,
    ol_insert: StmtId,
    // Payment
    w_ytd: StmtId,
    w_select: StmtId,
    d_ytd: StmtId,
    d_select: StmtId,
    c_by_name: StmtId,
    c_lock: StmtId,
    c_data: StmtId,
    c_pay: StmtId,
    c_pay_bc: StmtId,
    h_insert: StmtId,
    // Order-Status
    c_balance: StmtId,
    o_last: StmtId,
    ol_select: StmtId,
    // Delivery
    no_first: StmtId,
    no_delete: StmtId,
    o_customer: StmtId,
    o_carrier: StmtId,
    ol_deliver: StmtId,
    ol_sum: StmtId,
    c_deliver: StmtId,
    // Stock-Level
    d_next_o_id: StmtId,
    stock_count: StmtId,
}

impl Stmts {
    fn prepare(conn: &mut dyn Conn, dialect: Dialect) -> Result<Stmts, DbError> {
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

/// One terminal: its home warehouse and district, its deck, the transaction in hand.
struct TpccClient {
    st: Stmts,
    w_id: i64,
    /// Stock-Level's district, fixed per terminal (clause 2.8.1.1).
    d_id: i64,
    warehouses: i64,
    wait: bool,
    think_scale: f64,
    c: NurandC,
    deck: Vec<u8>,
    pending: Option<Input>,
    /// The type of the last transaction run and whether it rolled back as expected.
    last: Option<(usize, bool)>,
    /// Reused buffers for the customer ids of a last-name lookup and for texts.
    ids: Vec<i64>,
    text: String,
}

impl TpccClient {
    fn new(w: &Tpcc, conn: &mut dyn Conn, thread: u32) -> Result<TpccClient, DbError> {
        let dialect = conn.dialect();
        Ok(TpccClient {
            st: Stmts::prepare(conn, dialect)?,
            w_id: i64::from(thread % w.warehouses) + 1,
            d_id: i64::from(thread / w.warehouses) % DISTRICTS + 1,
            warehouses: i64::from(w.warehouses),
            wait: w.wait,
            think_scale: w.think_scale,
            c: w.c,
            deck: Vec::with_capacity(100),
            pending: None,
            last: None,
            ids: Vec::new(),
            text: String::new(),
        })
    }

    /// The next card of the deck, dealing a freshly shuffled deck when it is used up.
    fn deal(&mut self, rand: &mut Rand) -> usize {
        if self.deck.is_empty() {
            for (kind, &n) in DECK.iter().enumerate() {
                self.deck
                    .extend(std::iter::repeat_n(kind as u8, n as usize));
            }
            // Fisher-Yates; popping from the end deals it.
            for i in (1..self.deck.len()).rev() {
                let j = rand.uniform(0, i as u64) as usize;
                self.deck.swap(i, j);
            }
        }
        usize::from(self.deck.pop().expect("a full deck"))
    }

    fn nurand(rand: &mut Rand, a: u64, x: u64, y: u64, c: u64) -> i64 {
        (((rand.uniform(0, a) | rand.uniform(x, y)) + c) % (y - x + 1) + x) as i64
    }

    fn customer(&self, rand: &mut Rand) -> Customer {
        if rand.uniform(1, 100) <= 60 {
            Customer::LastName(last_name(Self::nurand(rand, 255, 0, 999, self.c.c_last)))
        } else {
            Customer::Id(Self::nurand(rand, 1023, 1, CUSTOMERS as u64, self.c.c_id))
        }
    }

    fn other_warehouse(&self, rand: &mut Rand) -> i64 {
        if self.warehouses == 1 {
            return self.w_id;
        }
        let w = rand.uniform(1, self.warehouses as u64 - 1) as i64;
        if w >= self.w_id { w + 1 } else { w }
    }

    /// Draws the next transaction and its input (clauses 2.4.1 to 2.8.1).
    fn draw(&mut self, rand: &mut Rand) -> Input {
        let district = |rand: &mut Rand| rand.uniform(1, DISTRICTS as u64) as i64;
        match self.deal(rand) {
            NEW_ORDER => {
                let d_id = district(rand);
                let c_id = Self::nurand(rand, 1023, 1, CUSTOMERS as u64, self.c.c_id);
                let count = rand.uniform(5, 15) as usize;
                let rollback = rand.uniform(1, 100) == 1;
                let mut items: Vec<(i64, i64, i64)> = (0..count)
                    .map(|_| {
                        let i_id = Self::nurand(rand, 8191, 1, ITEMS as u64, self.c.i_id);
                        let supply = if rand.uniform(1, 100) == 1 {
                            self.other_warehouse(rand)
                        } else {
                            self.w_id
                        };
                        (i_id, supply, rand.uniform(1, 10) as i64)
                    })
                    .collect();
                // Stock rows locked in one order everywhere make deadlocks between New-Orders
                // rare; the unused item that forces the rollback stays last.
                items.sort_unstable();
                if rollback {
                    items.last_mut().expect("5 or more items").0 = ITEMS + 1;
                }
                let all_local = items.iter().all(|it| it.1 == self.w_id);
                Input::NewOrder {
                    d_id,
                    c_id,
                    items,
                    all_local,
                }
            }
            PAYMENT => {
                let d_id = district(rand);
                let (c_w_id, c_d_id) = if rand.uniform(1, 100) <= 85 {
                    (self.w_id, d_id)
                } else {
                    (self.other_warehouse(rand), district(rand))
                };
                Input::Payment {
                    d_id,
                    c_w_id,
                    c_d_id,
                    customer: self.customer(rand),
                    amount: rand.uniform(100, 500_000) as i64,
                }
            }
            ORDER_STATUS => Input::OrderStatus {
                d_id: district(rand),
                customer: self.customer(rand),
            },
            DELIVERY => Input::Delivery {
                carrier: rand.uniform(1, 10) as i64,
            },
            _ => Input::StockLevel {
                threshold: rand.uniform(10, 20) as i64,
            },
        }
    }

    /// The customer id of a Payment or Order-Status: by id, or the middle one (n/2 rounded up)
    /// of those with the last name, ordered by first name.
    fn customer_id(
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

    fn new_order(
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

    fn payment(
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

    fn order_status(
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

    fn delivery(
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

    fn stock_level(
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

impl Client for TpccClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let input = match self.pending.take() {
            Some(input) => input,
            None => self.draw(rand),
        };
        // Kept until the transaction succeeds: a retry runs the same one.
        self.pending = Some(input.clone());
        let write = matches!(
            input,
            Input::NewOrder { .. } | Input::Payment { .. } | Input::Delivery { .. }
        );
        conn.begin(write)?;
        q.others += 1;
        let rolled_back = match &input {
            Input::NewOrder {
                d_id,
                c_id,
                items,
                all_local,
            } => self.new_order(conn, q, *d_id, *c_id, items, *all_local)?,
            Input::Payment {
                d_id,
                c_w_id,
                c_d_id,
                customer,
                amount,
            } => {
                self.payment(conn, q, *d_id, (*c_w_id, *c_d_id), customer, *amount)?;
                false
            }
            Input::OrderStatus { d_id, customer } => {
                self.order_status(conn, q, *d_id, customer)?;
                false
            }
            Input::Delivery { carrier } => {
                self.delivery(conn, q, *carrier)?;
                false
            }
            Input::StockLevel { threshold } => {
                self.stock_level(conn, q, *threshold)?;
                false
            }
        };
        if !rolled_back {
            conn.commit()?;
            q.others += 1;
        }
        self.pending = None;
        self.last = Some((input.kind(), rolled_back));
        Ok(())
    }

    fn last_kind(&self) -> Option<(usize, bool)> {
        self.last
    }

    /// Under --wait: the think time after the last transaction, then the keying time of the
    /// next (drawn now, so that its keying time is its own). Before a terminal's first
    /// transaction, a wait drawn uniformly over one mean cycle stands for the think time: the
    /// terminals of a run start together, and without it those whose first card is the same
    /// type would all submit at the same instant (a burst the specification's ramp-up avoids).
    fn pause(&mut self, rand: &mut Rand) -> Option<Duration> {
        if !self.wait {
            return None;
        }
        let think = match self.last {
            Some((kind, _)) => {
                let mean = THINK_S[kind];
                (-(1.0 - rand.unit()).ln() * mean).min(10.0 * mean)
            }
            None => rand.unit() * MEAN_CYCLE_S,
        };
        let next = match &self.pending {
            Some(input) => input.kind(),
            None => {
                let input = self.draw(rand);
                let kind = input.kind();
                self.pending = Some(input);
                kind
            }
        };
        Some(Duration::from_secs_f64(
            (think + KEYING_S[next]) * self.think_scale,
        ))
    }
}

/// A terminal's mean cycle under the specification's pacing: keying and mean think time over
/// the least mix (see [`NOPM_CEILING_PER_WAREHOUSE`]).
const MEAN_CYCLE_S: f64 = 20.99;

/// New-Order transactions per minute that ten terminals of one warehouse reach at most with
/// the specification's keying and think times and its least mix: each terminal's mean cycle
/// (keying + mean think, over the mix: 0.45 x 30 + 0.43 x 15 + 0.04 x (12 + 7 + 7) = 20.99 s)
/// gives 60 / 20.99 x 0.45 New-Orders a minute, x 10 terminals.
pub const NOPM_CEILING_PER_WAREHOUSE: f64 = 12.86;

/// How a run's terminals were paced (`--wait`, `--think-scale`), for its figures.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    pub wait: bool,
    pub think_scale: f64,
    pub terminals: u32,
}

/// NOPM, tpm and per-type figures from the run's per-type statistics.
/// `queue`: per type, the time due terminals waited for a worker or a connection (empty when
/// they did not share any).
pub fn figures(
    kinds: &[KindStats],
    queue: &[KindStats],
    seconds: f64,
    warehouses: u32,
    pacing: Pacing,
) -> TpccFigures {
    let per_min = |n: u64| {
        if seconds > 0.0 {
            n as f64 * 60.0 / seconds
        } else {
            0.0
        }
    };
    let total: u64 = kinds.iter().map(|k| k.events).sum();
    let transactions: Vec<TxnFigures> = KINDS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let empty = KindStats::default();
            let k = kinds.get(i).unwrap_or(&empty);
            let latency_ms = Latency::from_histogram(&k.latency);
            let limit_p90_ms = LIMIT_P90_S[i] * 1000.0;
            TxnFigures {
                name: (*name).to_string(),
                count: k.events,
                share_pct: if total > 0 {
                    k.events as f64 * 100.0 / total as f64
                } else {
                    0.0
                },
                retries: k.retries,
                rollbacks: k.rollbacks,
                limit_met: latency_ms.p90 <= limit_p90_ms,
                queue_ms: queue.get(i).map(|q| Latency::from_histogram(&q.latency)),
                latency_ms,
                limit_p90_ms,
                histogram: Some(crate::results::HistogramData::encode(&k.latency)),
            }
        })
        .collect();
    let committed = kinds.get(NEW_ORDER).map_or(0, |k| k.events - k.rollbacks);
    let w = f64::from(warehouses.max(1));
    // The ceiling of this run's terminals: ten per warehouse reach the specification's, fewer
    // proportionally less; scaled think times raise it as much as they shorten the cycle.
    let ceiling = pacing.wait.then(|| {
        NOPM_CEILING_PER_WAREHOUSE * f64::from(pacing.terminals) / (10.0 * w) / pacing.think_scale
    });
    TpccFigures {
        warehouses,
        nopm_per_warehouse: per_min(committed) / w,
        terminals_per_warehouse: f64::from(pacing.terminals) / w,
        nopm_ceiling_per_warehouse: ceiling,
        think_scale: pacing.wait.then_some(pacing.think_scale),
        conforming: pacing.wait
            && pacing.think_scale == 1.0
            && u64::from(pacing.terminals) == 10 * u64::from(warehouses),
        nopm: per_min(committed),
        tpm: per_min(total),
        limits_met: transactions.iter().all(|t| t.limit_met),
        transactions,
    }
}

/// Runs `stmt` and maps its first row with `f` (None when there is none); counts the read.
fn one<T>(
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

fn text(r: &dyn TextRow, i: usize) -> String {
    String::from_utf8_lossy(r.get(i).unwrap_or_default()).into_owned()
}

fn int(r: &dyn TextRow, i: usize) -> i64 {
    std::str::from_utf8(r.get(i).unwrap_or_default())
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn rate(r: &dyn TextRow, i: usize) -> f64 {
    std::str::from_utf8(r.get(i).unwrap_or_default())
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0)
}

/// A money value in cents (SQLite may hand back a double such as 1234.5600000001).
fn cents(r: &dyn TextRow, i: usize) -> i64 {
    (rate(r, i) * 100.0).round() as i64
}

fn truncate(s: &mut String, max: usize) {
    if s.len() > max {
        let mut at = max;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
    }
}

/// A row the loaded data must have is gone: the tables are not what `tpcc prepare` made.
fn missing(table: &str, a: i64, b: i64) -> DbError {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn client(warehouses: u32) -> TpccClient {
        let w = Tpcc {
            warehouses,
            wait: false,
            think_scale: 1.0,
            threads: 1,
            seed: 7,
            c: NurandC {
                c_id: 1,
                c_last: 2,
                i_id: 3,
            },
        };
        let mut conn = crate::db::open("mock://", crate::db::OpenOptions::default())
            .expect("mock target")
            .connect()
            .expect("mock connection");
        TpccClient::new(&w, conn.as_mut(), 0).expect("statements prepare on the mock")
    }

    #[test]
    fn every_deck_deals_the_mix_exactly() {
        let mut c = client(1);
        let mut rand = Rand::for_thread(42, 0);
        for _ in 0..5 {
            let mut counts = [0u32; 5];
            for _ in 0..100 {
                counts[c.deal(&mut rand)] += 1;
            }
            assert_eq!(counts, DECK);
        }
        assert_eq!(DECK.iter().sum::<u32>(), 100);
    }

    #[test]
    fn inputs_follow_the_specification() {
        let mut c = client(3);
        let mut rand = Rand::for_thread(9, 0);
        let (mut by_name, mut payments, mut remote, mut rollbacks, mut orders) = (0, 0, 0, 0, 0);
        for _ in 0..20_000 {
            match c.draw(&mut rand) {
                Input::NewOrder { items, .. } => {
                    orders += 1;
                    assert!((5..=15).contains(&items.len()));
                    if items.last().unwrap().0 == ITEMS + 1 {
                        rollbacks += 1;
                    }
                    assert!(items[..items.len() - 1].iter().all(|i| i.0 <= ITEMS));
                }
                Input::Payment {
                    c_w_id, customer, ..
                } => {
                    payments += 1;
                    remote += i32::from(c_w_id != c.w_id);
                    by_name += i32::from(matches!(customer, Customer::LastName(_)));
                }
                _ => {}
            }
        }
        let pct = |a: i32, b: i32| f64::from(a) * 100.0 / f64::from(b);
        assert!(
            (55.0..65.0).contains(&pct(by_name, payments)),
            "{by_name}/{payments}"
        );
        assert!(
            (12.0..18.0).contains(&pct(remote, payments)),
            "{remote}/{payments}"
        );
        assert!(
            (0.5..1.6).contains(&pct(rollbacks, orders)),
            "{rollbacks}/{orders}"
        );
    }

    #[test]
    fn other_warehouse_is_never_home() {
        let mut c = client(4);
        c.w_id = 2;
        let mut rand = Rand::for_thread(1, 0);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let w = c.other_warehouse(&mut rand);
            assert_ne!(w, 2);
            seen[w as usize] = true;
        }
        assert_eq!(seen, [false, true, false, true, true]);
    }
}
