//! bench/sqlite_limit: how close dbsweep's runner gets to the fastest possible client.
//!
//! In one process, run after run (A B C D, D C B A, ...): a minimal reference loop (rusqlite,
//! one prepared `SELECT c FROM sbtest1 WHERE id=?` on a 1M-row table, on the process's only
//! thread), the same loop on a second thread sharing the process's file table (what a client's
//! threads cost a file-based database's every read and lock: dbsweep's lone client does not
//! pay it), the same loop on a second thread with a file table of its own timing each query
//! and recording it in a histogram (the most any client that reports latencies from a worker
//! thread can do here), and `dbsweep run oltp_point_select --threads 1` on the same table.
//! Prints each round's QPS, the median ratios of dbsweep to the three loops (target: at least
//! 0.95 to the first), and the measuring thread's ratio to the first: the bound any such client
//! meets, against which the target reads. Then the runner's own cost on the
//! mock target (events/s per thread; target: at least 1,000,000) and whether memory grows with
//! run length.
//!
//!     cargo bench --bench sqlite_limit -- [--rounds N] [--seconds S] [--db PATH] [--sqlite-only] [--compare-shared-table]

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::Parser;
use dbsweep::cli::{Cli, Command};
use dbsweep::plan::RunPlan;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const ROWS: u64 = 1_000_000;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    #[arg(long, default_value = "/tmp/dbsweep-bench/limit.db")]
    db: String,
    /// More options for dbsweep's runs on SQLite (what a feature costs: `--extra=--statement-times=off`)
    #[arg(long, allow_hyphen_values = true)]
    extra: Vec<String>,
    /// Only the SQLite rounds, not the runner's own figures on the mock target
    #[arg(long)]
    sqlite_only: bool,
    /// Also run dbsweep with its client on the process's shared file table, in each round: the
    /// lone client's own table against it, paired round by round
    #[arg(long)]
    compare_shared_table: bool,
    /// cargo bench passes --bench
    #[arg(long, hide = true)]
    bench: bool,
}

fn plan(args: &[&str]) -> RunPlan {
    let cli = Cli::try_parse_from(std::iter::once("dbsweep").chain(args.iter().copied()))
        .expect("bench arguments");
    match cli.command {
        Command::Run(o) | Command::Prepare(o) => RunPlan::from_opts(&o).expect("valid plan"),
        _ => unreachable!(),
    }
}

/// Runs dbsweep's runner in this process; returns (events/s, queries/s).
fn dbsweep_run(url: &str, threads: u32, seconds: f64) -> (f64, f64) {
    dbsweep_run_with(url, "oltp_point_select", threads, seconds, &[])
}

/// As [`dbsweep_run`], of `workload` with `extra` options.
fn dbsweep_run_with(
    url: &str,
    workload: &str,
    threads: u32,
    seconds: f64,
    extra: &[&str],
) -> (f64, f64) {
    let (t, s) = (threads.to_string(), seconds.to_string());
    let mut args = vec![
        "run",
        workload,
        "--target",
        url,
        "--table-size",
        "1000000",
        "--threads",
        &t,
        "--time",
        &s,
        "--report-interval",
        "0",
    ];
    args.extend_from_slice(extra);
    let p = plan(&args);
    let target = dbsweep::db::open(url, Default::default()).expect("target");
    let workload = dbsweep::workload::build(&p.workload, &p.workload_opts).expect("workload");
    let stop = AtomicBool::new(false);
    let out = dbsweep::runner::run(
        target.as_ref(),
        workload.as_ref(),
        &p.runner,
        &stop,
        &mut |_| {},
    )
    .expect("run");
    let c = out.total.counters;
    (
        c.events as f64 / out.seconds,
        c.queries.total() as f64 / out.seconds,
    )
}

/// The reference: the least a client can do per query with rusqlite.
fn reference_run(path: &str, seconds: f64) -> f64 {
    loop_run::<false>(path, seconds)
}

/// The reference loop measuring as any client that reports latencies must, on a worker thread
/// as such a client runs its clients: the clock read before and after each query (dbsweep's
/// clock) and the latency recorded in a histogram of dbsweep's bounds. The thread has a file
/// table of its own, as dbsweep's lone client has (its connection is the process's only one).
/// No client of that kind does less per query; what is left between dbsweep and this loop is
/// the runner's own structure.
fn measuring_threaded_run(path: &str, seconds: f64) -> f64 {
    let path = path.to_string();
    std::thread::spawn(move || {
        // SAFETY: unshare(2) copies this thread's descriptor table; the loop's connection,
        // opened and closed on it, is the process's only SQLite connection meanwhile.
        unsafe { libc::unshare(libc::CLONE_FILES) };
        loop_run::<true>(&path, seconds)
    })
    .join()
    .expect("measuring thread")
}

