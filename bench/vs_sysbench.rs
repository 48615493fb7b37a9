//! bench/vs_sysbench: dbsweep against sysbench 1.0.20, the peer to beat, on the same managed
//! servers.
//!
//! For each of a managed PostgreSQL and a managed MariaDB: prepare 4 tables x 250,000 rows with
//! each tool (rows/s and their ratio), then run sysbench and dbsweep in alternation (A B A B)
//! on oltp_point_select, oltp_read_only and oltp_read_write at 1, 2 and 4 threads. Prints QPS
//! of each, the ratio dbsweep/sysbench, and the client CPU microseconds per query of each (the
//! client process's user+system time, from the kernel's accounting of the finished child), split
//! into user and system time, with the client's voluntary context switches per query.
//!
//! `--transport tcp|unix|both` picks how both clients reach the server: loopback TCP (the
//! default) or the server's Unix socket; both tools always use the same one.
//!
//! Each transport's round-trip floor (floor.rs) is measured first; the `floor/sb` column is the
//! least CPU ratio to sysbench that any client waiting for each answer could reach.
//!
//!     cargo bench --bench vs_sysbench -- [--seconds 10] [--rounds 1] [--servers postgres,mariadb]
//!        [--workloads oltp_point_select,...] [--threads 1,2,4] [--transport tcp|unix|both]
//!        [--floor-seconds 2]

use std::process::{Command, Stdio};
use std::time::Instant;

use clap::Parser;
use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};

mod floor;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 10)]
    seconds: u32,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
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
    /// What TLS costs: the servers run with TLS on (plain connections allowed too), and each
    /// workload runs plain and over TLS for both tools (sysbench: PGSSLMODE=require,
    /// --mysql-ssl=on; dbsweep: sslmode=require, ssl-mode=REQUIRED), over loopback TCP
    #[arg(long)]
    tls: bool,
    /// How both clients connect: tcp (loopback), unix (the server's socket) or both, one after
    /// the other.
    #[arg(long, default_value = "tcp", value_parser = ["tcp", "unix", "both"])]
    transport: String,
    /// PostgreSQL: also run dbsweep with `--pipeline` (each event's statements in one round
    /// trip), a third client in the alternation; prints its QPS, CPU per query and ratios.
    #[arg(long)]
    pipeline: bool,
    /// The only-prepare-once mode: skip the prepare comparison.
    #[arg(long)]
    no_prepare_compare: bool,
    /// Seconds per placement of the round-trip floor measurement (0 skips it).
    #[arg(long, default_value_t = 2.0)]
    floor_seconds: f64,
    #[arg(long, hide = true)]
    bench: bool,
}

/// What the kernel accounted to a finished client: user and system CPU seconds, voluntary
/// context switches.
#[derive(Clone, Copy, Default)]
struct Usage {
    user: f64,
    sys: f64,
    switches: f64,
}

impl Usage {
    /// Of the children reaped so far.
    fn children() -> Usage {
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage fills the struct we own.
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Usage {
            user: tv(ru.ru_utime),
            sys: tv(ru.ru_stime),
            switches: ru.ru_nvcsw as f64,
        }
    }

    fn since(self, before: Usage) -> Usage {
        Usage {
            user: self.user - before.user,
            sys: self.sys - before.sys,
            switches: self.switches - before.switches,
        }
    }
}

/// Per query of one client run: QPS, user, system and total CPU microseconds, context switches.
#[derive(Clone, Copy, Default)]
struct PerQuery {
    qps: f64,
    user: f64,
    sys: f64,
    switches: f64,
}

impl PerQuery {
    fn new(qps: f64, u: Usage, seconds: u32) -> PerQuery {
        let q = qps * f64::from(seconds);
        PerQuery {
            qps,
            user: u.user * 1e6 / q,
            sys: u.sys * 1e6 / q,
            switches: u.switches / q,
        }
    }

    fn cpu(&self) -> f64 {
        self.user + self.sys
    }

    fn add(&mut self, o: PerQuery, n: f64) {
        self.qps += o.qps / n;
        self.user += o.user / n;
        self.sys += o.sys / n;
        self.switches += o.switches / n;
    }
}

