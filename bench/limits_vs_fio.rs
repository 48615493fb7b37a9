//! bench/limits_vs_fio: the disk and log probes of `dbsweep limits` against fio, the reference
//! tool, on the same file system in one run: for each probe, fio and dbsweep alternately with
//! the same block size, queue depth, direct flag and file (each on a file it laid out), the
//! requests per second of each and their ratio, and the probing CPU per request of each (fio's
//! job's user + system time over its requests; dbsweep's probing thread's) and their ratio.
//! Target: CPU per request at most 1.2x fio's (the probe must never be what limits the figure).
//!
//!     cargo bench --bench limits_vs_fio -- [--dir DIR] [--seconds 3] [--rounds 2] [--size-mb 1024]

use std::path::{Path, PathBuf};

use clap::Parser;

mod fio;

#[derive(Parser)]
struct Args {
    /// The directory on the file system to probe [default: the system's temporary directory]
    #[arg(long)]
    dir: Option<PathBuf>,
    #[arg(long, default_value_t = 3)]
    seconds: u32,
    #[arg(long, default_value_t = 2)]
    rounds: u32,
    #[arg(long, default_value_t = 1024)]
    size_mb: u32,
    /// cargo passes `--bench` to every bench target
    #[arg(long, hide = true)]
    bench: bool,
}

struct Case {
    probe: &'static str,
    depth: u32,
    fio: &'static [&'static str],
    log: bool,
}

const CASES: [Case; 7] = [
    Case {
        probe: "random-read",
        depth: 1,
        fio: &["--rw=randread", "--bs=16k", "--iodepth=1"],
        log: false,
    },
    Case {
        probe: "random-read",
        depth: 16,
        fio: &["--rw=randread", "--bs=16k", "--iodepth=16"],
        log: false,
    },
    Case {
        probe: "random-read",
        depth: 64,
        fio: &["--rw=randread", "--bs=16k", "--iodepth=64"],
        log: false,
    },
    Case {
        probe: "random-write",
        depth: 16,
        fio: &["--rw=randwrite", "--bs=16k", "--iodepth=16"],
        log: false,
    },
    Case {
        probe: "sequential-read",
        depth: 4,
        fio: &["--rw=read", "--bs=1M", "--iodepth=4"],
        log: false,
    },
    Case {
        probe: "sequential-write",
        depth: 4,
        fio: &["--rw=write", "--bs=1M", "--iodepth=4"],
        log: false,
    },
    Case {
        probe: "fdatasync",
        depth: 1,
        fio: &["--rw=write", "--bs=4k", "--ioengine=psync", "--fdatasync=1"],
        log: true,
    },
];

/// fio's requests/s and CPU microseconds per request.
fn fio(file: &Path, size_mb: u32, seconds: u32, c: &Case) -> (f64, f64) {
    let size = format!("--size={}M", if c.log { 64 } else { size_mb });
    let mut args: Vec<&str> = c.fio.to_vec();
    args.push(&size);
    if !c.log {
        args.extend(["--direct=1", "--ioengine=io_uring"]);
    }
    let f = fio::run(file, seconds, &args);
    (f.iops, f.cpu_us_per_io)
}

/// dbsweep's requests/s and CPU microseconds per request.
fn ours(dir: &Path, size_mb: u32, seconds: u32, c: &Case) -> (f64, f64) {
    let figs = fio::dbsweep_limits(
        dir,
        &[
            "--only".into(),
            c.probe.into(),
            "--writers=1".into(),
            format!("--size={size_mb}M"),
            format!("--seconds={seconds}"),
            format!("--depths={}", c.depth),
        ],
    );
    let f = &figs[0];
    (
        f["iops"].as_f64().unwrap(),
        f["cpu_us_per_io"].as_f64().unwrap(),
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let a = Args::parse();
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::tempdir_in(&base).expect("a scratch directory");
    let data = dir.path().join("fio.data");
    let log = dir.path().join("fio.log");
    fio::lay_out(&data, a.size_mb);
    fio::lay_out(&log, 64);
    println!(
        "{:<18} {:>5} {:>10} {:>10} {:>7} {:>9} {:>9} {:>7}",
        "probe", "depth", "fio /s", "db /s", "db/fio", "fio us", "db us", "cpu"
    );
    let mut worst: f64 = 0.0;
    for c in &CASES {
        let (mut rate, mut cpu) = (Vec::new(), Vec::new());
        let (mut fr, mut dr, mut fc, mut dc) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for round in 0..a.rounds {
            let file = if c.log { &log } else { &data };
            let mut pair = [None, None];
            for who in [round % 2, 1 - round % 2] {
                pair[who as usize] = Some(if who == 0 {
                    fio(file, a.size_mb, a.seconds, c)
                } else {
                    ours(dir.path(), a.size_mb, a.seconds, c)
                });
            }
            let (f, d) = (pair[0].unwrap(), pair[1].unwrap());
            rate.push(d.0 / f.0);
            cpu.push(d.1 / f.1);
            fr.push(f.0);
            dr.push(d.0);
            fc.push(f.1);
            dc.push(d.1);
        }
        let cpu_ratio = median(cpu);
        worst = worst.max(cpu_ratio);
        println!(
            "{:<18} {:>5} {:>10.0} {:>10.0} {:>7.2} {:>9.2} {:>9.2} {:>7.2}",
            c.probe,
            c.depth,
            median(fr),
            median(dr),
            median(rate),
            median(fc),
            median(dc),
            cpu_ratio
        );
    }
    println!(
        "highest CPU per request over fio's: {worst:.2} (target <= 1.20: {})",
        if worst <= 1.2 { "met" } else { "NOT met" }
    );
}
