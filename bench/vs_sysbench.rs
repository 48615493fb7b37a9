//! bench/vs_sysbench: dbsweep against sysbench 1.0.20, the peer to beat, on the same managed
//! servers.
//!
//! For each of a managed PostgreSQL and a managed MariaDB: prepare 4 tables x 250,000 rows with
//! each tool (rows/s and their ratio), then run sysbench and dbsweep in alternation (A B A B)
//! on oltp_point_select, oltp_read_only and oltp_read_write at 1, 2 and 4 threads. Prints QPS
//! of each, the ratio dbsweep/sysbench, and the client CPU microseconds per query of each (the
//! client process's user+system time, from the kernel's accounting of the finished child).
//!
//!     cargo bench --bench vs_sysbench -- [--seconds 10] [--rounds 1] [--servers postgres,mariadb]
//!        [--workloads oltp_point_select,...] [--threads 1,2,4]

use std::process::{Command, Stdio};
use std::time::Instant;

use clap::Parser;
use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 10)]
    seconds: u32,
    #[arg(long, default_value_t = 1)]
    rounds: u32,
    #[arg(long, value_delimiter = ',', default_value = "postgres,mariadb")]
    servers: Vec<String>,
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "oltp_point_select,oltp_read_only,oltp_read_write"
    )]
    workloads: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    threads: Vec<u32>,
    #[arg(long, default_value_t = 250_000)]
    table_size: u32,
    #[arg(long, default_value_t = 4)]
    tables: u32,
    /// Settings of the managed MariaDB: the default 128 MB buffer pool (with O_DIRECT) would
    /// make the 1M-row tables IO-bound, and this benchmark measures the clients.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "innodb_buffer_pool_size=1G"
    )]
    mariadb_set: Vec<String>,
    /// Settings of the managed PostgreSQL (its tables stay in the OS page cache by default).
    #[arg(long, value_delimiter = ',')]
    postgres_set: Vec<String>,
    /// Also run each workload's sysbench Lua script in dbsweep (the same .lua file sysbench
    /// runs), a third client in the alternation; prints its QPS and CPU per query too.
    #[arg(long)]
    lua: bool,
    /// The only-prepare-once mode: skip the prepare comparison.
    #[arg(long)]
    no_prepare_compare: bool,
    #[arg(long, hide = true)]
    bench: bool,
}

/// CPU seconds (user + system) of children reaped so far.
fn children_cpu() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Runs a client to completion; returns its output and its CPU seconds.
fn client(cmd: &mut Command) -> (String, f64) {
    let before = children_cpu();
    let out = cmd.stdin(Stdio::null()).output().expect("client starts");
    let cpu = children_cpu() - before;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    (text, cpu)
}

struct Tools<'a> {
    kind: ServerKind,
    server: &'a ManagedServer,
    args: &'a Args,
}

impl Tools<'_> {
    fn sysbench(&self, workload: &str, command: &str, threads: u32) -> Command {
        let a = self.args;
        let (driver, p) = if self.kind == ServerKind::Postgres {
            ("pgsql", "pgsql")
        } else {
            ("mysql", "mysql")
        };
        let mut c = Command::new("sysbench");
        c.arg(workload).args([
            format!("--db-driver={driver}"),
            format!("--{p}-host=127.0.0.1"),
            format!("--{p}-port={}", self.server.port),
            format!("--{p}-user=sbtest"),
            format!("--{p}-db=sbtest"),
            format!("--tables={}", a.tables),
            format!("--table-size={}", a.table_size),
            format!("--threads={threads}"),
            format!("--time={}", a.seconds),
            "--rand-type=uniform".into(),
            "--report-interval=0".into(),
        ]);
        c.arg(command);
        c
    }

    fn dbsweep(&self, workload: &str, command: &str, threads: u32) -> Command {
        let a = self.args;
        let mut c = Command::new(env!("CARGO_BIN_EXE_dbsweep"));
        c.args([command, workload, "--target", &self.server.url])
            .args([
                format!("--tables={}", a.tables),
                format!("--table-size={}", a.table_size),
                format!("--threads={threads}"),
                format!("--time={}", a.seconds),
                "--report-interval=0".into(),
            ]);
        c
    }
}

/// QPS from sysbench's `queries: N (X per sec.)` line.
fn sysbench_qps(text: &str) -> f64 {
    per_sec(text, "    queries:")
}

fn per_sec(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.split('(').nth(1)?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no '{prefix}' line in:\n{text}"))
}

