//! bench/loads: every load of dbsweep against the server's own bulk path, and against the
//! peers' loaders, on the same managed servers, side by side in one go.
//!
//! For a managed PostgreSQL and a managed MariaDB (2 GB buffer pool: the rows are measured, not
//! the disk), each load runs as a user runs it (`dbsweep prepare ...`, `dbsweep tpcc prepare`,
//! `dbsweep pgbench -i`), timed from the process's start to its end. Then the rows it left are
//! written to files on the server's host (`COPY ... TO`, `SELECT ... INTO OUTFILE`; not timed),
//! the tables emptied and their indexes dropped, and the server's own path loads the same
//! files: one session per table at once (`COPY ... FROM`, `LOAD DATA INFILE`), then the same
//! indexes (PostgreSQL: every index, the primary keys too, after the rows; InnoDB keeps its
//! primary key, the table's own order, and builds the secondary ones after), then what the
//! client does after its rows (PostgreSQL: ANALYZE, or VACUUM ANALYZE for pgbench's tables).
//! The rows are counted after each path: they must be the same.
//!
//! Each client's seconds are those of its load as it says them (dbsweep's load line: from the
//! first table's creation to the statistics after the rows; pgbench's "done in"), sysbench's
//! prepare its process's (it says none).
//!
//! Printed for each load: its rows, dbsweep's seconds and rows/s, the server path's seconds,
//! `db/srv` (the server path's time over dbsweep's: dbsweep's speed as a share of the server's;
//! target >= 0.8), dbsweep's own CPU share of its wall time (the client is not the bottleneck),
//! and, where a peer loads the same tables (sysbench's prepare, pgbench's `-i`), the peer's
//! seconds and `db/peer` (the peer's time over dbsweep's; target > 1), and the server's CPU
//! seconds during each path (its processes', the ended sessions' too; dbsweep's over its whole
//! process: TPC-C's consistency checks after the load are in it). Medians over rounds.
//! The Insert Benchmark's load is its phase l.i0 (100-row inserts, each its own transaction, as
//! the original's iq.sh runs it): its pace is the benchmark's figure, not a bulk load, and its
//! row says so instead of a verdict.
//!
//!     cargo bench --bench loads -- [--rounds 1] [--servers postgres,mariadb]
//!        [--loads sysbench,tpcc,linkbench,ibench,pgbench] [--tables 4] [--table-size 1000000]
//!        [--warehouses 4] [--nodes 200000] [--ibench-rows 200000] [--scale 40]

use std::process::Command;
use std::time::Instant;

use clap::Parser;
use dbsweep::db::{Conn, OpenOptions};
use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    #[arg(long, value_delimiter = ',', default_value = "postgres,mariadb",
          value_parser = ["postgres", "mariadb"])]
    servers: Vec<String>,
    #[arg(long, value_delimiter = ',', default_value = "sysbench,tpcc,linkbench,ibench,pgbench",
          value_parser = ["sysbench", "tpcc", "linkbench", "ibench", "pgbench"])]
    loads: Vec<String>,
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    tables: u32,
    #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    table_size: u64,
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    warehouses: u32,
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    nodes: u64,
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    ibench_rows: u64,
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..))]
    scale: u32,
    /// cargo passes `--bench` to every bench target
    #[arg(long, hide = true)]
    bench: bool,
}

/// The pgbench 15 binaries (Debian's layout), else PATH's.
fn pgbench_bin() -> String {
    let debian = "/usr/lib/postgresql/15/bin/pgbench";
    if std::path::Path::new(debian).is_file() {
        debian.into()
    } else {
        "pgbench".into()
    }
}

