//! bench/terminals: what a TPC-C terminal with keying and think times costs the client, as a
//! ratio to the least client that runs the same terminals (terminals_floor.rs).
//!
//! Starts one managed PostgreSQL (max_connections raised to a connection per terminal), loads
//! WAREHOUSES warehouses, then for each mode runs `dbsweep tpcc run --wait` (the
//! specification's keying and think times, unscaled; 25 s of warm-up) and, right after it, the
//! floor with the same terminals, worker threads, connections, warm-up and measured seconds:
//!   workers  terminals multiplexed on a few worker threads, a connection each: 100 and 1,000
//!   socket   the same 1,000 over the server's Unix socket rather than loopback TCP
//!   pooled   10,000 terminals sharing 64 connections
//!   threads  a thread per terminal (--workers = terminals): 100 and 1,000
//! and prints for each: transactions/s, dbsweep's peak RSS in all and per terminal (its own
//! high-water mark from the results file), dbsweep's client CPU microseconds per transaction
//! (its sampler's, over the measured part) with its user and system parts, the floor's (the
//! kernel's accounting of its process over the same part) with its parts, and the ratio
//! dbsweep/floor. A paced terminal's client CPU is mostly the kernel's part of its statements'
//! round trips (about 38 a transaction, each a send, a receive and a wake-up from idle): what it
//! costs in microseconds is this host's, the ratio is dbsweep's.
//! Targets: dbsweep/floor at most 1.3 at 1,000 terminals (workers, socket) and at 10,000 pooled;
//! at 1,000 terminals at most 150 KB of client RSS per terminal; 10,000 pooled in at most 1 GB.
//!
//!     cargo bench --bench terminals -- [--seconds 60] [--warehouses 10] [--warmup 25]
//!        [--modes workers:100,workers:1000,socket:1000,pooled:10000,threads:100,threads:1000]

use std::process::Command;

use clap::Parser;
use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};
use serde_json::Value;

mod terminals_floor;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    #[arg(long, default_value_t = 10)]
    warehouses: u32,
    #[arg(long, default_value_t = 25.0)]
    warmup: f64,
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "workers:100,workers:1000,socket:1000,pooled:10000,threads:100,threads:1000",
        value_parser = parse_mode
    )]
    modes: Vec<(String, u32)>,
    /// cargo passes `--bench` to every bench target
    #[arg(long, hide = true)]
    bench: bool,
}

/// `MODE:TERMINALS`, MODE one of workers, socket, pooled, threads.
fn parse_mode(s: &str) -> Result<(String, u32), String> {
    let (mode, n) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: expected MODE:TERMINALS"))?;
    if !["workers", "socket", "pooled", "threads"].contains(&mode) {
        return Err(format!(
            "{mode:?}: the modes are workers, socket, pooled and threads"
        ));
    }
    let n = n
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{n:?}: a terminal count is a whole number above 0"))?;
    Ok((mode.to_string(), n))
}

/// Connections the pooled mode's terminals share.
const POOL: u32 = 64;

