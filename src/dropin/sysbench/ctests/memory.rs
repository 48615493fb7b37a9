//! sysbench's `memory` test: each event reads, writes or walks one block of `--memory-block-size`
//! bytes, in order or at random words, in one buffer all threads share (`global`) or one per
//! thread (`local`), until each thread has moved its share of `--memory-total-size`.

use std::sync::atomic::{AtomicU64, Ordering};

use rand::{Rng, rngs::SmallRng};

use super::engine::{self, Limits, Test};
use super::help::{Kind, Opt};
use super::{Values, fatal};
use crate::dropin::sysbench::output::SysbenchStyle;
use crate::error::{Error, Outcome};
use crate::results::figures::Interval;

pub const OPTIONS: &[Opt] = &[
    (
        "memory-block-size",
        Kind::Size,
        "size of memory block for test",
        Some("1K"),
    ),
    (
        "memory-total-size",
        Kind::Size,
        "total size of data to transfer",
        Some("100G"),
    ),
    (
        "memory-scope",
        Kind::Str,
        "memory access scope {global,local}",
        Some("global"),
    ),
    (
        "memory-hugetlb",
        Kind::Bool,
        "allocate memory from HugeTLB pool",
        Some("off"),
    ),
    (
        "memory-oper",
        Kind::Str,
        "type of memory operations {read, write, none}",
        Some("write"),
    ),
    (
        "memory-access-mode",
        Kind::Str,
        "memory access mode {seq,rnd}",
        Some("seq"),
    ),
];

#[derive(Clone, Copy, PartialEq)]
enum Oper {
    Read,
    Write,
    None,
}

/// Words of a block: atomics loaded and stored relaxed, so that threads sharing the global
/// block touch memory as sysbench's do, without a data race.
type Block = Vec<AtomicU64>;

struct Memory {
    blocks: Vec<Block>,
    global: bool,
    oper: Oper,
    random: bool,
    /// Events per thread (0: until the time limit).
    per_thread: u64,
    block_bytes: u64,
    seed: u64,
}

struct Local {
    block: usize,
    left: u64,
    rng: SmallRng,
}

impl Test for Memory {
    fn report(&self, m: &engine::Measured) -> String {
        let mut s = format!(
            "Total operations: {} ({:8.2} per second)\n\n",
            m.events,
            m.per_second(m.events as f64)
        );
        if self.oper != Oper::None {
            let mb = m.events as f64 * self.block_bytes as f64 / MIB;
            s += &format!(
                "{mb:4.2} MiB transferred ({:4.2} MiB/sec)\n\n",
                m.per_second(mb)
            );
        }
        s
    }
    type Local = Local;
    fn local(&self, thread: u32) -> Local {
        let rng = engine::thread_rng(self.seed, thread);
        Local {
            block: if self.global { 0 } else { thread as usize },
            left: self.per_thread,
            rng,
        }
    }
    fn next(&self, l: &mut Local) -> bool {
        if self.per_thread == 0 {
            return true;
        }
        if l.left == 0 {
            return false;
        }
        l.left -= 1;
        true
    }
    fn execute(&self, l: &mut Local) -> Result<(), String> {
        let block = &self.blocks[l.block];
        let words = block.len();
        for i in 0..words {
            let at = if self.random {
                l.rng.random_range(0..words)
            } else {
                i
            };
            match self.oper {
                Oper::Read => {
                    std::hint::black_box(block[at].load(Ordering::Relaxed));
                }
                Oper::Write => block[at].store((words - i) as u64, Ordering::Relaxed),
                Oper::None => {
                    std::hint::black_box(at);
                }
            }
        }
        Ok(())
    }
    /// sysbench's memory test's own line: the interval's rate in MiB per second.
    fn interval_line(&self, iv: &Interval, _percentile: u32) -> String {
        format!(
            "[ {}s ] {:4.2} MiB/sec",
            iv.t.round() as u64,
            iv.events as f64 * self.block_bytes as f64 / MIB / iv.seconds.max(1e-9)
        )
    }
}

const MIB: f64 = 1024.0 * 1024.0;

pub fn run(v: &Values, limits: &Limits, style: &SysbenchStyle) -> Result<Outcome, Error> {
    let block_bytes = match v.size("memory-block-size") {
        Some(b) if b >= 8 && b.is_power_of_two() && b <= 1 << 30 => b,
        _ => {
            return fatal(&format!(
                "Invalid value for memory-block-size: {}",
                v.text("memory-block-size")
            ));
        }
    };
    let Some(total) = v.size("memory-total-size") else {
        return fatal(&format!(
            "Invalid value for memory-total-size: {}",
            v.text("memory-total-size")
        ));
    };
    let global = match v.text("memory-scope") {
        "global" => true,
        "local" => false,
        s => return fatal(&format!("Invalid value for memory-scope: {s}")),
    };
    let oper = match v.text("memory-oper") {
        "read" => Oper::Read,
        "write" => Oper::Write,
        "none" => Oper::None,
        s => return fatal(&format!("Invalid value for memory-oper: {s}")),
    };
    let random = match v.text("memory-access-mode") {
        "seq" => false,
        "rnd" => true,
        s => return fatal(&format!("Invalid value for memory-access-mode: {s}")),
    };
    if v.flag("memory-hugetlb") {
        return fatal(
            "--memory-hugetlb: dbsweep's memory test allocates ordinary pages only (run sysbench itself for HugeTLB)",
        );
    }
    let threads = limits.threads.max(1);
    let words = (block_bytes / 8) as usize;
    let blocks = (0..if global { 1 } else { threads })
        .map(|_| (0..words).map(|_| AtomicU64::new(0)).collect())
        .collect();
    let test = Memory {
        blocks,
        global,
        oper,
        random,
        per_thread: total / block_bytes / u64::from(threads),
        block_bytes,
        seed: limits.rand_seed,
    };
    // The test's own bound on events: --events does not apply.
    let limits = Limits {
        events: 0,
        ..limits.clone()
    };
    let name = |o: Oper| match o {
        Oper::Read => "read",
        Oper::Write => "write",
        Oper::None => "none",
    };
    engine::header(
        &limits,
        style,
        &format!(
            "Running memory speed test with the following options:\n  block size: {}KiB\n  total size: {}MiB\n  operation: {}\n  scope: {}\n\n",
            block_bytes / 1024,
            total / 1024 / 1024,
            name(oper),
            if global { "global" } else { "local" }
        ),
    );
    let m = engine::run(&test, &limits, style);
    engine::finish(&test, &m, style)
}
