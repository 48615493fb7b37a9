//! The TPC-C mix (clauses 2.4 to 2.8, 5.2): the transaction types, the deck that deals them,
//! the keying and think times, and the workload's own settings.

use crate::workload::options::WorkloadOptions;
use crate::workload::rand::Rand;

pub use super::deck::{
    DECK, DELIVERY, KEYING_S, KINDS, LIMIT_P90_S, MINIMUM, Mix, NEW_ORDER, ORDER_STATUS, PAYMENT,
    STOCK_LEVEL, THINK_S,
};

/// The run-time constants C of NURand for customer ids, last names and item ids.
#[derive(Clone, Copy, Debug)]
pub(super) struct NurandC {
    pub(super) c_id: u64,
    pub(super) c_last: u64,
    pub(super) i_id: u64,
}

pub struct Tpcc {
    pub(super) warehouses: u32,
    pub(super) mix: Mix,
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
            warehouses: o.families.tpcc.warehouses.max(1),
            mix: o.families.tpcc.tpcc_mix,
            wait: o.families.tpcc.wait,
            think_scale: o.families.tpcc.think_scale,
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