/// One load: how dbsweep runs it, its tables, its peer's command (if any), and what follows
/// the rows on PostgreSQL.
struct Load {
    name: &'static str,
    dbsweep: Vec<String>,
    tables: Vec<String>,
    peer: Option<(&'static str, Command)>,
    pg_after: &'static str,
    /// A bulk load (held to the target), or a benchmark's own measured phase.
    bulk: bool,
}

fn loads(a: &Args, kind: ServerKind, s: &ManagedServer) -> Vec<Load> {
    let url = s.url.clone();
    let own = |w: &[&str]| -> Vec<String> {
        w.iter()
            .map(|x| x.to_string())
            .chain(["--target".into(), url.clone()])
            .collect()
    };
    let sysbench_tables: Vec<String> = (1..=a.tables).map(|n| format!("sbtest{n}")).collect();
    let mut out = Vec::new();
    for name in &a.loads {
        match name.as_str() {
            "sysbench" => {
                let (driver, p) = if kind == ServerKind::Postgres {
                    ("pgsql", "pgsql")
                } else {
                    ("mysql", "mysql")
                };
                let mut peer = Command::new("sysbench");
                peer.arg("oltp_read_only").args([
                    format!("--db-driver={driver}"),
                    format!("--{p}-host=127.0.0.1"),
                    format!("--{p}-port={}", s.port),
                    format!("--{p}-user=sbtest"),
                    format!("--{p}-db=sbtest"),
                    format!("--tables={}", a.tables),
                    format!("--table-size={}", a.table_size),
                    format!("--threads={}", a.tables),
                    "prepare".into(),
                ]);
                out.push(Load {
                    name: "sysbench tables",
                    dbsweep: own(&[
                        "prepare",
                        "oltp_read_only",
                        &format!("--tables={}", a.tables),
                        &format!("--table-size={}", a.table_size),
                        &format!("--threads={}", a.tables),
                    ]),
                    tables: sysbench_tables.clone(),
                    peer: Some(("sysbench prepare", peer)),
                    pg_after: "ANALYZE",
                    bulk: true,
                });
            }
            "tpcc" => out.push(Load {
                name: "TPC-C",
                dbsweep: own(&[
                    "tpcc",
                    "prepare",
                    &format!("--warehouses={}", a.warehouses),
                    &format!("--threads={}", a.warehouses),
                ]),
                tables: dbsweep::workload::tpcc::schema::TABLES
                    .map(String::from)
                    .to_vec(),
                peer: None,
                pg_after: "ANALYZE",
                bulk: true,
            }),
            "linkbench" => out.push(Load {
                name: "LinkBench",
                dbsweep: own(&[
                    "prepare",
                    "linkbench_synthetic",
                    &format!("--nodes={}", a.nodes),
                    "--threads=4",
                ]),
                tables: dbsweep::workload::linkbench::TABLES
                    .map(String::from)
                    .to_vec(),
                peer: None,
                pg_after: "ANALYZE",
                bulk: true,
            }),
            "ibench" => out.push(Load {
                name: "Insert Benchmark l.i0",
                dbsweep: own(&[
                    "prepare",
                    "ibench_insert",
                    &format!("--table-size={}", a.ibench_rows),
                ]),
                tables: vec![dbsweep::workload::ibench::TABLE.into()],
                peer: None,
                pg_after: "ANALYZE",
                bulk: false,
            }),
            "pgbench" if kind == ServerKind::Postgres => {
                let conn = |c: &mut Command| {
                    c.args(["-i", "-q", "-s", &a.scale.to_string()]).args([
                        "-h",
                        "127.0.0.1",
                        "-p",
                        &s.port.to_string(),
                        "-U",
                        "sbtest",
                        "sbtest",
                    ]);
                };
                let mut peer = Command::new(pgbench_bin());
                conn(&mut peer);
                let mut ours = vec!["pgbench".to_string()];
                let mut words = Command::new("x");
                conn(&mut words);
                ours.extend(words.get_args().map(|w| w.to_string_lossy().into_owned()));
                out.push(Load {
                    name: "pgbench -i",
                    dbsweep: ours,
                    tables: ["pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"]
                        .map(String::from)
                        .to_vec(),
                    peer: Some(("pgbench -i", peer)),
                    pg_after: "VACUUM ANALYZE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history",
                    bulk: true,
                });
            }
            _ => {}
        }
    }
    out
}

fn connect(url: &str) -> Box<dyn Conn> {
    let target = dbsweep::db::open(url, OpenOptions::default()).expect("the server's URL");
    target
        .connect()
        .expect("a connection to the managed server")
}

fn batch(c: &mut dyn Conn, sql: &str) {
    c.batch(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn rows(c: &mut dyn Conn, sql: &str, n: usize) -> Vec<Vec<String>> {
    c.query_rows(sql, n)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(|r| r.into_iter().map(Option::unwrap_or_default).collect())
        .collect()
}

fn count(c: &mut dyn Conn, table: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM {table}");
    c.query_i64(&sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or(0)
}

/// Runs `cmd` to its end: the seconds of its load as it says them (dbsweep's load line,
/// "Loaded ... in X s", from the first table's creation to its after-load statement, without
/// the process's start or the checks after; pgbench's "done in X s"), else its wall seconds;
/// and the CPU seconds dbsweep says it used, where it says.
fn timed(cmd: &mut Command, what: &str) -> (f64, Option<f64>) {
    let start = Instant::now();
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let wall = start.elapsed().as_secs_f64();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    let number = |t: &str| {
        t.trim_start()
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()
            .and_then(|v| v.parse::<f64>().ok())
    };
    let said = text
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("Loaded ")?;
            number(rest.split(" in ").nth(1)?)
        })
        .or_else(|| {
            text.lines()
                .find_map(|l| number(l.trim_start().strip_prefix("done in ")?))
        });
    let cpu = text.split("dbsweep used ").nth(1).and_then(number);
    (said.unwrap_or(wall), cpu)
}

/// An index to build again after the server path's rows: its statement, and how to drop it.
struct Index {
    drop: String,
    create: String,
}

/// The indexes the server's path builds after the rows (see the header).
fn indexes(kind: ServerKind, c: &mut dyn Conn, table: &str) -> Vec<Index> {
    if kind == ServerKind::Postgres {
        let mut out: Vec<Index> = rows(
            c,
            &format!(
                "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint \
                 WHERE conrelid = '{table}'::regclass AND contype IN ('p', 'u')"
            ),
            2,
        )
        .into_iter()
        .map(|r| Index {
            drop: format!("ALTER TABLE {table} DROP CONSTRAINT {}", r[0]),
            create: format!("ALTER TABLE {table} ADD CONSTRAINT {} {}", r[0], r[1]),
        })
        .collect();
        out.extend(
            rows(
                c,
                &format!(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = '{table}' \
                     AND indexname NOT IN (SELECT conname FROM pg_constraint \
                     WHERE conrelid = '{table}'::regclass)"
                ),
                2,
            )
            .into_iter()
            .map(|r| Index {
                drop: format!("DROP INDEX {}", r[0]),
                create: r[1].clone(),
            }),
        );
        out
    } else {
        rows(
            c,
            &format!(
                "SELECT index_name, MIN(non_unique), GROUP_CONCAT(CONCAT('`', column_name, '`', \
                 IF(sub_part IS NULL, '', CONCAT('(', sub_part, ')'))) ORDER BY seq_in_index) \
                 FROM information_schema.statistics WHERE table_schema = DATABASE() \
                 AND table_name = '{table}' AND index_name <> 'PRIMARY' GROUP BY index_name"
            ),
            3,
        )
        .into_iter()
        .map(|r| Index {
            drop: format!("ALTER TABLE {table} DROP INDEX `{}`", r[0]),
            create: format!(
                "ALTER TABLE {table} ADD {}INDEX `{}` ({})",
                if r[1] == "0" { "UNIQUE " } else { "" },
                r[0],
                r[2]
            ),
        })
        .collect()
    }
}

/// The server's own path for `load`'s tables, as loaded now: writes their rows to files in
/// `dir`, empties them, drops the indexes, then times the load of the files (a session per
/// table at once) with the indexes and the after-load statement. Its seconds.
fn server_path(kind: ServerKind, url: &str, dir: &std::path::Path, load: &Load) -> f64 {
    let mut c = connect(url);
    let mut plan = Vec::new();
    for t in &load.tables {
        let file = dir.join(format!("{t}.rows"));
        let _ = std::fs::remove_file(&file);
        let f = file.display();
        let (dump, fill) = if kind == ServerKind::Postgres {
            (format!("COPY {t} TO '{f}'"), format!("COPY {t} FROM '{f}'"))
        } else {
            (
                format!("SELECT * INTO OUTFILE '{f}' FROM {t}"),
                format!("LOAD DATA INFILE '{f}' INTO TABLE {t}"),
            )
        };
        if kind == ServerKind::Postgres {
            batch(c.as_mut(), &dump);
        } else {
            rows(c.as_mut(), &dump, 1);
        }
        let idx = indexes(kind, c.as_mut(), t);
        for i in &idx {
            batch(c.as_mut(), &i.drop);
        }
        batch(c.as_mut(), &format!("TRUNCATE TABLE {t}"));
        plan.push((fill, idx));
    }
    drop(c);
    let start = Instant::now();
    std::thread::scope(|s| {
        for (fill, idx) in &plan {
            s.spawn(move || {
                let mut c = connect(url);
                if kind == ServerKind::Postgres {
                    batch(c.as_mut(), fill);
                } else {
                    rows(c.as_mut(), fill, 1);
                }
                for i in idx {
                    batch(c.as_mut(), &i.create);
                }
            });
        }
    });
    if kind == ServerKind::Postgres {
        batch(connect(url).as_mut(), load.pg_after);
    }
    start.elapsed().as_secs_f64()
}

/// Drops `tables` (before the next load of them).
fn drop_tables(url: &str, tables: &[String]) {
    let mut c = connect(url);
    for t in tables {
        batch(c.as_mut(), &format!("DROP TABLE IF EXISTS {t}"));
    }
}

/// The CPU seconds the server's processes have used, the ended ones too (the postmaster, or
/// mysqld, counts its reaped children's: a load's sessions end with it).
fn server_cpu(s: &ManagedServer) -> f64 {
    let ticks = 100.0; // USER_HZ
    let Some(root) = s.pid() else { return f64::NAN };
    dbsweep::server::process_tree(root)
        .iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| {
            // After the command's closing parenthesis: utime is the 12th field, then stime,
            // cutime, cstime.
            let rest = stat.rsplit_once(')')?.1;
            let f: Vec<f64> = rest
                .split_whitespace()
                .skip(11)
                .take(4)
                .filter_map(|v| v.parse().ok())
                .collect();
            Some(f.iter().sum::<f64>())
        })
        .sum::<f64>()
        / ticks
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn main() {
    let args = Args::parse();
    let bin = env!("CARGO_BIN_EXE_dbsweep");
    println!(
        "{:<10}{:<23}{:>11}{:>8}{:>10}{:>8}{:>8}{:>10}{:>8}{:>8}",
        "server",
        "load",
        "rows",
        "db s",
        "rows/s",
        "srv s",
        "db/srv",
        "db cpu%",
        "peer s",
        "db/peer"
    );
    let mut verdicts = Vec::new();
    for server in &args.servers {
        let kind = if server == "postgres" {
            ServerKind::Postgres
        } else {
            ServerKind::Mariadb
        };
        let mut spec = ServerSpec::new(kind);
        if kind == ServerKind::Mariadb {
            spec.settings = vec![("innodb_buffer_pool_size".into(), "2G".into())];
        }
        let s = ManagedServer::start(&spec).expect("a managed server");
        let url = s.url.split('?').next().unwrap_or_default().to_string();
        // Files on the server's host that its own process reads and writes.
        let dir = tempfile::Builder::new()
            .prefix("dbsweep-loads-")
            .tempdir()
            .expect("a directory for the rows");
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .expect("chmod the rows' directory");
        for mut load in loads(&args, kind, &s) {
            let (mut db, mut srv, mut cpu, mut peer) = (vec![], vec![], vec![], vec![]);
            let (mut srv_cpu_db, mut srv_cpu_srv) = (vec![], vec![]);
            let mut loaded = 0;
            for round in 0..args.rounds {
                let peer_first = round % 2 == 1;
                let mut run_peer = |load: &mut Load| {
                    if let Some((what, cmd)) = &mut load.peer {
                        drop_tables(&url, &load.tables);
                        peer.push(timed(cmd, what).0);
                    }
                };
                if peer_first {
                    run_peer(&mut load);
                }
                drop_tables(&url, &load.tables);
                let before = server_cpu(&s);
                let (s_db, c_db) = timed(Command::new(bin).args(&load.dbsweep), load.name);
                srv_cpu_db.push(server_cpu(&s) - before);
                let mut c = connect(&url);
                let counts: Vec<i64> = load.tables.iter().map(|t| count(c.as_mut(), t)).collect();
                drop(c);
                loaded = counts.iter().sum::<i64>();
                db.push(s_db);
                cpu.push(c_db.map_or(f64::NAN, |c| 100.0 * c / s_db));
                let before = server_cpu(&s);
                srv.push(server_path(kind, &url, dir.path(), &load));
                srv_cpu_srv.push(server_cpu(&s) - before);
                let mut c = connect(&url);
                let again: Vec<i64> = load.tables.iter().map(|t| count(c.as_mut(), t)).collect();
                assert_eq!(
                    counts, again,
                    "{}: the server's path loaded other rows",
                    load.name
                );
                if !peer_first {
                    run_peer(&mut load);
                }
            }
            drop_tables(&url, &load.tables);
            let (db, srv) = (median(db), median(srv));
            let peer = (!peer.is_empty()).then(|| median(peer));
            let ratio = srv / db;
            println!(
                "{:<10}{:<23}{:>11}{:>8.1}{:>10.0}{:>8.1}{:>8.2}{:>10.0}{:>8}{:>8}{:>15}",
                server,
                load.name,
                loaded,
                db,
                loaded as f64 / db,
                srv,
                ratio,
                median(cpu),
                peer.map_or("-".into(), |p| format!("{p:.1}")),
                peer.map_or("-".into(), |p| format!("{:.2}", p / db)),
                format!("{:.1} / {:.1}", median(srv_cpu_db), median(srv_cpu_srv)),
            );
            if load.bulk {
                verdicts.push(format!(
                    "{server} {}: db/srv {ratio:.2} (target >= 0.80: {}){}",
                    load.name,
                    if ratio >= 0.8 { "met" } else { "NOT met" },
                    peer.map_or(String::new(), |p| format!(
                        ", db/peer {:.2} (target > 1: {})",
                        p / db,
                        if p > db { "met" } else { "NOT met" }
                    ))
                ));
            } else {
                verdicts.push(format!(
                    "{server} {}: db/srv {ratio:.2} (the benchmark's own measured phase, not a bulk load: no target)",
                    load.name
                ));
            }
        }
        drop(s);
    }
    println!();
    for v in verdicts {
        println!("{v}");
    }
}
