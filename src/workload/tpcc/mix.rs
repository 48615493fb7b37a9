//! The TPC-C mix (clauses 2.4 to 2.8, 5.2): the transaction types, the deck that deals them,
//! the keying and think times, and the workload's own settings.

use crate::workload::options::WorkloadOptions;
use crate::workload::rand::Rand;
/// The transaction types, in the order the runner and the results list them.
pub const KINDS: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];
pub(super) const NEW_ORDER: usize = 0;
pub(super) const PAYMENT: usize = 1;
pub(super) const ORDER_STATUS: usize = 2;
pub(super) const DELIVERY: usize = 3;
pub(super) const STOCK_LEVEL: usize = 4;

/// Cards of each type in a deck of 100: Payment 43%, Order-Status, Delivery and Stock-Level 4%
/// each (the specification's minimums), New-Order the rest.
pub const DECK: [u32; 5] = [45, 43, 4, 4, 4];
/// Keying and mean think times in seconds (clause 5.2.5.7), by type.
pub(super) const KEYING_S: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
pub(super) const THINK_S: [f64; 5] = [12.0, 12.0, 10.0, 5.0, 5.0];
/// The 90th-percentile response-time limits in seconds (clause 5.2.5.3), by type.
pub const LIMIT_P90_S: [f64; 5] = [5.0, 5.0, 5.0, 5.0, 20.0];

/// The run-time constants C of NURand for customer ids, last names and item ids.
#[derive(Clone, Copy, Debug)]
pub(super) struct NurandC {
    pub(super) c_id: u64,
    pub(super) c_last: u64,
    pub(super) i_id: u64,
}

pub struct Tpcc {
    pub(super) warehouses: u32,
    pub(super) wait: bool,
    pub(super) think_scale: f64,
    pub(super) threads: u32,
    pub(super) seed: u64,
    pub(super) c: NurandC,
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

/// A terminal's mean cycle under the specification's pacing: keying and mean think time over
/// the least mix (see [`NOPM_CEILING_PER_WAREHOUSE`]).
pub(super) const MEAN_CYCLE_S: f64 = 20.99;