fn main() {
    terminals_floor::serve_if_asked();
    let args = Args::parse();
    let spec = ServerSpec {
        settings: vec![("max_connections".into(), "1100".into())],
        ..ServerSpec::new(ServerKind::Postgres)
    };
    let server = ManagedServer::start(&spec).expect("managed PostgreSQL");
    let tcp = server.url.split('?').next().unwrap_or_default().to_string();
    let socket_dir = server.dir.display().to_string();
    let unix = format!(
        "postgres://sbtest@{}:{}/sbtest",
        socket_dir.replace('/', "%2F"),
        server.port
    );
    let bin = env!("CARGO_BIN_EXE_dbsweep");
    let w = args.warehouses.to_string();
    let ok = Command::new(bin)
        .args(["tpcc", "prepare", "--target", &tcp, "--warehouses", &w])
        .args(["--threads", "2"])
        .output()
        .expect("dbsweep runs");
    assert!(
        ok.status.success(),
        "tpcc prepare failed: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    println!(
        "{:<8}{:>7}{:>6}{:>8}{:>8}{:>8}{:>9}{:>16}{:>16}{:>9}{:>8}",
        "mode",
        "terms",
        "conns",
        "workers",
        "tx/s",
        "RSS MB",
        "KB/term",
        "dbsweep us/tx",
        "floor us/tx",
        "db/floor",
        "behind"
    );
    println!(
        "{:<8}{:>7}{:>6}{:>8}{:>8}{:>8}{:>9}{:>16}{:>16}",
        "", "", "", "", "", "", "", "(user+sys)", "(user+sys)"
    );
    let mut verdicts = Vec::new();
    for (mode, n) in &args.modes {
        let (mode, n) = (mode.as_str(), *n);
        let (url, addr) = if mode == "socket" {
            (
                unix.as_str(),
                format!("{socket_dir}/.s.PGSQL.{}", server.port),
            )
        } else {
            (tcp.as_str(), format!("127.0.0.1:{}", server.port))
        };
        let mut extra: Vec<String> = Vec::new();
        match mode {
            "pooled" => extra.extend(["--connections".into(), POOL.to_string()]),
            "threads" => extra.extend(["--workers".into(), n.to_string()]),
            _ => {}
        }
        let out = tempfile::NamedTempFile::new().expect("a results file");
        let run = Command::new(bin)
            .args(["tpcc", "run", "--target", url, "--warehouses", &w, "--wait"])
            .args(["--threads", &n.to_string()])
            .args(["--warmup", &args.warmup.to_string()])
            .args(["--time", &args.seconds.to_string()])
            .args(["--report-interval", "0", "--output"])
            .arg(out.path())
            .args(&extra)
            .output()
            .expect("dbsweep runs");
        if !run.status.success() {
            println!(
                "{mode} {n}: dbsweep failed: {}",
                String::from_utf8_lossy(&run.stderr)
                    .lines()
                    .last()
                    .unwrap_or_default()
            );
            continue;
        }
        let r: Value =
            serde_json::from_slice(&std::fs::read(out.path()).expect("results")).expect("JSON");
        let f = |p: &str| r.pointer(p).and_then(Value::as_f64).unwrap_or(f64::NAN);
        let workers = r
            .pointer("/serving/workers")
            .and_then(Value::as_u64)
            .unwrap_or(u64::from(n));
        let conns = if mode == "pooled" { POOL } else { n };
        let db = f("/hw/cpu_us_per_op/client");
        let (cu, cs) = (f("/hw/cpu_pct/client_user"), f("/hw/cpu_pct/client_system"));
        let db_user = db * cu / (cu + cs);
        let floor = terminals_floor::run(&terminals_floor::Spec {
            addr,
            user: "sbtest".into(),
            database: "sbtest".into(),
            warehouses: args.warehouses,
            terminals: n,
            workers: workers as u32,
            connections: if mode == "pooled" { POOL } else { 0 },
            warmup_s: args.warmup,
            seconds: args.seconds,
        });
        let (fl, fl_user, fl_sys) = floor.us_per_tx();
        let rss = f("/hw/client_peak_rss_kb");
        let ratio = db / fl;
        println!(
            "{mode:<8}{n:>7}{conns:>6}{workers:>8}{:>8.1}{:>8.0}{:>9.1}{:>16}{:>16}{ratio:>9.2}{:>8}",
            f("/tps"),
            rss / 1024.0,
            rss / f64::from(n),
            format!("{db:.0} ({db_user:.0}+{:.0})", db - db_user),
            format!("{fl:.0} ({fl_user:.0}+{fl_sys:.0})"),
            r.pointer("/serving/clients_behind")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        );
        if floor.retries > 0 || floor.late > 0 {
            println!(
                "  floor: {} tx/s, {} retried, {} started over 1 s late",
                floor.transactions as f64 / args.seconds,
                floor.retries,
                floor.late
            );
        }
        let target = (mode != "threads" && n >= 1000).then_some(1.3);
        if let Some(t) = target {
            verdicts.push(format!(
                "{mode} {n}: dbsweep/floor {ratio:.2} (target <= {t}){}",
                if mode == "pooled" {
                    format!(", RSS {:.0} MB of the 1,024 MB target", rss / 1024.0)
                } else {
                    format!(
                        ", RSS {:.2} of the 150 KB/terminal target",
                        rss / f64::from(n) / 150.0
                    )
                }
            ));
        }
    }
    for v in verdicts {
        println!("-> {v}");
    }
    drop(server);
}