/// Runs a client to completion; returns its output and what it used.
fn client(cmd: &mut Command) -> (String, Usage) {
    let before = Usage::children();
    let out = cmd.stdin(Stdio::null()).output().expect("client starts");
    let cpu = Usage::children().since(before);
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
    /// Connect through the server's Unix socket instead of loopback TCP.
    unix: bool,
    /// The round-trip floor of each transport (TCP, Unix socket), client CPU us per query.
    floors: [f64; 2],
    /// Both clients over TLS (loopback TCP).
    tls: bool,
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
        c.arg(workload).arg(format!("--db-driver={driver}"));
        if self.tls {
            // libpq's TLS comes from the environment; sysbench's MySQL driver reads
            // cacert.pem, client-cert.pem and client-key.pem of its working directory.
            c.env("PGSSLMODE", "require")
                .arg("--mysql-ssl=on")
                .current_dir(&self.server.dir);
        } else {
            // Not unset: libpq's default is `prefer`, which would encrypt the "plain" runs
            // against a server started with TLS.
            c.env("PGSSLMODE", "disable");
        }
        if !self.unix {
            c.arg(format!("--{p}-host=127.0.0.1"));
        } else if self.kind == ServerKind::Postgres {
            c.arg(format!("--pgsql-host={}", self.server.dir.display()));
        } else {
            c.arg(format!("--mysql-socket={}", self.socket()));
        }
        c.args([
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
        c.args([command, workload, "--target", &self.url()]).args([
            format!("--tables={}", a.tables),
            format!("--table-size={}", a.table_size),
            format!("--threads={threads}"),
            format!("--time={}", a.seconds),
            "--report-interval=0".into(),
        ]);
        c
    }
}

impl Tools<'_> {
    /// The round-trip floor of the transport in use (NaN when not measured).
    fn floor(&self) -> f64 {
        self.floors[usize::from(self.unix)]
    }

    fn socket(&self) -> String {
        self.server.dir.join("mysqld.sock").display().to_string()
    }

    /// dbsweep's target URL for the chosen transport.
    fn url(&self) -> String {
        let plain = self.server.url.split('?').next().unwrap_or_default();
        if self.tls {
            // Encrypted without checking the certificate, as sysbench's clients do.
            let mode = if self.kind == ServerKind::Postgres {
                "sslmode=require"
            } else {
                "ssl-mode=REQUIRED"
            };
            return format!("{plain}?{mode}");
        }
        if !self.unix {
            return plain.to_string();
        }
        if self.kind == ServerKind::Postgres {
            let dir = self.server.dir.display().to_string().replace('/', "%2F");
            format!("postgres://sbtest@{dir}:{}/sbtest", self.server.port)
        } else {
            format!("mysql://sbtest@localhost/sbtest?socket={}", self.socket())
        }
    }
}

/// The rate of a `PREFIX N (X per sec.)` line (sysbench's and dbsweep's summaries).
fn per_sec(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.split('(').nth(1)?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no '{prefix}' line in:\n{text}"))
}

fn main() {
    floor::serve_if_asked();
    let args = Args::parse();
    let rows = f64::from(args.tables) * f64::from(args.table_size);
    let transports: &[bool] = match args.transport.as_str() {
        "tcp" => &[false],
        "unix" => &[true],
        _ => &[false, true],
    };
    let mut floors = [f64::NAN; 2];
    if args.floor_seconds > 0.0 {
        for &unix in transports {
            let (each, least) = floor::measure(unix, args.floor_seconds);
            let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
            println!(
                "round-trip floor over {}: client CPU us per round trip (no-op client, echo \
                 server): scheduler's placement {}, one CPU {}, two CPUs {}; floor {least:.2}",
                transport_name(unix),
                show(each[0]),
                show(each[1]),
                show(each[2]),
            );
            floors[usize::from(unix)] = least;
        }
    }
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
            settings,
            tls: args.tls,
            tls_required: false,
            ..ServerSpec::new(kind)
        };
        let server = ManagedServer::start(&spec).expect("managed server");
        if args.tls {
            for (from, to) in [
                ("ca.pem", "cacert.pem"),
                ("client.crt", "client-cert.pem"),
                ("client.key", "client-key.pem"),
            ] {
                std::fs::copy(server.dir.join(from), server.dir.join(to))
                    .expect("the managed server's TLS files");
            }
        }
        let mut t = Tools {
            kind,
            server: &server,
            args: &args,
            unix: false,
            floors,
            tls: false,
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
        if args.tls {
            tls_rows(&mut t, &args);
            continue;
        }
        for &unix in transports {
            t.unix = unix;
            println!("-- over {} --", transport_name(unix));
            if args.lua {
                lua_rows(&t, &args);
            } else {
                native_rows(&t, &args);
            }
        }
    }
}

