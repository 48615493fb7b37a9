//! A floor terminal: its inputs drawn as dbsweep's TPC-C terminal draws them, its keying and
//! think times, and its transactions as the statements dbsweep runs.

use std::time::Duration;

use dbsweep::workload::rand::Rand;
use dbsweep::workload::tpcc::deck::{KEYING_S, Mix, THINK_S};
use dbsweep::workload::tpcc::load::{CUSTOMERS, DISTRICTS, ITEMS, fixed, last_name};
use dbsweep::workload::tpcc::stmts::Stmts;

use super::Spec;
use super::pg::{Failed, P, Pg};

/// A transaction's input, drawn as dbsweep's terminal draws it.
#[derive(Clone)]
enum Input {
    NewOrder {
        d: i64,
        c: i64,
        items: Vec<(i64, i64, i64)>,
        all_local: bool,
    },
    Payment {
        d: i64,
        c_w: i64,
        c_d: i64,
        customer: Customer,
        amount: i64,
    },
    OrderStatus {
        d: i64,
        customer: Customer,
    },
    Delivery {
        carrier: i64,
    },
    StockLevel {
        threshold: i64,
    },
}

#[derive(Clone)]
enum Customer {
    Id(i64),
    Name(String),
}

impl Input {
    fn kind(&self) -> usize {
        match self {
            Input::NewOrder { .. } => 0,
            Input::Payment { .. } => 1,
            Input::OrderStatus { .. } => 2,
            Input::Delivery { .. } => 3,
            Input::StockLevel { .. } => 4,
        }
    }
}

pub(super) struct Term {
    w: i64,
    /// Stock-Level's district.
    d: i64,
    warehouses: i64,
    rand: Rand,
    deck: Vec<u8>,
    mix: Mix,
    /// NURand's C for c_id, c_last and i_id.
    c: [u64; 3],
    pending: Option<Input>,
    last: Option<usize>,
}

impl Term {
    pub(super) fn new(spec: &Spec, t: u32) -> Term {
        let mut rand = Rand::for_thread(0x5eed, t);
        let c = [
            rand.uniform(0, 1023),
            rand.uniform(0, 255),
            rand.uniform(0, 8191),
        ];
        Term {
            w: i64::from(t % spec.warehouses) + 1,
            d: i64::from(t / spec.warehouses) % DISTRICTS + 1,
            warehouses: i64::from(spec.warehouses),
            rand,
            deck: Vec::with_capacity(100),
            mix: Mix::default(),
            c,
            pending: None,
            last: None,
        }
    }

    fn nurand(&mut self, a: u64, x: u64, y: u64, c: u64) -> i64 {
        (((self.rand.uniform(0, a) | self.rand.uniform(x, y)) + c) % (y - x + 1) + x) as i64
    }

    fn deal(&mut self) -> usize {
        if self.deck.is_empty() {
            for (kind, &n) in self.mix.0.iter().enumerate() {
                self.deck
                    .extend(std::iter::repeat_n(kind as u8, n as usize));
            }
            for i in (1..self.deck.len()).rev() {
                let j = self.rand.uniform(0, i as u64) as usize;
                self.deck.swap(i, j);
            }
        }
        usize::from(self.deck.pop().expect("a full deck"))
    }

    fn customer(&mut self) -> Customer {
        if self.rand.uniform(1, 100) <= 60 {
            Customer::Name(last_name(self.nurand(255, 0, 999, self.c[1])))
        } else {
            Customer::Id(self.nurand(1023, 1, CUSTOMERS as u64, self.c[0]))
        }
    }

    fn other_warehouse(&mut self) -> i64 {
        if self.warehouses == 1 {
            return self.w;
        }
        let w = self.rand.uniform(1, self.warehouses as u64 - 1) as i64;
        if w >= self.w { w + 1 } else { w }
    }