fn main() {
    let args = Args::parse();
    let rows = f64::from(args.tables) * f64::from(args.table_size);
    for name in &args.servers {
        let kind = if name == "postgres" {
            ServerKind::Postgres
        } else {
            ServerKind::Mariadb
        };
        let set = if kind == ServerKind::Postgres {
            &args.postgres_set
        } else {
            &args.mariadb_set
        };
        let settings = set
            .iter()
            .map(|s| dbsweep::server::parse_setting(s).expect("name=value"))
            .collect();
        let spec = ServerSpec {
            kind,
            settings,
            datadir: None,
            keep: false,
        };
        let server = ManagedServer::start(&spec).expect("managed server");
        let t = Tools {
            kind,
            server: &server,
            args: &args,
        };
        println!("\n== {} ({}) {:?} ==", name, server.version, spec.settings);

        if !args.no_prepare_compare {
            let start = Instant::now();
            client(&mut t.sysbench("oltp_read_write", "prepare", args.tables));
            let sb_load = rows / start.elapsed().as_secs_f64();
            client(&mut t.sysbench("oltp_read_write", "cleanup", 1));
            let start = Instant::now();
            client(&mut t.dbsweep("oltp_read_write", "prepare", args.tables));
            let db_load = rows / start.elapsed().as_secs_f64();
            println!(
                "prepare {} x {}: sysbench {sb_load:.0} rows/s, dbsweep {db_load:.0} rows/s, ratio {:.2}",
                args.tables,
                args.table_size,
                db_load / sb_load
            );
        } else {
            client(&mut t.dbsweep("oltp_read_write", "prepare", args.tables));
        }
        if args.lua {
            lua_rows(&t, &args);
            continue;
        }

        println!(
            "{:<18} {:>3} {:>11} {:>11} {:>6} {:>10} {:>10} {:>6}",
            "workload", "thr", "sysbench", "dbsweep", "ratio", "sb us/q", "db us/q", "ratio"
        );
        for workload in &args.workloads {
            for &threads in &args.threads {
                let (mut sb, mut db) = ((0.0, 0.0), (0.0, 0.0));
                for _ in 0..args.rounds {
                    let (text, cpu) = client(&mut t.sysbench(workload, "run", threads));
                    let qps = sysbench_qps(&text);
                    sb = (
                        sb.0 + qps,
                        sb.1 + cpu * 1e6 / (qps * f64::from(args.seconds)),
                    );
                    let (text, cpu) = client(&mut t.dbsweep(workload, "run", threads));
                    let qps = per_sec(&text, "    queries:");
                    db = (
                        db.0 + qps,
                        db.1 + cpu * 1e6 / (qps * f64::from(args.seconds)),
                    );
                }
                let n = f64::from(args.rounds);
                let (sq, sc, dq, dc) = (sb.0 / n, sb.1 / n, db.0 / n, db.1 / n);
                println!(
                    "{workload:<18} {threads:>3} {sq:>11.0} {dq:>11.0} {:>6.2} {sc:>10.2} {dc:>10.2} {:>6.2}",
                    dq / sq,
                    dc / sc
                );
            }
        }
    }
}

/// QPS and client CPU microseconds per query of one client run.
fn measure(cmd: &mut Command, seconds: u32) -> (f64, f64) {
    let (text, cpu) = client(cmd);
    let qps = per_sec(&text, "    queries:");
    (qps, cpu * 1e6 / (qps * f64::from(seconds)))
}

/// sysbench running WORKLOAD.lua, dbsweep running the same file, dbsweep's native workload,
/// alternating; the CPU ratios to sysbench (targets: Lua <= 1.2, native <= 0.5).
fn lua_rows(t: &Tools, args: &Args) {
    println!(
        "{:<18} {:>3} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "workload",
        "thr",
        "sb qps",
        "lua qps",
        "native",
        "sb us/q",
        "lua us/q",
        "nat us/q",
        "lua/sb",
        "nat/sb"
    );
    for workload in &args.workloads {
        let script = format!("/usr/share/sysbench/{workload}.lua");
        for &threads in &args.threads {
            let mut sum = [(0.0, 0.0); 3];
            for round in 0..args.rounds {
                // Rotate the order so that no client always runs first.
                for k in 0..3 {
                    let which = (k + round as usize) % 3;
                    let m = match which {
                        0 => measure(&mut t.sysbench(workload, "run", threads), args.seconds),
                        1 => measure(&mut t.dbsweep(&script, "run", threads), args.seconds),
                        _ => measure(&mut t.dbsweep(workload, "run", threads), args.seconds),
                    };
                    sum[which].0 += m.0;
                    sum[which].1 += m.1;
                }
            }
            let n = f64::from(args.rounds);
            let [sb, lua, nat] = sum.map(|(q, c)| (q / n, c / n));
            println!(
                "{workload:<18} {threads:>3} {:>10.0} {:>10.0} {:>10.0} {:>9.2} {:>9.2} {:>9.2} {:>8.2} {:>8.2}",
                sb.0,
                lua.0,
                nat.0,
                sb.1,
                lua.1,
                nat.1,
                lua.1 / sb.1,
                nat.1 / sb.1
            );
        }
    }
}
