//! sysbench's `threads` test: each event takes one of `--thread-locks` mutexes (in turn over
//! all events) `--thread-yields` times, yielding the processor while it holds it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::engine::{self, Limits, Test};
use super::help::{Kind, Opt};
use super::{Values, fatal};
use crate::dropin::sysbench::output::SysbenchStyle;
use crate::error::{Error, Outcome};

pub const OPTIONS: &[Opt] = &[
    (
        "thread-yields",
        Kind::Num,
        "number of yields to do per request",
        Some("1000"),
    ),
    (
        "thread-locks",
        Kind::Num,
        "number of locks per thread",
        Some("8"),
    ),
];

struct Threads {
    yields: u64,
    locks: Vec<Mutex<()>>,
    next: AtomicU64,
}

impl Test for Threads {
    type Local = usize;
    fn local(&self, _thread: u32) -> usize {
        0
    }
    fn next(&self, lock: &mut usize) -> bool {
        *lock = (self.next.fetch_add(1, Ordering::Relaxed) % self.locks.len() as u64) as usize;
        true
    }
    fn execute(&self, lock: &mut usize) -> Result<(), String> {
        for _ in 0..self.yields {
            let held = self.locks[*lock].lock();
            std::thread::yield_now();
            drop(held);
        }
        Ok(())
    }
}

pub fn run(v: &Values, limits: &Limits, style: &SysbenchStyle) -> Result<Outcome, Error> {
    let (Some(yields), Some(locks)) = (v.int("thread-yields"), v.int("thread-locks")) else {
        return fatal("Invalid value for thread-yields or thread-locks");
    };
    if yields < 0 || !(1..=1 << 20).contains(&locks) {
        return fatal(&format!(
            "Invalid value for thread-yields ({yields}) or thread-locks ({locks})"
        ));
    }
    engine::header(limits, style, "");
    let test = Threads {
        yields: yields as u64,
        locks: (0..locks).map(|_| Mutex::new(())).collect(),
        next: AtomicU64::new(0),
    };
    let m = engine::run(&test, limits, style);
    engine::finish(&test, &m, style)
}