    fn draw(&mut self) -> Input {
        let district = |r: &mut Rand| r.uniform(1, DISTRICTS as u64) as i64;
        match self.deal() {
            0 => {
                let d = district(&mut self.rand);
                let c = self.nurand(1023, 1, CUSTOMERS as u64, self.c[0]);
                let count = self.rand.uniform(5, 15);
                let rollback = self.rand.uniform(1, 100) == 1;
                let mut items: Vec<(i64, i64, i64)> = (0..count)
                    .map(|_| {
                        let i = self.nurand(8191, 1, ITEMS as u64, self.c[2]);
                        let supply = if self.rand.uniform(1, 100) == 1 {
                            self.other_warehouse()
                        } else {
                            self.w
                        };
                        (i, supply, self.rand.uniform(1, 10) as i64)
                    })
                    .collect();
                items.sort_unstable();
                if rollback {
                    items.last_mut().expect("5 or more").0 = ITEMS + 1;
                }
                let all_local = items.iter().all(|it| it.1 == self.w);
                Input::NewOrder {
                    d,
                    c,
                    items,
                    all_local,
                }
            }
            1 => {
                let d = district(&mut self.rand);
                let (c_w, c_d) = if self.rand.uniform(1, 100) <= 85 {
                    (self.w, d)
                } else {
                    (self.other_warehouse(), district(&mut self.rand))
                };
                Input::Payment {
                    d,
                    c_w,
                    c_d,
                    customer: self.customer(),
                    amount: self.rand.uniform(100, 500_000) as i64,
                }
            }
            2 => Input::OrderStatus {
                d: district(&mut self.rand),
                customer: self.customer(),
            },
            3 => Input::Delivery {
                carrier: self.rand.uniform(1, 10) as i64,
            },
            _ => Input::StockLevel {
                threshold: self.rand.uniform(10, 20) as i64,
            },
        }
    }

    /// Before the first transaction: a wait uniform over one mean cycle, then its keying time.
    pub(super) fn first_pause(&mut self) -> Duration {
        let think = self.rand.unit() * self.mix.mean_cycle_s();
        self.keyed(think)
    }

    /// After a transaction: its think time, then the next one's keying time.
    pub(super) fn pause(&mut self) -> Duration {
        let mean = THINK_S[self.last.unwrap_or(0)];
        let think = (-(1.0 - self.rand.unit()).ln() * mean).min(10.0 * mean);
        self.keyed(think)
    }

    fn keyed(&mut self, think: f64) -> Duration {
        let input = self.draw();
        let keying = KEYING_S[input.kind()];
        self.pending = Some(input);
        Duration::from_secs_f64(think + keying)
    }

    /// Runs the pending transaction until it commits (or rolls back as drawn); the retries.
    pub(super) fn transaction(&mut self, pg: &mut Pg, st: &Stmts<u16>) -> u64 {
        let input = self.pending.take().expect("drawn with its keying time");
        let mut retries = 0;
        while let Err(Failed) = self.run(pg, st, &input) {
            pg.simple("ROLLBACK");
            retries += 1;
            assert!(retries < 1000, "a transaction failed 1,000 times");
        }
        self.last = Some(input.kind());
        retries
    }