/// The loop of both references (a constant parameter: the bare one carries no test for it).
fn loop_run<const MEASURE: bool>(path: &str, seconds: f64) -> f64 {
    let conn = rusqlite::Connection::open(path).expect("open");
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .expect("wal");
    let mut st = conn
        .prepare("SELECT c FROM sbtest1 WHERE id=?")
        .expect("prepare");
    let mut rng = SmallRng::seed_from_u64(1);
    let mut hist = dbsweep::metrics::new_histogram();
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let mut n = 0u64;
    while Instant::now() < end {
        for _ in 0..64 {
            let id = rng.random_range(1..=ROWS as i64);
            let began = MEASURE.then(dbsweep::clock::now);
            let mut rows = st.query([id]).expect("query");
            while let Some(row) = rows.next().expect("row") {
                black_box(row.get_ref(0).expect("c"));
            }
            drop(rows);
            if let Some(began) = began {
                hist.saturating_record(dbsweep::clock::now().nanos_since(began));
            }
        }
        n += 64;
    }
    black_box(hist.len());
    n as f64 / start.elapsed().as_secs_f64()
}

/// The reference loop on a thread of its own while the calling thread waits for it: a process
/// of two threads, as every client with a worker thread (dbsweep, sysbench) is. Once a process
/// shares its file table between threads, the kernel takes and drops a reference to the file
/// on every read and lock call (fdget/fput), which a single-threaded process skips: on this
/// path of four system calls per query that is a few percent, measured here in the same run.
fn threaded_reference_run(path: &str, seconds: f64) -> f64 {
    let path = path.to_string();
    std::thread::spawn(move || reference_run(&path, seconds))
        .join()
        .expect("reference thread")
}

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The middle half of the rounds' ratios (first and third quartile, by rank): how far one
/// round's ratio moves in this sitting, against which a median's distance to the target reads.
fn middle_half(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    (v[n / 4], v[(3 * n / 4).min(n - 1)])
}

fn ensure_table(path: &str, url: &str) {
    let ok = rusqlite::Connection::open(path)
        .and_then(|c| c.query_row("SELECT count(*) FROM sbtest1", [], |r| r.get::<_, i64>(0)))
        .is_ok_and(|n| n as u64 == ROWS);
    if !ok {
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).expect("bench dir");
        eprintln!("preparing 1M rows in {path} ...");
        let p = plan(&[
            "prepare",
            "oltp_point_select",
            "--target",
            url,
            "--table-size",
            "1000000",
            "--force",
        ]);
        let target = dbsweep::db::open(
            url,
            dbsweep::db::OpenOptions {
                create: true,
                ..Default::default()
            },
        )
        .expect("target");
        let workload = dbsweep::workload::build(&p.workload, &p.workload_opts).expect("workload");
        let stop = AtomicBool::new(false);
        let load = dbsweep::workload::tables::prepare(
            target.as_ref(),
            &workload.tables(),
            &p.workload_opts,
            true,
            &stop,
        )
        .expect("prepare");
        eprintln!("loaded {} rows at {:.0} rows/s", load.rows, load.rows_per_s);
    }
}