fn transport_name(unix: bool) -> &'static str {
    if unix {
        "the Unix socket"
    } else {
        "loopback TCP"
    }
}

/// sysbench and dbsweep alternating on each workload and thread count.
fn native_rows(t: &Tools, args: &Args) {
    println!(
        "{:<18} {:>3} {:>9} {:>9} {:>6} {:>8} {:>8} {:>6} {:>8} {:>8} {:>15} {:>15} {:>11}",
        "workload",
        "thr",
        "sb qps",
        "db qps",
        "ratio",
        "sb us/q",
        "db us/q",
        "ratio",
        "floor/sb",
        "db/floor",
        "sb user+sys",
        "db user+sys",
        "csw/q sb db"
    );
    // Pipelined dbsweep, where the target pipelines: its own columns after the others.
    let piped = args.pipeline && t.kind == ServerKind::Postgres;
    if piped {
        println!(
            "{:>135}",
            "pipelined dbsweep:    qps  qps/sb   us/q  cpu/sb"
        );
    }
    for workload in &args.workloads {
        for &threads in &args.threads {
            let n = f64::from(args.rounds);
            let (mut sb, mut db) = (PerQuery::default(), PerQuery::default());
            let mut pl = PerQuery::default();
            for _ in 0..args.rounds {
                if piped {
                    let mut c = t.dbsweep(workload, "run", threads);
                    pl.add(measure(c.arg("--pipeline"), args.seconds), n);
                }
                sb.add(
                    measure(&mut t.sysbench(workload, "run", threads), args.seconds),
                    n,
                );
                db.add(
                    measure(&mut t.dbsweep(workload, "run", threads), args.seconds),
                    n,
                );
            }
            let pipelined = if piped {
                format!(
                    " {:>9.0} {:>6.2} {:>6.2} {:>6.2}",
                    pl.qps,
                    pl.qps / sb.qps,
                    pl.cpu(),
                    pl.cpu() / sb.cpu()
                )
            } else {
                String::new()
            };
            println!(
                "{workload:<18} {threads:>3} {:>9.0} {:>9.0} {:>6.2} {:>8.2} {:>8.2} {:>6.2} {:>8.2} {:>8.2} {:>7.2}+{:<7.2} {:>7.2}+{:<7.2} {:>5.2} {:>5.2}{pipelined}",
                sb.qps,
                db.qps,
                db.qps / sb.qps,
                sb.cpu(),
                db.cpu(),
                db.cpu() / sb.cpu(),
                t.floor() / sb.cpu(),
                db.cpu() / t.floor(),
                sb.user,
                sb.sys,
                db.user,
                db.sys,
                sb.switches,
                db.switches
            );
        }
    }
}