    fn run(&mut self, pg: &mut Pg, st: &Stmts<u16>, input: &Input) -> Result<(), Failed> {
        use P::{I, T};
        let w = self.w;
        pg.simple("BEGIN").ok()?;
        match input {
            Input::NewOrder {
                d,
                c,
                items,
                all_local,
            } => {
                let d = *d;
                pg.exec(st.w_tax, &[I(w)]).ok()?;
                pg.exec(st.d_lock, &[I(w), I(d)]).ok()?;
                let o = pg.int(1);
                pg.exec(st.d_next, &[I(o + 1), I(w), I(d)]).ok()?;
                pg.exec(st.c_discount, &[I(w), I(d), I(*c)]).ok()?;
                let n = items.len() as i64;
                let local = i64::from(*all_local);
                pg.exec(st.o_insert, &[I(o), I(d), I(w), I(*c), I(n), I(local)])
                    .ok()?;
                pg.exec(st.no_insert, &[I(o), I(d), I(w)]).ok()?;
                for (k, &(i, supply, qty)) in items.iter().enumerate() {
                    if pg.exec(st.i_select, &[I(i)]).ok()?.rows == 0 {
                        pg.simple("ROLLBACK").ok()?;
                        return Ok(());
                    }
                    let price = pg.cents(0);
                    pg.exec(st.s_lock[(d - 1) as usize], &[I(i), I(supply)])
                        .ok()?;
                    let s_qty = pg.int(0);
                    let dist = pg.text(2);
                    let left = if s_qty - qty >= 10 {
                        s_qty - qty
                    } else {
                        s_qty - qty + 91
                    };
                    let remote = i64::from(supply != w);
                    pg.exec(st.s_update, &[I(left), I(qty), I(remote), I(i), I(supply)])
                        .ok()?;
                    let amount = fixed(qty * price, 2);
                    let ol = [
                        I(o),
                        I(d),
                        I(w),
                        I(k as i64 + 1),
                        I(i),
                        I(supply),
                        I(qty),
                        T(&amount),
                        T(&dist),
                    ];
                    pg.exec(st.ol_insert, &ol).ok()?;
                }
            }
            Input::Payment {
                d,
                c_w,
                c_d,
                customer,
                amount,
            } => {
                let (d, c_w, c_d) = (*d, *c_w, *c_d);
                let amt = fixed(*amount, 2);
                pg.exec(st.w_ytd, &[T(&amt), I(w)]).ok()?;
                pg.exec(st.w_select, &[I(w)]).ok()?;
                let w_name = pg.text(0);
                pg.exec(st.d_ytd, &[T(&amt), I(w), I(d)]).ok()?;
                pg.exec(st.d_select, &[I(w), I(d)]).ok()?;
                let d_name = pg.text(0);
                let c = self.customer_id(pg, st, c_w, c_d, customer)?;
                pg.exec(st.c_lock, &[I(c_w), I(c_d), I(c)]).ok()?;
                if pg.text(10) == "BC" {
                    pg.exec(st.c_data, &[I(c_w), I(c_d), I(c)]).ok()?;
                    let mut data = format!("{c} {c_d} {c_w} {d} {w} {amt} | {}", pg.text(0));
                    data.truncate(500);
                    let p = [T(&amt), T(&amt), T(&data), I(c_w), I(c_d), I(c)];
                    pg.exec(st.c_pay_bc, &p).ok()?;
                } else {
                    let p = [T(&amt), T(&amt), I(c_w), I(c_d), I(c)];
                    pg.exec(st.c_pay, &p).ok()?;
                }
                let mut h = format!("{w_name}    {d_name}");
                h.truncate(24);
                let p = [I(c), I(c_d), I(c_w), I(d), I(w), T(&amt), T(&h)];
                pg.exec(st.h_insert, &p).ok()?;
            }
            Input::OrderStatus { d, customer } => {
                let d = *d;
                let c = self.customer_id(pg, st, w, d, customer)?;
                pg.exec(st.c_balance, &[I(w), I(d), I(c)]).ok()?;
                if pg.exec(st.o_last, &[I(w), I(d), I(c)]).ok()?.rows > 0 {
                    let o = pg.int(0);
                    pg.exec(st.ol_select, &[I(w), I(d), I(o)]).ok()?;
                }
            }
            Input::Delivery { carrier } => {
                for d in 1..=DISTRICTS {
                    if pg.exec(st.no_first, &[I(w), I(d)]).ok()?.rows == 0 {
                        continue;
                    }
                    let o = pg.int(0);
                    let key = [I(w), I(d), I(o)];
                    if pg.exec(st.no_delete, &key).ok()?.changed == 0 {
                        continue;
                    }
                    pg.exec(st.o_customer, &key).ok()?;
                    let c = pg.int(0);
                    pg.exec(st.o_carrier, &[I(*carrier), I(w), I(d), I(o)])
                        .ok()?;
                    pg.exec(st.ol_deliver, &key).ok()?;
                    pg.exec(st.ol_sum, &key).ok()?;
                    let sum = fixed(pg.cents(0), 2);
                    pg.exec(st.c_deliver, &[T(&sum), I(w), I(d), I(c)]).ok()?;
                }
            }
            Input::StockLevel { threshold } => {
                let d = self.d;
                pg.exec(st.d_next_o_id, &[I(w), I(d)]).ok()?;
                let next = pg.int(0);
                let p = [I(w), I(d), I(next), I(next - 20), I(w), I(*threshold)];
                pg.exec(st.stock_count, &p).ok()?;
            }
        }
        pg.simple("COMMIT").ok()?;
        Ok(())
    }

    fn customer_id(
        &mut self,
        pg: &mut Pg,
        st: &Stmts<u16>,
        w: i64,
        d: i64,
        customer: &Customer,
    ) -> Result<i64, Failed> {
        match customer {
            Customer::Id(c) => Ok(*c),
            Customer::Name(name) => {
                pg.all_firsts = true;
                let r = pg.exec(st.c_by_name, &[P::I(w), P::I(d), P::T(name)]);
                pg.all_firsts = false;
                r.ok()?;
                let ids = &pg.firsts;
                Ok(ids
                    .get(ids.len().div_ceil(2).max(1) - 1)
                    .copied()
                    .unwrap_or(1))
            }
        }
    }
}