fn main() {
    let args = Args::parse();
    // dbsweep's runs here are as in its own process: every SQLite connection open while they
    // go is dbsweep's (the reference loops close theirs before each run).
    dbsweep::db::sqlite::allow_own_file_table(true);
    let url = format!("sqlite://{}", args.db);
    let extra: Vec<&str> = args.extra.iter().map(String::as_str).collect();
    ensure_table(&args.db, &url);
    // Warm the OS page cache and SQLite's file so that the first pair is not penalised.
    reference_run(&args.db, 1.0);

    println!(
        "== SQLite point select, 1 thread, {} s per run, 1M rows ==",
        args.seconds
    );
    println!(
        "{:>5} {:>14} {:>14} {:>14} {:>14} {:>8} {:>10} {:>10}",
        "round",
        "reference qps",
        "ref+thread qps",
        "meas+thr qps",
        "dbsweep qps",
        "ratio",
        "ratio/thr",
        "ratio/meas"
    );
    let (mut ratios, mut threaded_ratios, mut measuring_ratios, mut bounds) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut own_over_shared = Vec::new();
    for round in 1..=args.rounds {
        // A B C D, then D C B A: none always runs first (page cache, CPU frequency).
        let mut order: Vec<usize> = vec![0, 1, 2, 3];
        if args.compare_shared_table {
            order.push(4);
        }
        if round % 2 == 0 {
            order.reverse();
        }
        let mut qps = [0.0f64; 5];
        for i in order {
            qps[i] = match i {
                0 => reference_run(&args.db, args.seconds),
                1 => threaded_reference_run(&args.db, args.seconds),
                2 => measuring_threaded_run(&args.db, args.seconds),
                3 => dbsweep_run_with(&url, "oltp_point_select", 1, args.seconds, &extra).1,
                _ => {
                    dbsweep::db::sqlite::allow_own_file_table(false);
                    let q = dbsweep_run_with(&url, "oltp_point_select", 1, args.seconds, &extra).1;
                    dbsweep::db::sqlite::allow_own_file_table(true);
                    q
                }
            };
        }
        let [reference, threaded, measuring, ours, shared] = qps;
        if args.compare_shared_table {
            own_over_shared.push(ours / shared);
            println!(
                "      dbsweep on the shared file table {shared:.0} qps: own/shared {:.3}",
                ours / shared
            );
        }
        ratios.push(ours / reference);
        threaded_ratios.push(ours / threaded);
        measuring_ratios.push(ours / measuring);
        bounds.push(measuring / reference);
        println!(
            "{round:>5} {reference:>14.0} {threaded:>14.0} {measuring:>14.0} {ours:>14.0} {:>8.3} {:>10.3} {:>10.3}",
            ours / reference,
            ours / threaded,
            ours / measuring
        );
    }
    let ratio = median(&mut ratios);
    let (low, high) = middle_half(&mut ratios);
    let threaded = median(&mut threaded_ratios);
    let measuring = median(&mut measuring_ratios);
    let bound = median(&mut bounds);
    let spread = if (low..=high).contains(&0.95) {
        ", the target within the rounds' spread"
    } else {
        ""
    };
    println!(
        "median ratio dbsweep/reference: {ratio:.3} (target >= 0.95): {} (middle half of the rounds {low:.3}-{high:.3}{spread})",
        if ratio >= 0.95 { "PASS" } else { "FAIL" }
    );
    println!(
        "median ratio dbsweep/reference on a thread: {threaded:.3} (the same loop in a process of two threads \
         sharing one file table: the kernel's reference on every read and lock, which dbsweep's lone client \
         avoids with a table of its own)"
    );
    println!(
        "median ratio dbsweep/measuring loop on a thread: {measuring:.3} (the loop timing each query with two \
         clock readings and recording it in a histogram on a worker thread with a file table of its own, as \
         every client that reports latencies must: what is left is the runner's own structure)"
    );
    println!(
        "median ratio measuring loop on a thread/reference: {bound:.3} (the most a client that times each query \
         on a worker thread reaches here{})",
        if bound < 0.95 {
            ": the target lies above it"
        } else {
            ""
        }
    );
    if !own_over_shared.is_empty() {
        let (low, high) = middle_half(&mut own_over_shared);
        println!(
            "median ratio dbsweep with its client's own file table / on the shared one: {:.3} (middle half {low:.3}-{high:.3})",
            median(&mut own_over_shared)
        );
    }
    if args.sqlite_only {
        return;
    }

    println!("\n== runner overhead on the mock target (no IO, zero service time) ==");
    for threads in [1u32, 2] {
        let mut per_thread = Vec::new();
        for _ in 0..3 {
            let (eps, _) = dbsweep_run("mock://", threads, args.seconds.min(3.0));
            per_thread.push(eps / f64::from(threads));
        }
        let eps = median(&mut per_thread);
        println!(
            "{threads} thread(s): {eps:.0} events/s per thread ({:.0} ns per event; target >= 1,000,000/s)",
            1e9 / eps
        );
    }

    println!(
        "\n== per-statement timing on the mock target, 1 thread (--statement-times on vs off, alternating) =="
    );
    for workload in ["oltp_point_select", "oltp_read_write"] {
        let mut ratios = Vec::new();
        let (mut on_eps, mut off_eps) = (Vec::new(), Vec::new());
        for round in 0..4 {
            let run = |on: &str| {
                let flag = ["--statement-times", on];
                dbsweep_run_with("mock://", workload, 1, args.seconds.min(3.0), &flag).0
            };
            let (on, off) = if round % 2 == 0 {
                let on = run("on");
                (on, run("off"))
            } else {
                let off = run("off");
                (run("on"), off)
            };
            ratios.push(on / off);
            on_eps.push(on);
            off_eps.push(off);
        }
        println!(
            "{workload}: {:.0} events/s with, {:.0} without; median ratio {:.3}",
            median(&mut on_eps),
            median(&mut off_eps),
            median(&mut ratios)
        );
    }

    println!("\n== memory against run length (mock target, 1 thread) ==");
    dbsweep_run("mock://", 1, 1.0);
    let before = rss_kb();
    dbsweep_run("mock://", 1, 2.0);
    let short = rss_kb();
    dbsweep_run("mock://", 1, 20.0);
    let long = rss_kb();
    println!(
        "RSS after warm-up {before} kB, after a 2 s run {short} kB, after a 20 s run {long} kB: growth {} kB",
        long as i64 - short as i64
    );
}
