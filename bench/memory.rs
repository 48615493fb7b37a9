//! bench/memory: what a client costs in memory, against the targets of issues 65 and 66.
//!
//! Each run is a child `dbsweep` process whose peak resident memory the kernel reports when it
//! is reaped (`wait4`'s maxrss, the whole process):
//! - `oltp_read_write` on the mock target at 1 and N threads (default 1,000): the memory per
//!   client thread, (peak at N - peak at 1) / (N - 1); target at most 300 KB;
//! - `oltp_point_select` on embedded SQLite, the same, less SQLite's own heap (its page cache
//!   and lookaside per connection, from the results file's `sqlite_heap_peak_kb`): the
//!   database's memory is the database's, the client's is dbsweep's; SQLite's is printed apart;
//! - 200 clients of `oltp_read_write` on the mock target, the whole process; target at most
//!   150 MB;
//! - a pgbench script of 10,000 commands with each command timed (`-r`), one transaction on
//!   SQLite, the whole process; target at most 100 MB.
//!
//! Beside them, the floor: this bench's own process with N threads that do nothing but wait
//! (their stacks and the kernel's bookkeeping), per thread. Each figure is printed with its
//! ratio to the target (at most 1 meets it).
//!
//!     cargo bench --bench memory -- [--threads 1000] [--seconds 3]

use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};

use clap::Parser;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(2..))]
    threads: u32,
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    #[arg(long, default_value = "/tmp/dbsweep-bench/memory")]
    dir: String,
    /// Internal: be the floor, N threads that wait, and exit.
    #[arg(long, hide = true)]
    floor_threads: Option<u32>,
    #[arg(long, hide = true)]
    bench: bool,
}

/// Runs `cmd` and returns its peak resident memory in KB, the kernel's figure for the reaped
/// child; panics when it fails (its standard error, kept in a file, said why).
fn peak_kb(mut cmd: Command) -> u64 {
    let err_path = std::env::temp_dir().join(format!("dbsweep-memory-{}.err", std::process::id()));
    let err = std::fs::File::create(&err_path).expect("stderr file");
    // Reaped by wait4 below, which gives its resource usage; Child::wait would not.
    #[allow(clippy::zombie_processes)]
    let child = cmd
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter for wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet reaped; wait4 writes only into status and ru.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(reaped, pid, "wait4");
    let said = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&err_path);
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        panic!("{cmd:?} failed: {said}");
    }
    ru.ru_maxrss as u64
}

fn dbsweep(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dbsweep"));
    c.args(args);
    c
}

/// A step run by `dbsweep run`; returns (its process's peak KB, SQLite's own heap peak KB).
fn run(dir: &str, target: &str, workload: &str, threads: u32, seconds: f64) -> (u64, u64) {
    let out = format!("{dir}/run.json");
    let _ = std::fs::remove_file(&out);
    let (t, s) = (threads.to_string(), seconds.to_string());
    let peak = peak_kb(dbsweep(&[
        "run",
        workload,
        "--target",
        target,
        "--threads",
        &t,
        "--time",
        &s,
        "--connect-rate",
        "0",
        "--output",
        &out,
    ]));
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("results")).expect("json");
    let sqlite = results["hw"]["sqlite_heap_peak_kb"].as_u64().unwrap_or(0);
    (peak, sqlite)
}

/// This process as the floor: `n` threads that wait, then exit.
fn be_floor(n: u32) -> ! {
    let barrier = Arc::new(Barrier::new(n as usize + 1));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let b = Arc::clone(&barrier);
            std::thread::spawn(move || {
                b.wait();
            })
        })
        .collect();
    barrier.wait();
    for t in threads {
        t.join().unwrap();
    }
    std::process::exit(0)
}

fn floor_kb(threads: u32) -> u64 {
    let me = std::env::current_exe().expect("own path");
    let mut c = Command::new(me);
    c.args(["--floor-threads", &threads.to_string()]);
    peak_kb(c)
}

fn line(what: &str, kb: f64, floor: Option<f64>, target_kb: f64) {
    let floor = floor.map_or(String::new(), |f| format!(", floor {f:.1} KB"));
    println!(
        "{what:<72} {kb:>10.1} KB{floor}; /target {:.2} (target {target_kb:.0} KB)",
        kb / target_kb
    );
}

fn main() {
    let args = Args::parse();
    if let Some(n) = args.floor_threads {
        be_floor(n);
    }
    let dir = &args.dir;
    std::fs::create_dir_all(dir).expect("bench directory");
    let n = args.threads;
    let per = |a: u64, b: u64| (b as f64 - a as f64) / f64::from(n - 1);

    let floor = per(floor_kb(1), floor_kb(n));

    let (one, _) = run(dir, "mock://", "oltp_read_write", 1, args.seconds);
    let (many, _) = run(dir, "mock://", "oltp_read_write", n, args.seconds);
    line(
        &format!("mock oltp_read_write, per client thread at {n}"),
        per(one, many),
        Some(floor),
        300.0,
    );

    let db = format!("{dir}/sbtest.db");
    let url = format!("sqlite://{db}");
    if !std::path::Path::new(&db).exists() {
        peak_kb(dbsweep(&["prepare", "oltp_point_select", "--target", &url]));
    }
    let (one, one_sqlite) = run(dir, &url, "oltp_point_select", 1, args.seconds);
    let (many, many_sqlite) = run(dir, &url, "oltp_point_select", n, args.seconds);
    line(
        &format!("SQLite oltp_point_select, per client thread at {n} (less SQLite's heap)"),
        per(one - one_sqlite.min(one), many - many_sqlite.min(many)),
        Some(floor),
        300.0,
    );
    println!(
        "{:<72} {:>10.1} KB (SQLite's page cache, lookaside and statements: the database's)",
        "  SQLite's own heap per connection",
        per(one_sqlite, many_sqlite)
    );

    let (two_hundred, _) = run(dir, "mock://", "oltp_read_write", 200, args.seconds);
    line(
        "mock oltp_read_write, 200 clients, the whole process",
        two_hundred as f64,
        None,
        150.0 * 1024.0,
    );

    let script = format!("{dir}/commands.sql");
    let text: String = (0..10_000).map(|i| format!("SELECT {i};\n")).collect();
    std::fs::write(&script, text).expect("script");
    let out = format!("{dir}/script.json");
    let peak = peak_kb(dbsweep(&[
        "run",
        "pgbench",
        "--script",
        &script,
        "--target",
        &url,
        "--events",
        "1",
        "--statement-times",
        "on",
        "--output",
        &out,
    ]));
    line(
        "a 10,000-command script timed per command, the whole process",
        peak as f64,
        None,
        100.0 * 1024.0,
    );
}
