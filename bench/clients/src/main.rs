//! dbsweep's own wire clients (pgwire, mywire) against the well-kept crate clients (`postgres`,
//! `mysql`) on the same managed server, in the same run: a point select by primary key,
//! prepared once, its one row fetched and its text read, the clients alternating round by round.
//! Prints each client's queries/s and CPU microseconds per query (the measuring thread's own
//! CPU time, user and system), and the ratios own/crate (medians over rounds): why the clients
//! that measure are dbsweep's own (README "Clients").

use std::time::Instant;

use dbsweep::db::{OpenOptions, Param};
use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};

const ROWS: i64 = 10_000;

fn main() {
    let mut queries: u64 = 20_000;
    let mut rounds: usize = 3;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next().unwrap_or_default();
        let n: u64 = value.parse().unwrap_or_else(|_| usage(&a));
        match a.as_str() {
            "--queries" => queries = n.max(1),
            "--rounds" => rounds = (n as usize).max(1),
            _ => usage(&a),
        }
    }
    println!(
        "point select by primary key, prepared, its row read; {queries} queries a client a round, {rounds} round(s); CPU = the process's user + system time (its one working thread, and any helper the crate runs)"
    );
    println!(
        "{:<10} {:<8} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "server", "client", "qps", "us/q", "user us/q", "sys us/q", "server us/q"
    );
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        let server = ManagedServer::start(&ServerSpec::new(kind))
            .unwrap_or_else(|e| panic!("starting a managed {kind:?}: {e}"));
        load(&server.url);
        let mut own = Vec::new();
        let mut theirs = Vec::new();
        for round in 0..rounds {
            // Alternate which goes first: drift favours neither.
            let (a, b) = if round % 2 == 0 {
                (
                    own_client(&server, queries),
                    crate_client(kind, &server, queries),
                )
            } else {
                let b = crate_client(kind, &server, queries);
                (own_client(&server, queries), b)
            };
            own.push(a);
            theirs.push(b);
        }
        let name = if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mariadb"
        };
        let crate_name = if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mysql"
        };
        let o = median(&own);
        let t = median(&theirs);
        for (who, m) in [("dbsweep", o), (crate_name, t)] {
            println!(
                "{name:<10} {who:<8} {:>10.0} {:>10.2} {:>10.2} {:>10.2} {:>12.2}",
                m.qps, m.cpu_us, m.user_us, m.sys_us, m.server_us
            );
        }
        println!(
            "{name:<10} own/{crate_name}: qps {:.2}, CPU per query {:.2} (user {:.2}, system {:.2}), server CPU per query {:.2}",
            o.qps / t.qps,
            o.cpu_us / t.cpu_us,
            o.user_us / t.user_us,
            o.sys_us / t.sys_us,
            o.server_us / t.server_us
        );
    }
}

fn usage(arg: &str) -> ! {
    eprintln!("clients-bench: unknown or bad option {arg:?}; use --queries N, --rounds N");
    std::process::exit(2);
}

#[derive(Clone, Copy, Default)]
struct Figures {
    qps: f64,
    cpu_us: f64,
    user_us: f64,
    sys_us: f64,
    /// The server's CPU per query (all its processes): a client's protocol choices move it.
    server_us: f64,
}

/// Each figure's median over the rounds.
fn median(all: &[Figures]) -> Figures {
    let m = |f: fn(&Figures) -> f64| {
        let mut v: Vec<f64> = all.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Figures {
        qps: m(|f| f.qps),
        cpu_us: m(|f| f.cpu_us),
        user_us: m(|f| f.user_us),
        sys_us: m(|f| f.sys_us),
        server_us: m(|f| f.server_us),
    }
}

/// The calling thread's user and system CPU time, in microseconds.
fn thread_cpu() -> (f64, f64) {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    (us(u.ru_utime), us(u.ru_stime))
}

/// The CPU time of the managed server in `dir` in microseconds: every process whose command
/// line names the directory, and their children (PostgreSQL's backends).
fn server_cpu(dir: &std::path::Path) -> f64 {
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let dir = dir.to_string_lossy().into_owned();
    let mut procs = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state, ppid, ..., utime (14th), stime.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let named = String::from_utf8_lossy(&cmd).contains(&dir);
        procs.push((pid, num(1) as u32, num(11) + num(12), named));
    }
    let roots: Vec<u32> = procs.iter().filter(|p| p.3).map(|p| p.0).collect();
    let ticks: f64 = procs
        .iter()
        .filter(|p| p.3 || roots.contains(&p.1))
        .map(|p| p.2)
        .sum();
    ticks / tick * 1e6
}