/// Plain and TLS runs of both tools, rotated: QPS and client CPU per query of each, each
/// tool's TLS overhead (TLS us/q minus plain us/q), and dbsweep's TLS CPU against sysbench's
/// (target: at most 0.8) and its overhead against sysbench's (target: at most 1).
fn tls_rows(t: &mut Tools, args: &Args) {
    println!("-- over loopback TCP, plain and TLS --");
    println!(
        "{:<18} {:>3} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>8} {:>8}  tls/sb by round (standard error of their mean)",
        "workload",
        "thr",
        "sb qps",
        "sb tls",
        "db qps",
        "db tls",
        "sb us/q",
        "sb tls",
        "db us/q",
        "db tls",
        "sb +tls",
        "db +tls",
        "tls/sb",
        "+tls/sb"
    );
    for workload in &args.workloads {
        for &threads in &args.threads {
            let n = f64::from(args.rounds);
            let mut sum = [PerQuery::default(); 4];
            // Each round's TLS CPU ratio: the spread says how far the mean can be trusted.
            let mut by_round = Vec::new();
            for round in 0..args.rounds {
                let mut tls_cpu = [0.0; 2];
                for k in 0..4 {
                    let which = (k + round as usize) % 4;
                    t.tls = which >= 2;
                    let m = if which.is_multiple_of(2) {
                        measure(&mut t.sysbench(workload, "run", threads), args.seconds)
                    } else {
                        measure(&mut t.dbsweep(workload, "run", threads), args.seconds)
                    };
                    if which >= 2 {
                        tls_cpu[which - 2] = m.cpu();
                    }
                    sum[which].add(m, n);
                }
                by_round.push(tls_cpu[1] / tls_cpu[0]);
            }
            by_round.sort_by(f64::total_cmp);
            let se = standard_error(&by_round);
            t.tls = false;
            let [sb, db, sbt, dbt] = sum;
            let (sb_over, db_over) = (sbt.cpu() - sb.cpu(), dbt.cpu() - db.cpu());
            println!(
                "{workload:<18} {threads:>3} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>7.2} {:>7.2} {:>8.2} {:>8.2}  {:.2}..{:.2} ({se:.2})",
                sb.qps,
                sbt.qps,
                db.qps,
                dbt.qps,
                sb.cpu(),
                sbt.cpu(),
                db.cpu(),
                dbt.cpu(),
                sb_over,
                db_over,
                dbt.cpu() / sbt.cpu(),
                db_over / sb_over,
                by_round[0],
                by_round[by_round.len() - 1]
            );
        }
    }
}

/// The standard error of the mean of `xs` (NaN for fewer than two): how far a row's mean of
/// rounds may sit from what more rounds would give, on a machine whose scheduler moves each
/// round's figure by a tenth or more.
fn standard_error(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (var / n).sqrt()
}

/// QPS and client CPU per query of one client run.
fn measure(cmd: &mut Command, seconds: u32) -> PerQuery {
    let (text, usage) = client(cmd);
    PerQuery::new(per_sec(&text, "    queries:"), usage, seconds)
}

/// sysbench running WORKLOAD.lua, dbsweep running the same file, dbsweep's native workload,
/// alternating; the CPU ratios to sysbench (targets: Lua <= 1.2, native <= 0.5).
fn lua_rows(t: &Tools, args: &Args) {
    println!(
        "{:<18} {:>3} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}",
        "workload",
        "thr",
        "sb qps",
        "lua qps",
        "native",
        "sb us/q",
        "lua us/q",
        "nat us/q",
        "lua/sb",
        "nat/sb",
        "floor/sb"
    );
    for workload in &args.workloads {
        let script = format!("/usr/share/sysbench/{workload}.lua");
        for &threads in &args.threads {
            let n = f64::from(args.rounds);
            let mut sum = [PerQuery::default(); 3];
            for round in 0..args.rounds {
                // Rotate the order so that no client always runs first.
                for k in 0..3 {
                    let which = (k + round as usize) % 3;
                    let m = match which {
                        0 => measure(&mut t.sysbench(workload, "run", threads), args.seconds),
                        1 => measure(&mut t.dbsweep(&script, "run", threads), args.seconds),
                        _ => measure(&mut t.dbsweep(workload, "run", threads), args.seconds),
                    };
                    sum[which].add(m, n);
                }
            }
            let [sb, lua, nat] = sum;
            println!(
                "{workload:<18} {threads:>3} {:>10.0} {:>10.0} {:>10.0} {:>9.2} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>8.2}",
                sb.qps,
                lua.qps,
                nat.qps,
                sb.cpu(),
                lua.cpu(),
                nat.cpu(),
                lua.cpu() / sb.cpu(),
                nat.cpu() / sb.cpu(),
                t.floor() / sb.cpu()
            );
        }
    }
}
