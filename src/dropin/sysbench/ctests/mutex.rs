//! sysbench's `mutex` test: one event per thread, in which the thread takes a random one of
//! `--mutex-num` mutexes `--mutex-locks` times, spinning `--mutex-loops` empty loops before
//! each.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::{Rng, rngs::SmallRng};

use super::engine::{self, Limits, Test};
use super::help::{Kind, Opt};
use super::{Values, fatal};
use crate::dropin::sysbench::output::SysbenchStyle;
use crate::error::{Error, Outcome};

pub const OPTIONS: &[Opt] = &[
    (
        "mutex-num",
        Kind::Num,
        "total size of mutex array",
        Some("4096"),
    ),
    (
        "mutex-locks",
        Kind::Num,
        "number of mutex locks to do per thread",
        Some("50000"),
    ),
    (
        "mutex-loops",
        Kind::Num,
        "number of empty loops to do outside mutex lock",
        Some("10000"),
    ),
];

struct MutexTest {
    mutexes: Vec<Mutex<u64>>,
    locks: u64,
    loops: u64,
    seed: u64,
    shared: AtomicU64,
}

/// A thread's generator and whether it has had its one event.
struct Local {
    rng: SmallRng,
    done: bool,
}

impl Test for MutexTest {
    type Local = Local;
    fn local(&self, thread: u32) -> Local {
        let rng = engine::thread_rng(self.seed, thread);
        Local { rng, done: false }
    }
    fn next(&self, l: &mut Local) -> bool {
        !std::mem::replace(&mut l.done, true)
    }
    fn execute(&self, l: &mut Local) -> Result<(), String> {
        for _ in 0..self.locks.max(1) {
            let i = l.rng.random_range(0..self.mutexes.len());
            for k in 0..self.loops {
                std::hint::black_box(k);
            }
            if let Ok(mut v) = self.mutexes[i].lock() {
                *v += 1;
            }
        }
        self.shared.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

pub fn run(v: &Values, limits: &Limits, style: &SysbenchStyle) -> Result<Outcome, Error> {
    let (Some(num), Some(locks), Some(loops)) = (
        v.int("mutex-num"),
        v.int("mutex-locks"),
        v.int("mutex-loops"),
    ) else {
        return fatal("Invalid value for mutex-num, mutex-locks or mutex-loops");
    };
    if !(1..=1 << 24).contains(&num) || locks < 0 || loops < 0 {
        return fatal(&format!(
            "Invalid value for mutex-num ({num}), mutex-locks ({locks}) or mutex-loops ({loops})"
        ));
    }
    engine::header(limits, style, "");
    let test = MutexTest {
        mutexes: (0..num).map(|_| Mutex::new(0)).collect(),
        locks: locks as u64,
        loops: loops as u64,
        seed: limits.rand_seed,
        shared: AtomicU64::new(0),
    };
    let m = engine::run(&test, limits, style);
    engine::finish(&test, &m, style)
}