/// Times `n` calls of `one` (with the query's id) against the server in `dir`: qps and CPU
/// per query, the client's and the server's.
fn timed(dir: &std::path::Path, n: u64, mut one: impl FnMut(i64)) -> Figures {
    let mut id: i64 = 1;
    let server0 = server_cpu(dir);
    let (u0, s0) = thread_cpu();
    let start = Instant::now();
    for _ in 0..n {
        // A fixed stride through the table: every row, no random number generator's cost.
        id = (id + 7919) % ROWS + 1;
        one(id);
    }
    let secs = start.elapsed().as_secs_f64();
    let (u1, s1) = thread_cpu();
    let server = server_cpu(dir) - server0;
    let q = n as f64;
    Figures {
        qps: q / secs,
        cpu_us: (u1 - u0 + s1 - s0) / q,
        user_us: (u1 - u0) / q,
        sys_us: (s1 - s0) / q,
        server_us: server / q,
    }
}

/// The table: `ROWS` rows of an id and 120 characters, as sysbench's `c`.
fn load(url: &str) {
    let target = dbsweep::db::open(url, OpenOptions::default()).expect("the server's URL");
    let mut c = target.connect().expect("connecting");
    let _ = c.batch("DROP TABLE IF EXISTS clients_bench");
    c.batch("CREATE TABLE clients_bench (id INT PRIMARY KEY, c CHAR(120) NOT NULL)")
        .expect("create");
    for chunk in (1..=ROWS).collect::<Vec<_>>().chunks(1000) {
        let values: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, '{:0>120}')", i * 31))
            .collect();
        c.batch(&format!(
            "INSERT INTO clients_bench VALUES {}",
            values.join(",")
        ))
        .expect("insert");
    }
}

fn own_client(server: &ManagedServer, n: u64) -> Figures {
    let target = dbsweep::db::open(&server.url, OpenOptions::default()).expect("the server's URL");
    let mut c = target.connect().expect("connecting");
    let stmt = c
        .prepare("SELECT c FROM clients_bench WHERE id = ?")
        .expect("prepare");
    timed(&server.dir, n, |id| {
        let rows = c.query(stmt, &[Param::Int(id)]).expect("query");
        assert_eq!(rows, 1);
    })
}

fn crate_client(kind: ServerKind, server: &ManagedServer, n: u64) -> Figures {
    match kind {
        ServerKind::Postgres => {
            let mut c = postgres::Client::connect(
                &format!(
                    "host=127.0.0.1 port={} user=sbtest dbname=sbtest",
                    server.port
                ),
                postgres::NoTls,
            )
            .expect("connecting (postgres crate)");
            let stmt = c
                .prepare("SELECT c FROM clients_bench WHERE id = $1")
                .expect("prepare");
            timed(&server.dir, n, |id| {
                let row = c.query_one(&stmt, &[&(id as i32)]).expect("query");
                let text: &str = row.get(0);
                assert_eq!(text.len(), 120);
            })
        }
        _ => {
            use mysql::prelude::Queryable;
            let opts = mysql::OptsBuilder::new()
                .ip_or_hostname(Some("127.0.0.1"))
                .tcp_port(server.port)
                .user(Some("sbtest"))
                .db_name(Some("sbtest"))
                // Over TCP as dbsweep: the crate otherwise asks the server for its socket and
                // moves there, which costs both sides less (README: --server-socket).
                .prefer_socket(false);
            let mut c = mysql::Conn::new(opts).expect("connecting (mysql crate)");
            let stmt = c
                .prep("SELECT c FROM clients_bench WHERE id = ?")
                .expect("prepare");
            timed(&server.dir, n, |id| {
                let text: Option<String> = c.exec_first(&stmt, (id,)).expect("query");
                assert_eq!(text.map(|t| t.len()), Some(120));
            })
        }
    }
}
