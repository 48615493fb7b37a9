//! bench/vs_pgbench: dbsweep acting as pgbench against the real pgbench of the installed
//! PostgreSQL, on one managed server: client CPU per transaction, the target being at
//! most pgbench's.
//!
//! Initialises pgbench's tables with the real pgbench (`-i -s SCALE`), then runs each builtin
//! at each client count with both tools in alternation (pgbench, dbsweep; then the other order
//! the next round), the same command line for both (`-n -b NAME -c C -j C -T S -M MODE`):
//! transactions/s of each, and the client process's CPU microseconds per transaction (user +
//! system time of the finished child, from the kernel's accounting), user time apart, with the
//! ratio dbsweep/pgbench of each (medians over rounds).
//!
//!     cargo bench --bench vs_pgbench -- [--seconds 10] [--rounds 2] [--scale 10]
//!        [--builtins select-only,tpcb-like] [--clients 1,2] [--modes prepared,simple]

use std::process::{Command, Stdio};

use clap::Parser;
use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};

const PGBENCH: &str = "/usr/lib/postgresql/15/bin/pgbench";

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 10)]
    seconds: u32,
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    #[arg(long, default_value_t = 10)]
    scale: u32,
    #[arg(long, value_delimiter = ',', default_value = "select-only,tpcb-like")]
    builtins: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    clients: Vec<u32>,
    #[arg(long, value_delimiter = ',', default_value = "prepared,simple")]
    modes: Vec<String>,
    #[arg(long, hide = true)]
    bench: bool,
}

/// User and system CPU seconds of the children reaped so far.
fn children() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// One client run: transactions/s, CPU us per transaction, user us per transaction.
#[derive(Clone, Copy)]
struct Run {
    tps: f64,
    cpu_us: f64,
    user_us: f64,
}

/// Runs `cmd` to completion; what it did, read from pgbench's summary lines.
fn run(cmd: &mut Command) -> Run {
    let before = children();
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .expect("the client starts");
    let after = children();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{cmd:?}:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let number = |prefix: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|rest| {
                rest.split(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .find(|w| !w.is_empty())
            })
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("no '{prefix}' in\n{text}"))
    };
    let txns = number("number of transactions actually processed: ");
    let (user, sys) = (after.0 - before.0, after.1 - before.1);
    Run {
        tps: number("tps = "),
        cpu_us: (user + sys) * 1e6 / txns.max(1.0),
        user_us: user * 1e6 / txns.max(1.0),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args = Args::parse();
    let server =
        ManagedServer::start(&ServerSpec::new(ServerKind::Postgres)).expect("managed PostgreSQL");
    let port = server.port.to_string();
    let conn = ["-h", "127.0.0.1", "-p", port.as_str(), "-U", "sbtest"];
    let init = Command::new(PGBENCH)
        .args(conn)
        .args(["-i", "-q", "-s", &args.scale.to_string(), "sbtest"])
        .output()
        .expect("pgbench -i");
    assert!(
        init.status.success(),
        "pgbench -i: {}",
        String::from_utf8_lossy(&init.stderr)
    );
    println!(
        "vs_pgbench: PostgreSQL {}, scale {}, {} s runs, {} rounds (alternating order); CPU = the client's user + system us per transaction",
        server.version, args.scale, args.seconds, args.rounds
    );
    println!(
        "{:<14} {:<9} {:>3}  {:>10} {:>10} {:>7}  {:>8} {:>8} {:>7}  {:>8} {:>8} {:>7}",
        "builtin",
        "mode",
        "c",
        "pgb tps",
        "dbs tps",
        "tps x",
        "pgb cpu",
        "dbs cpu",
        "cpu x",
        "pgb usr",
        "dbs usr",
        "usr x"
    );
    let mut worst: f64 = 0.0;
    for builtin in &args.builtins {
        for mode in &args.modes {
            for &c in &args.clients {
                let c = c.to_string();
                let line = [
                    "-n",
                    "-b",
                    builtin.as_str(),
                    "-c",
                    c.as_str(),
                    "-j",
                    c.as_str(),
                    "-T",
                    &args.seconds.to_string(),
                    "-M",
                    mode.as_str(),
                ]
                .map(String::from);
                let pgbench = || {
                    let mut cmd = Command::new(PGBENCH);
                    cmd.args(conn).args(&line).arg("sbtest");
                    run(&mut cmd)
                };
                let dbsweep = || {
                    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dbsweep"));
                    cmd.arg("pgbench")
                        .args(conn)
                        .args(&line)
                        .arg("sbtest")
                        .current_dir(&server.dir);
                    run(&mut cmd)
                };
                let (mut theirs, mut ours) = (Vec::new(), Vec::new());
                for round in 0..args.rounds {
                    if round % 2 == 0 {
                        theirs.push(pgbench());
                        ours.push(dbsweep());
                    } else {
                        ours.push(dbsweep());
                        theirs.push(pgbench());
                    }
                }
                let m = |v: &[Run], f: fn(&Run) -> f64| median(v.iter().map(f).collect());
                let ratio = |f: fn(&Run) -> f64| {
                    median(theirs.iter().zip(&ours).map(|(a, b)| f(b) / f(a)).collect())
                };
                let cpu_x = ratio(|r| r.cpu_us);
                worst = worst.max(cpu_x);
                println!(
                    "{:<14} {:<9} {:>3}  {:>10.0} {:>10.0} {:>7.2}  {:>8.1} {:>8.1} {:>7.2}  {:>8.1} {:>8.1} {:>7.2}",
                    builtin,
                    mode,
                    c,
                    m(&theirs, |r| r.tps),
                    m(&ours, |r| r.tps),
                    ratio(|r| r.tps),
                    m(&theirs, |r| r.cpu_us),
                    m(&ours, |r| r.cpu_us),
                    cpu_x,
                    m(&theirs, |r| r.user_us),
                    m(&ours, |r| r.user_us),
                    ratio(|r| r.user_us),
                );
            }
        }
    }
    println!(
        "highest CPU per transaction over pgbench's: {worst:.2} (target <= 1.00): {}",
        if worst <= 1.0 { "ok" } else { "ABOVE" }
    );
}
