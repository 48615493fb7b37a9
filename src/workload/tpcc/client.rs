//! A TPC-C terminal: its home warehouse, its deck, the inputs it draws and the transactions it
//! runs as the runner's events.

use std::time::Duration;

use super::input::{Customer, Input};
use super::load::{CUSTOMERS, DISTRICTS, ITEMS, last_name};
use super::mix::{DELIVERY, KEYING_S, NEW_ORDER, NurandC, ORDER_STATUS, PAYMENT, THINK_S, Tpcc};
use super::stmts::Stmts;
use crate::db::QueryCounts;
use crate::db::{Conn, DbError};
use crate::workload::rand::Rand;
use crate::workload::traits::Client;
/// One terminal: its home warehouse and district, its deck, the transaction in hand.
pub(super) struct TpccClient {
    pub(super) st: Stmts,
    pub(super) w_id: i64,
    /// Stock-Level's district, fixed per terminal (clause 2.8.1.1).
    pub(super) d_id: i64,
    pub(super) warehouses: i64,
    pub(super) wait: bool,
    pub(super) think_scale: f64,
    pub(super) c: NurandC,
    pub(super) mix: super::deck::Mix,
    pub(super) deck: Vec<u8>,
    pub(super) pending: Option<Input>,
    /// The type of the last transaction run and whether it rolled back as expected.
    pub(super) last: Option<(usize, bool)>,
    /// Reused buffers for the customer ids of a last-name lookup and for texts.
    pub(super) ids: Vec<i64>,
    pub(super) text: String,
}

impl TpccClient {
    pub(super) fn new(w: &Tpcc, conn: &mut dyn Conn, thread: u32) -> Result<TpccClient, DbError> {
        let dialect = conn.dialect();
        Ok(TpccClient {
            st: Stmts::prepare(conn, dialect)?,
            w_id: i64::from(thread % w.warehouses) + 1,
            d_id: i64::from(thread / w.warehouses) % DISTRICTS + 1,
            warehouses: i64::from(w.warehouses),
            wait: w.wait,
            think_scale: w.think_scale,
            c: w.c,
            mix: w.mix,
            deck: Vec::with_capacity(100),
            pending: None,
            last: None,
            ids: Vec::new(),
            text: String::new(),
        })
    }

    /// The next card of the deck, dealing a freshly shuffled deck when it is used up.
    pub(super) fn deal(&mut self, rand: &mut Rand) -> usize {
        if self.deck.is_empty() {
            for (kind, &n) in self.mix.0.iter().enumerate() {
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

    pub(super) fn nurand(rand: &mut Rand, a: u64, x: u64, y: u64, c: u64) -> i64 {
        (((rand.uniform(0, a) | rand.uniform(x, y)) + c) % (y - x + 1) + x) as i64
    }

    pub(super) fn customer(&self, rand: &mut Rand) -> Customer {
        if rand.uniform(1, 100) <= 60 {
            Customer::LastName(last_name(Self::nurand(rand, 255, 0, 999, self.c.c_last)))
        } else {
            Customer::Id(Self::nurand(rand, 1023, 1, CUSTOMERS as u64, self.c.c_id))
        }
    }

    pub(super) fn other_warehouse(&self, rand: &mut Rand) -> i64 {
        if self.warehouses == 1 {
            return self.w_id;
        }
        let w = rand.uniform(1, self.warehouses as u64 - 1) as i64;
        if w >= self.w_id { w + 1 } else { w }
    }

    /// Draws the next transaction and its input (clauses 2.4.1 to 2.8.1).
    pub(super) fn draw(&mut self, rand: &mut Rand) -> Input {
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
            None => rand.unit() * self.mix.mean_cycle_s(),
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

#[cfg(test)]
mod tests {
    use super::super::mix::{DECK, Mix};
    use super::*;

    fn client(warehouses: u32) -> TpccClient {
        client_with(warehouses, Mix::default())
    }

    fn client_with(warehouses: u32, mix: Mix) -> TpccClient {
        let w = Tpcc {
            warehouses,
            mix,
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
        let mut c = client_with(1, Mix([50, 50, 0, 0, 0]));
        let mut counts = [0u32; 5];
        for _ in 0..100 {
            counts[c.deal(&mut rand)] += 1;
        }
        assert_eq!(counts, [50, 50, 0, 0, 0]);
    }

    #[test]
    fn a_mix_is_read_checked_and_paced() {
        assert_eq!(Mix::parse("50,50,0,0,0"), Ok(Mix([50, 50, 0, 0, 0])));
        assert_eq!(
            Mix::parse("new_order=60, payment=40"),
            Ok(Mix([60, 40, 0, 0, 0]))
        );
        assert!(
            Mix::parse("50,50")
                .unwrap_err()
                .contains("five percentages")
        );
        assert!(
            Mix::parse("50,40,0,0,0")
                .unwrap_err()
                .contains("adds up to 90%")
        );
        assert_eq!(
            Mix::parse("new_order=50,new_order=50").unwrap_err(),
            "'new_order=50,new_order=50' gives new_order twice"
        );
        assert!(
            Mix::parse("neworder=100")
                .unwrap_err()
                .contains("not a TPC-C transaction")
        );
        assert!(
            Mix::parse("a,b,c,d,e")
                .unwrap_err()
                .contains("whole percentage")
        );
        assert!(Mix::default().below_minimums().is_empty());
        assert_eq!(
            Mix([50, 50, 0, 0, 0]).below_minimums(),
            [
                "order_status 0% < 4%",
                "delivery 0% < 4%",
                "stock_level 0% < 4%"
            ]
        );
        // The specification's least mix: 20.99 s a cycle, 12.86 New-Orders a minute for ten
        // terminals.
        assert!((Mix::default().mean_cycle_s() - 20.99).abs() < 1e-9);
        let formula = 10.0 * 60.0 / Mix::default().mean_cycle_s() * 0.45;
        assert!((formula - super::super::run::NOPM_CEILING_PER_WAREHOUSE).abs() < 0.005);
        // Half New-Orders, half Payments: a cycle of 22.5 s, 13.33 New-Orders a minute.
        let half = Mix([50, 50, 0, 0, 0]);
        assert!((half.mean_cycle_s() - 22.5).abs() < 1e-9);
        assert!((half.nopm_ceiling_per_warehouse() - 600.0 / 22.5 * 0.5).abs() < 1e-9);
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
