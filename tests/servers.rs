//! Against real PostgreSQL and MariaDB servers that the tests start themselves (managed
//! servers). A missing server binary fails these tests; `scripts/test` installs them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use dbsweep::server::{ManagedServer, ServerKind};
use predicates::prelude::*;

use crate::util::{
    Scratch, assert_valid_results, dbsweep, read_json, start, start_with, sysbench_connection, u,
};

/// `dbsweep <args> --target <server>`.
fn on(server: &ManagedServer, args: &[&str]) -> assert_cmd::Command {
    let mut c = dbsweep();
    c.args(args)
        .args(["--target", &server.url, "--report-interval", "0"]);
    c
}

fn run_json(server: &ManagedServer, s: &Scratch, args: &[&str]) -> serde_json::Value {
    let out = s.path("r.json");
    on(server, args)
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    read_json(&out)
}

const N: u64 = 100;

/// Runs N events of `workload` on the 2 x 1000-row tables with `extra` options; returns the
/// results file and its read, write and other query counts.
fn run_n_events(
    server: &ManagedServer,
    s: &Scratch,
    workload: &str,
    extra: &[&str],
) -> (serde_json::Value, (u64, u64, u64)) {
    let n = N.to_string();
    let mut args = vec![
        "run",
        workload,
        "--tables",
        "2",
        "--table-size",
        "1000",
        "--events",
        &n,
        "--time",
        "0",
    ];
    args.extend_from_slice(extra);
    let r = run_json(server, s, &args);
    let got = (
        u(&r, "/queries/read"),
        u(&r, "/queries/write"),
        u(&r, "/queries/other"),
    );
    (r, got)
}

per_server!(every_workload_has_exact_counts, |kind| {
    exact_counts(kind, start(kind));
});

// Issue 20: the same over TLS, on a server that requires it.
per_server!(every_workload_has_exact_counts_over_tls, |kind| {
    let server = crate::util::start_tls(kind);
    exact_counts(kind, server);
});

fn exact_counts(kind: ServerKind, server: ManagedServer) {
    let tls = server.url.contains("ssl");
    let s = Scratch::new();
    on(
        &server,
        &[
            "prepare",
            "oltp_read_write",
            "--tables",
            "2",
            "--table-size",
            "1000",
            "--threads",
            "2",
        ],
    )
    .assert()
    .success();
    type Case<'a> = (&'a str, &'a [&'a str], (u64, u64, u64));
    let cases: &[Case] = &[
        ("oltp_point_select", &[], (1, 0, 0)),
        ("oltp_point_select", &["--ps-mode", "disable"], (1, 0, 0)),
        ("oltp_read_only", &[], (14, 0, 2)),
        ("oltp_read_only", &["--skip-trx"], (14, 0, 0)),
        ("oltp_read_write", &[], (14, 4, 2)),
        ("oltp_read_write", &["--ps-mode", "disable"], (14, 4, 2)),
        ("oltp_write_only", &[], (0, 4, 2)),
        ("oltp_update_index", &[], (0, 1, 0)),
        ("oltp_update_non_index", &[], (0, 1, 0)),
        ("oltp_insert", &[], (0, 1, 0)),
        ("oltp_insert", &["--auto-inc=off"], (0, 1, 0)),
        ("select_random_points", &[], (1, 0, 0)),
        ("select_random_ranges", &[], (1, 0, 0)),
        ("oltp_inlist_select", &[], (1, 0, 0)),
        ("oltp_points_covered", &["--on-id=off"], (1, 0, 0)),
        ("oltp_range_covered", &["--covered=off"], (1, 0, 0)),
        ("oltp_scan", &[], (1, 0, 0)),
        ("oltp_inlist_update", &[], (0, 1, 0)),
        ("oltp_inlist_update", &["--ps-mode", "disable"], (0, 1, 0)),
        ("oltp_read_only_count", &[], (1, 0, 0)),
        ("update-one", &[], (0, 1, 0)),
        ("update-zipf", &[], (0, 1, 0)),
    ];
    for (workload, extra, (rd, wr, ot)) in cases {
        let (r, got) = run_n_events(&server, &s, workload, extra);
        assert_eq!(
            got,
            (rd * N, wr * N, ot * N),
            "{kind:?} {workload} {extra:?}"
        );
        assert_eq!(u(&r, "/events"), N);
    }
    let (r, (_, written, other)) = run_n_events(&server, &s, "oltp_delete", &[]);
    assert_eq!(written + other, N);
    assert_valid_results(&r);
    assert_eq!(
        r["target"]["kind"],
        if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mysql"
        }
    );
    assert!(
        !r["target"]["settings"].as_object().unwrap().is_empty(),
        "server settings are saved"
    );
    assert_eq!(r["target"]["tls"].is_string(), tls, "{}", r["target"]);
    on(&server, &["cleanup", "oltp_read_write", "--tables", "2"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Dropped 2 table(s)"));
    on(&server, &["run", "oltp_read_only", "--tables", "2"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("sbtest1 does not exist"));
}

/// The server's Unix socket as a target URL: the socket directory as PostgreSQL's host, the
/// socket file as MySQL's `?socket=`.
fn unix_url(kind: ServerKind, server: &ManagedServer) -> String {
    if kind == ServerKind::Postgres {
        let dir = server.dir.display().to_string().replace('/', "%2F");
        format!("postgres://sbtest@{dir}:{}/sbtest", server.port)
    } else {
        let sock = server.dir.join("mysqld.sock");
        format!("mysql://sbtest@localhost/sbtest?socket={}", sock.display())
    }
}

// Over the Unix socket (no TCP listener is named, so a fallback to TCP would fail to connect):
// prepare and a read/write run with exact counts, with and without server-side statements.
per_server!(unix_socket_targets_run_with_exact_counts, |kind| {
    let server = start(kind);
    let s = Scratch::new();
    let url = unix_url(kind, &server);
    let n = N.to_string();
    let common = ["--tables", "2", "--table-size", "1000", "--target", &url];
    dbsweep()
        .arg("prepare")
        .arg("oltp_read_write")
        .args(common)
        .assert()
        .success()
        .stdout(predicates::str::contains("Loaded 2000 rows"));
    for ps in ["auto", "disable"] {
        let out = s.path(&format!("unix-{ps}.json"));
        dbsweep()
            .args(["run", "oltp_read_write", "--threads", "2", "--events", &n])
            .args(["--time", "0", "--report-interval", "0", "--ps-mode", ps])
            .args(common)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        let r = read_json(&out);
        let (read, write, other) = (
            u(&r, "/queries/read"),
            u(&r, "/queries/write"),
            u(&r, "/queries/other"),
        );
        // Every event's 20 statements, exactly. As sysbench counts, a DML that changed no row
        // is "other": two clients' delete/insert pairs on one id can make a DELETE find its row
        // gone (PostgreSQL re-checks it after the other's commit), so the 4 writes and 2
        // others of an event may trade places.
        assert_eq!(read, 14 * N, "{kind:?} --ps-mode {ps}");
        assert_eq!(write + other, 6 * N, "{kind:?} --ps-mode {ps}");
        assert!(
            other >= 2 * N && write >= 4 * N - N / 10,
            "{kind:?} --ps-mode {ps}: {write} writes, {other} others"
        );
    }
});

per_server!(
    server_socket_connects_managed_servers_over_unix_sockets,
    |kind| {
        // The server itself tells how each client is connected.
        let s = Scratch::new();
        let script = s.path("how.lua");
        let sql = if kind == ServerKind::Postgres {
            "SELECT COALESCE(host(inet_client_addr()), 'unix socket')"
        } else {
            // A TCP client's host has its port: `127.0.0.1:PORT` or, resolved, `localhost:PORT`.
            "SELECT IF(host LIKE '%:%', host, 'unix socket') FROM information_schema.processlist WHERE id = CONNECTION_ID()"
        };
        std::fs::write(
        &script,
        format!(
            "function thread_init()\n  con = sysbench.sql.driver():connect()\nend\nfunction event()\n  print('connected by ' .. con:query_row(\"{sql}\"))\nend\n"
        ),
    )
    .unwrap();
        let server = if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mariadb"
        };
        for socket in [true, false] {
            let out = s.path(&format!("how-{socket}.json"));
            let mut c = dbsweep();
            c.args(["run", script.to_str().unwrap(), "--server", server])
                .args(["--events", "2", "--time", "0", "--report-interval", "0"])
                .arg("--output")
                .arg(&out);
            if socket {
                c.arg("--server-socket");
            }
            let run = c.assert().success();
            let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
            let said: Vec<&str> = stdout
                .lines()
                .filter_map(|l| l.strip_prefix("connected by "))
                .collect();
            assert_eq!(said.len(), 2, "{stdout}");
            assert!(
                said.iter().all(|h| (*h == "unix socket") == socket),
                "{kind:?} socket {socket}: {stdout}"
            );
            let url = read_json(&out)["target"]["url"]
                .as_str()
                .unwrap()
                .to_string();
            assert_eq!(url.contains("127.0.0.1"), !socket, "{url}");
        }
    }
);

/// The file system type of `dir`, as stat(1) names it (`tmpfs`, `ext2/ext3`, ...).
fn fs_type(dir: &str) -> String {
    let out = Command::new("stat")
        .args(["-f", "-c", "%T", dir])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_managed_server_in_memory_is_warned_about() {
    // Figures of IO from a data directory on tmpfs measure memory: the user is told.
    assert_eq!(
        fs_type("/dev/shm"),
        "tmpfs",
        "this test needs /dev/shm on tmpfs"
    );
    let warned = |tmpdir: Option<&str>| {
        let mut c = dbsweep();
        c.args(["prepare", "oltp_point_select", "--server", "postgres"])
            .args(["--table-size", "100"]);
        if let Some(d) = tmpdir {
            c.env("TMPDIR", d);
        }
        let out = c.assert().success();
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        stderr.contains("is in memory (tmpfs)")
    };
    assert!(warned(Some("/dev/shm")));
    let tmp = std::env::temp_dir();
    let tmp = tmp.to_str().unwrap();
    assert_eq!(
        warned(None),
        fs_type(tmp) == "tmpfs",
        "temporary directory {tmp}"
    );
}

per_server!(
    prepare_refuses_loaded_tables_and_bulk_insert_appends,
    |kind| {
        let server = start(kind);
        let s = Scratch::new();
        on(
            &server,
            &["prepare", "oltp_read_only", "--table-size", "500"],
        )
        .assert()
        .success()
        .stdout(predicates::str::contains("Loaded 500 rows"));
        on(
            &server,
            &["prepare", "oltp_read_only", "--table-size", "500"],
        )
        .assert()
        .code(2)
        .stderr(predicates::str::contains("already holds rows"));
        on(&server, &["cleanup", "oltp_read_only"])
            .assert()
            .success();
        on(&server, &["prepare", "bulk_insert", "--threads", "2"])
            .assert()
            .success();
        let r = run_json(
            &server,
            &s,
            &[
                "run",
                "bulk_insert",
                "--threads",
                "2",
                "--events",
                "3000",
                "--time",
                "0",
            ],
        );
        assert_eq!(u(&r, "/queries/write"), 3000);
    }
);

per_server!(conflicting_transactions_are_retried_and_counted, |kind| {
    // PostgreSQL looks for deadlocks after deadlock_timeout (1 s by default): shortened here so
    // that the test does not wait a second per deadlock.
    let server = if kind == ServerKind::Postgres {
        start_with(kind, &[("deadlock_timeout", "10ms")])
    } else {
        start(kind)
    };
    conflicts_are_retried(kind, &server, &[]);
});

/// Four clients writing the same ten rows inside transactions, in random orders: lock
/// conflicts (deadlocks, duplicate keys from delete/insert races) must be retried.
fn conflicts_are_retried(kind: ServerKind, server: &ManagedServer, extra: &[&str]) {
    let s = Scratch::new();
    on(
        server,
        &[
            "prepare",
            "oltp_write_only",
            "--table-size",
            "10",
            "--force",
        ],
    )
    .assert()
    .success();
    let r = run_json(
        server,
        &s,
        &[
            "run",
            "oltp_write_only",
            "--table-size",
            "10",
            "--threads",
            "4",
            "--events",
            "600",
            "--time",
            "0",
            "--index-updates",
            "2",
            "--non-index-updates",
            "2",
        ]
        .iter()
        .chain(extra)
        .copied()
        .collect::<Vec<_>>(),
    );
    assert_eq!(u(&r, "/events"), 600);
    let errors = &r["errors"];
    let retried: u64 = [
        "deadlock",
        "lock_wait_timeout",
        "serialization_failure",
        "duplicate_key",
    ]
    .iter()
    .map(|k| errors[k].as_u64().unwrap())
    .sum();
    assert!(
        retried > 0,
        "{kind:?}: no conflict in 3000 conflicting transactions: {errors}"
    );
    assert_eq!(u(&r, "/retries"), retried);
}

/// The current thread's voluntary context switches: one each time it waits for the server.
/// A TCP proxy in front of the server of `url` for one connection: the URL to connect to
/// instead, and the count of chunks it has received from the client so far (each at least one
/// send of the client's).
fn counting_proxy(url: &str) -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let host = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let upstream_addr = host.to_string();
    let chunks = std::sync::Arc::new(AtomicU64::new(0));
    let counter = chunks.clone();
    std::thread::spawn(move || {
        let (mut client, _) = listener.accept().unwrap();
        let mut server = std::net::TcpStream::connect(&upstream_addr).unwrap();
        let (mut client_back, mut server_back) =
            (client.try_clone().unwrap(), server.try_clone().unwrap());
        // Server to client, as it comes.
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut server_back, &mut client_back);
        });
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match client.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    counter.fetch_add(1, Ordering::SeqCst);
                    if server.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = server.shutdown(std::net::Shutdown::Both);
    });
    (url.replace(host, &format!("127.0.0.1:{port}")), chunks)
}

#[test]
fn pipelined_transactions_count_exactly_retry_and_wait_once() {
    use dbsweep::db::QueryCounts;
    use dbsweep::db::{Count, OpenOptions, Param};
    let server = start_with(ServerKind::Postgres, &[("deadlock_timeout", "10ms")]);
    let s = Scratch::new();
    on(
        &server,
        &[
            "prepare",
            "oltp_read_write",
            "--tables",
            "2",
            "--table-size",
            "1000",
        ],
    )
    .assert()
    .success();
    type Case<'a> = (&'a str, &'a [&'a str], (u64, u64, u64));
    let cases: &[Case] = &[
        ("oltp_read_only", &[], (14, 0, 2)),
        ("oltp_read_only", &["--skip-trx"], (14, 0, 0)),
        ("oltp_read_write", &[], (14, 4, 2)),
        ("oltp_read_write", &["--ps-mode", "disable"], (14, 4, 2)),
        ("oltp_write_only", &["--skip-trx"], (0, 4, 0)),
        ("oltp_point_select", &[], (1, 0, 0)),
        ("oltp_insert", &[], (0, 1, 0)),
    ];
    for (workload, extra, (rd, wr, ot)) in cases {
        let extra = [*extra, &["--pipeline"]].concat();
        let (r, got) = run_n_events(&server, &s, workload, &extra);
        assert_eq!(got, (rd * N, wr * N, ot * N), "{workload} {extra:?}");
        assert_eq!(u(&r, "/events"), N);
        assert_eq!(r["options"]["pipeline"], true, "the results file says so");
        // Queued statements answer together: they are not timed apart.
        assert!(
            r.get("statements").is_none(),
            "{workload}: {}",
            r["statements"]
        );
        assert_valid_results(&r);
    }
    // Workloads whose statements depend on each other's results do not pipeline.
    on(
        &server,
        &["run", "select_random_points", "--pipeline", "--events", "1"],
    )
    .assert()
    .code(2)
    .stderr(predicates::str::contains(
        "select_random_points does not pipeline",
    ));

    // Conflicts inside pipelined transactions are retried as without the pipeline.
    conflicts_are_retried(ServerKind::Postgres, &server, &["--pipeline"]);

    // Through the connection: a statement that fails in the middle of a pipelined transaction
    // is named, nothing of the transaction stays, and the connection goes on.
    on(
        &server,
        &[
            "prepare",
            "oltp_read_write",
            "--tables",
            "1",
            "--table-size",
            "100",
            "--force",
        ],
    )
    .assert()
    .success();
    let open = |pipeline| {
        let o = OpenOptions {
            create: false,
            text_statements: false,
            pipeline,
        };
        dbsweep::db::open(&server.url, o)
            .unwrap()
            .connect()
            .unwrap()
    };
    let mut conn = open(true);
    let bump = conn
        .prepare("UPDATE sbtest1 SET k = k + 1 WHERE id = ?")
        .unwrap();
    let divide = conn
        .prepare("SELECT 1 / ? FROM sbtest1 WHERE id = 1")
        .unwrap();
    let k_sum = "SELECT sum(k) FROM sbtest1 WHERE id IN (1, 2)";
    let before = conn.query_i64(k_sum).unwrap().unwrap();
    let mut q = QueryCounts::default();
    conn.begin(true).unwrap();
    conn.counted(bump, &[Param::Int(1)], Count::Write, &mut q)
        .unwrap();
    conn.counted(divide, &[Param::Int(0)], Count::Read, &mut q)
        .unwrap();
    conn.counted(bump, &[Param::Int(2)], Count::Write, &mut q)
        .unwrap();
    conn.commit().unwrap();
    let e = conn.sync(&mut q).unwrap_err();
    assert_eq!(e.code, "22012", "{e}");
    assert!(e.to_string().contains("SELECT 1 / ?"), "{e}");
    conn.rollback().unwrap();
    assert_eq!(conn.query_i64(k_sum).unwrap().unwrap(), before);
    // The same transaction without the failing statement commits both updates.
    let mut q = QueryCounts::default();
    conn.begin(true).unwrap();
    conn.counted(bump, &[Param::Int(1)], Count::Write, &mut q)
        .unwrap();
    conn.counted(bump, &[Param::Int(2)], Count::Write, &mut q)
        .unwrap();
    conn.commit().unwrap();
    assert_eq!(q.writes, 0, "counted when the results come back");
    conn.sync(&mut q).unwrap();
    assert_eq!(q.writes, 2);
    assert_eq!(conn.query_i64(k_sum).unwrap().unwrap(), before + 2);

    // A client sends once per pipelined transaction, and once per statement without the
    // pipeline (waiting for each answer before the next): counted as the chunks a proxy
    // between client and server receives from the client (the client's context switches
    // were counted before, but an answer back before the client reads costs none, which made
    // that count depend on the machine's load).
    let sends = |pipeline: bool| {
        let (url, chunks) = counting_proxy(&server.url);
        let o = OpenOptions {
            create: false,
            text_statements: false,
            pipeline,
        };
        let mut conn = dbsweep::db::open(&url, o).unwrap().connect().unwrap();
        let point = conn.prepare("SELECT c FROM sbtest1 WHERE id = ?").unwrap();
        let mut q = QueryCounts::default();
        let before = chunks.load(std::sync::atomic::Ordering::SeqCst);
        for _ in 0..50 {
            conn.begin(false).unwrap();
            for id in 1..=10 {
                conn.counted(point, &[Param::Int(id)], Count::Read, &mut q)
                    .unwrap();
            }
            conn.commit().unwrap();
            conn.sync(&mut q).unwrap();
        }
        assert_eq!(q.reads, 500);
        assert_eq!(q.rows, 500);
        chunks.load(std::sync::atomic::Ordering::SeqCst) - before
    };
    let (piped, unpiped) = (sends(true), sends(false));
    assert!(
        piped <= 100 && unpiped >= 600,
        "pipelined: {piped} sends for 50 transactions of 12 statements; without: {unpiped}"
    );
}

/// Starts `dbsweep run` in the background and returns once it prints its first interval line.
fn run_in_background(
    server: &ManagedServer,
    out: &std::path::Path,
    extra: &[&str],
) -> (
    std::process::Child,
    std::io::Lines<BufReader<std::process::ChildStderr>>,
) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("dbsweep"))
        .args([
            "run",
            "oltp_point_select",
            "--table-size",
            "1000",
            "--threads",
            "2",
            "--target",
            &server.url,
        ])
        .args(extra)
        .arg("--output")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    assert!(
        lines
            .by_ref()
            .map(Result::unwrap)
            .any(|l| l.starts_with("[ 1s ]")),
        "the run never reported"
    );
    (child, lines)
}

per_server!(a_killed_and_restarted_server_is_reconnected, |kind| {
    let mut server = start(kind);
    let s = Scratch::new();
    on(
        &server,
        &["prepare", "oltp_point_select", "--table-size", "1000"],
    )
    .assert()
    .success();
    let out = s.path("r.json");
    // Time enough for a restart on a loaded machine (other tests run beside this one) and a
    // reconnect attempt after it: attempts back off to one a second.
    let (child, lines) = run_in_background(&server, &out, &["--time", "10"]);
    server.kill();
    server
        .restart()
        .expect("restart on the same data directory");
    let stderr: Vec<String> = lines.map(Result::unwrap).collect();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{stderr:?}");
    let r = read_json(&out);
    assert!(
        u(&r, "/reconnects") >= 2,
        "both clients reconnect: {}",
        r["reconnects"]
    );
    assert!(u(&r, "/events") > 0);
    assert_eq!(r["error"], serde_json::Value::Null);
});

per_server!(
    a_server_that_stays_down_stops_the_run_with_results,
    |kind| {
        let mut server = start(kind);
        let s = Scratch::new();
        on(
            &server,
            &["prepare", "oltp_point_select", "--table-size", "1000"],
        )
        .assert()
        .success();
        let out = s.path("r.json");
        let (child, lines) = run_in_background(
            &server,
            &out,
            &["--time", "600", "--reconnect-timeout", "2"],
        );
        server.kill();
        let stderr: Vec<String> = lines.map(Result::unwrap).collect();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{stderr:?}");
        assert!(
            stderr.iter().any(|l| l.contains("the run stopped")),
            "{stderr:?}"
        );
        let r = read_json(&out);
        assert_valid_results(&r);
        assert!(r["error"].as_str().is_some());
        assert!(
            u(&r, "/events") > 0,
            "what was measured before the loss is kept"
        );
    }
);

per_server!(
    managed_server_with_settings_prepares_and_cleans_up,
    |kind| {
        let s = Scratch::new();
        let setting = if kind == ServerKind::Postgres {
            "shared_buffers=64MB"
        } else {
            "innodb_buffer_pool_size=64M"
        };
        let name = if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mariadb"
        };
        let out = s.path("m.json");
        let output = dbsweep()
            .args([
                "run",
                "oltp_read_only",
                "--server",
                name,
                "--server-set",
                setting,
                "--table-size",
                "500",
                "--events",
                "2000",
                "--time",
                "0",
                "--report-interval",
                "0",
            ])
            .arg("--output")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let r = read_json(&out);
        assert_eq!(
            u(&r, "/prepare/rows"),
            500,
            "a fresh managed server is prepared first"
        );
        assert_eq!(u(&r, "/events"), 2000);
        let hw = &r["hw"]["cpu_us_per_op"];
        assert!(
            hw["server"].as_f64().unwrap() > 0.0,
            "the server's processes are sampled: {hw}"
        );
        assert!(r["hw"]["server_rss_kb"].as_u64().unwrap() > 0);
        let datadir = r["server"]["datadir"].as_str().unwrap().to_string();
        assert!(
            !std::path::Path::new(&datadir).exists(),
            "the data directory is removed"
        );
        let settings = &r["target"]["settings"];
        if kind == ServerKind::Postgres {
            assert_eq!(
                settings["shared_buffers"], "8192",
                "64MB in 8kB pages: {settings}"
            );
        } else {
            assert_eq!(settings["innodb_buffer_pool_size"], "67108864");
        }
    }
);

#[test]
fn passwords_never_appear_in_output() {
    dbsweep()
        .args([
            "run",
            "oltp_read_only",
            "--target",
            "postgres://bob:s3cret@127.0.0.1:1/db",
            "--time",
            "1",
        ])
        .assert()
        .failure()
        .stderr(predicates::str::contains("s3cret").not());
}

#[test]
fn a_kept_datadir_is_reused_with_its_tables() {
    let s = Scratch::new();
    let dir = s.path("pgdata");
    let dirs = dir.to_str().unwrap();
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--server",
            "postgres",
            "--server-datadir",
            dirs,
            "--keep",
            "--table-size",
            "300",
        ])
        .assert()
        .success();
    let out = s.path("k.json");
    dbsweep()
        .args([
            "run",
            "oltp_point_select",
            "--server",
            "postgres",
            "--server-datadir",
            dirs,
            "--keep",
            "--table-size",
            "300",
            "--events",
            "10",
            "--time",
            "0",
            "--report-interval",
            "0",
        ])
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    assert_eq!(
        r["prepare"],
        serde_json::Value::Null,
        "the kept tables are reused, not loaded again"
    );
    assert_eq!(r["server"]["kept"], true);
    assert!(dir.join("data").exists());
}

/// sysbench's oltp_read_write on `server`, on 2 tables of 1,000 rows.
fn sysbench(kind: ServerKind, server: &ManagedServer, command: &str, extra: &[&str]) -> String {
    let out = Command::new("sysbench")
        .arg("oltp_read_write")
        .args(sysbench_connection(kind, server))
        .args(["--tables=2", "--table-size=1000"])
        .args(extra)
        .arg(command)
        .output()
        .expect("sysbench is installed (scripts/test installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "sysbench {command} failed:\n{text}");
    text
}

per_server!(tables_are_interchangeable_with_sysbench, |kind| {
    let server = start(kind);
    let s = Scratch::new();
    // sysbench runs on tables dbsweep prepared...
    on(
        &server,
        &[
            "prepare",
            "oltp_read_write",
            "--tables",
            "2",
            "--table-size",
            "1000",
        ],
    )
    .assert()
    .success();
    let text = sysbench(kind, &server, "run", &["--events=200", "--time=0"]);
    assert!(
        text.contains("transactions:                        200"),
        "{text}"
    );
    assert!(
        text.contains("ignored errors:                      0"),
        "{text}"
    );
    on(&server, &["cleanup", "oltp_read_write", "--tables", "2"])
        .assert()
        .success();
    // ...and dbsweep on tables sysbench prepared.
    sysbench(kind, &server, "prepare", &[]);
    let r = run_json(
        &server,
        &s,
        &[
            "run",
            "oltp_read_write",
            "--tables",
            "2",
            "--table-size",
            "1000",
            "--events",
            "200",
            "--time",
            "0",
        ],
    );
    assert_eq!(
        (
            u(&r, "/queries/read"),
            u(&r, "/queries/write"),
            u(&r, "/queries/other")
        ),
        (2800, 800, 400)
    );
    let r = run_json(
        &server,
        &s,
        &[
            "run",
            "oltp_insert",
            "--tables",
            "2",
            "--table-size",
            "1000",
            "--events",
            "50",
            "--time",
            "0",
        ],
    );
    assert_eq!(
        u(&r, "/queries/write"),
        50,
        "auto-increment continues after sysbench's rows"
    );
    sysbench(kind, &server, "cleanup", &[]);
});

#[test]
fn a_datadir_the_server_user_cannot_reach_is_refused() {
    // Only root hands the server to another user; as any other user there is nothing to check.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let s = Scratch::new();
    let private = s.path("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(
        &private,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let dir = private.join("pg");
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--server",
            "postgres",
            "--server-datadir",
            dir.to_str().unwrap(),
        ])
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("cannot enter").and(predicates::str::contains("private")),
        );
}

per_server!(
    small_plan_sweeps_with_counters_and_hardware_figures,
    |kind| {
        let s = Scratch::new();
        let dir = s.path("sweep");
        let name = if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mariadb"
        };
        let output = dbsweep()
            .args(["sweep", "small", "--server", name, "--table-size", "5000"])
            .args([
                "--read-time",
                "1",
                "--write-time",
                "1",
                "--warmup-time",
                "0.5",
            ])
            .args(["--postwrite-pause", "1", "--output"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // docs/workloads.md section 4: 40 steps with the load and the two postwrite pauses.
        crate::sweep::assert_complete(&dir, 40, true);
        let recs = crate::sweep::records(&dir);
        let step = |n: &str| {
            &recs
                .iter()
                .find(|r| r.0.ends_with(&format!("-{n}.json")))
                .unwrap_or_else(|| panic!("no step {n}"))
                .1
        };
        let pause = step("postwrite")["pause"]["actions"].to_string();
        let stats = &step("update-index")["results"]["server_stats"];
        if kind == ServerKind::Postgres {
            assert!(
                pause.contains("VACUUM (ANALYZE) sbtest1") && pause.contains("CHECKPOINT"),
                "{pause}"
            );
            assert!(
                stats["deltas"]["pg_stat_database.xact_commit"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
            assert!(stats["log_bytes_per_op"].as_f64().unwrap() > 0.0, "{stats}");
        } else {
            assert!(
                pause.contains("InnoDB dirty pages flushed")
                    && pause.contains("ANALYZE TABLE sbtest1"),
                "{pause}"
            );
            assert!(
                stats["deltas"]["global_status.Com_update"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
            assert!(
                stats["innodb_status"]
                    .as_str()
                    .unwrap()
                    .contains("BUFFER POOL AND MEMORY")
            );
            assert!(stats["pages_written_per_op"].is_number(), "{stats}");
        }
        // Warm-up steps run but are not reported.
        assert_eq!(step("scan.warmup")["reported"], false);
        assert_eq!(step("scan")["reported"], true);
        let rows = step("scan")["results"]["rows_per_s"].as_f64().unwrap();
        assert!(rows > 0.0, "a scan's throughput is rows scanned");
        let env = read_json(&dir.join("environment.json"));
        assert!(env["servers"][name].as_str().is_some(), "{env}");
    }
);

/// Writes a plan of `head` (name, sizes, targets, configurations) followed by a load step and
/// a point-select step, and runs it as a sweep into the scratch directory's `sweep`.
fn sweep_load_and_point(s: &Scratch, head: &str) -> (std::process::Output, std::path::PathBuf) {
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "{head}[[steps]]\nload = true\n\
             [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n"
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    let out = dbsweep()
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .output()
        .unwrap();
    (out, dir)
}

per_server!(a_cell_whose_server_does_not_start_fails_its_steps, |kind| {
    // A setting the server refuses: it exits before accepting connections.
    let s = Scratch::new();
    let name = format!("{kind:?}").to_lowercase();
    let (out, dir) = sweep_load_and_point(
        &s,
        &format!(
            "name = \"bad\"\ntable_size = 1000\nread_time = 0.5\n\
             [[targets]]\nserver = \"{name}\"\n\
             [configs.broken]\nsettings = {{ no_such_setting = \"1\" }}\n"
        ),
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("0 step(s) done, 2 failed"), "{stdout}");
    assert!(
        stderr.contains("the database did not start") && stderr.contains("no_such_setting"),
        "{stderr}"
    );
    let recs = crate::sweep::records(&dir);
    assert_eq!(recs.len(), 2);
    assert!(recs.iter().all(|(_, r)| r["status"] == "failed"));
});

per_server!(io_bound_configuration_limits_the_server, |kind| {
    let s = Scratch::enterable();
    let (name, settings) = if kind == ServerKind::Postgres {
        ("postgres", "shared_buffers = \"16MB\"")
    } else {
        (
            "mariadb",
            "innodb_buffer_pool_size = \"8M\", innodb_flush_method = \"O_DIRECT\"",
        )
    };
    // The data directory goes on the disk under test.
    let disk = s.path("disk");
    std::fs::create_dir(&disk).unwrap();
    let (output, dir) = sweep_load_and_point(
        &s,
        &format!(
            "name = \"io\"\ntable_size = 20000\nread_time = 1\n\
             [[targets]]\nserver = \"{name}\"\ndatadir_in = {:?}\n\
             [configs.iobound]\nsettings = {{ {settings} }}\ndrop_caches = true\nmemory_limit = \"256M\"\n",
            disk.display().to_string()
        ),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let in_disk = format!(" in {}/dbsweep-{name}-", disk.display());
    assert!(stderr.contains(&in_disk), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&disk).unwrap().count(),
        0,
        "the server's data directory was left behind"
    );
    let recs = crate::sweep::records(&dir);
    assert_eq!(recs.len(), 2);
    let notes = recs[0].1["notes"].to_string();
    assert!(notes.contains("limited to 256 MB"), "{notes}");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(
            recs[1].1["notes"]
                .to_string()
                .contains("OS page cache dropped")
        );
    }
    let point = &recs[1].1["results"];
    assert_eq!(
        point["server"]["settings"].as_object().unwrap().len(),
        settings.matches('=').count()
    );
    let stats = &point["server_stats"];
    assert!(stats["hit_rate"].as_f64().unwrap() <= 1.0, "{stats}");
});

per_server!(tpcc_prepare_check_cleanup_with_two_warehouses, |kind| {
    let server = start(kind);
    let t = server.url.clone();
    let tpcc = crate::tpcc::tpcc;
    let out = tpcc(&t, "prepare", &["--warehouses", "2", "--threads", "2"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        stdout.lines().filter(|l| l.ends_with(" pass")).count(),
        12,
        "{stdout}"
    );
    // Count through dbsweep's own connection to the server.
    let target = dbsweep::db::open(
        &t,
        dbsweep::db::OpenOptions {
            create: false,
            text_statements: true,
            pipeline: false,
        },
    )
    .unwrap();
    let mut conn = target.connect().unwrap();
    crate::tpcc::assert_cardinalities(2, &mut |sql| conn.query_i64(sql).unwrap().unwrap());
    // Money survives the trip: the sums the checks compare are exact decimals.
    let ytd = conn
        .query_text("SELECT SUM(w_ytd) FROM warehouse")
        .unwrap()
        .unwrap();
    assert_eq!(ytd.parse::<f64>().unwrap(), 600_000.0);
    drop(conn);
    tpcc(&t, "prepare", &["--warehouses", "2"]).assert().code(2);
    tpcc(&t, "check", &["--warehouses", "2"]).assert().success();
    // A 20-second run of 4 clients, then every condition but 11 holds.
    let s = Scratch::new();
    let r = crate::tpcc::run_and_check(&t, 2, &s);
    let mut conn = target.connect().unwrap();
    crate::tpcc::assert_orders_grew(2, &r, &mut |sql| conn.query_i64(sql).unwrap().unwrap());
    drop(conn);
    tpcc(&t, "cleanup", &[]).assert().success();
    let mut conn = target.connect().unwrap();
    assert!(!conn.table_exists("order_line").unwrap());
    // One warehouse: all four clients share it.
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    let r = crate::tpcc::run_and_check(&t, 1, &s);
    crate::tpcc::assert_orders_grew(1, &r, &mut |sql| conn.query_i64(sql).unwrap().unwrap());
});

per_server!(killed_tpcc_connections_leave_the_data_consistent, |kind| {
    let server = start(kind);
    let t = server.url.clone();
    let tpcc = crate::tpcc::tpcc;
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    let s = Scratch::new();
    let out = s.path("r.json");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("dbsweep"))
        .args([
            "tpcc",
            "run",
            "--target",
            &t,
            "--threads",
            "4",
            "--time",
            "6",
        ])
        .arg("--output")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    assert!(
        lines
            .by_ref()
            .map(Result::unwrap)
            .any(|l| l.starts_with("[ 1s ]")),
        "the run never reported"
    );
    // Cut every client's connection, mid-transaction for most of them.
    let target = dbsweep::db::open(
        &t,
        dbsweep::db::OpenOptions {
            create: false,
            text_statements: true,
            pipeline: false,
        },
    )
    .unwrap();
    let mut conn = target.connect().unwrap();
    let killed = if kind == ServerKind::Postgres {
        conn.query_rows(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
            1,
        )
        .unwrap()
        .len()
    } else {
        let ids = conn
            .query_rows(
                "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND db = DATABASE()",
                1,
            )
            .unwrap();
        for id in &ids {
            let _ = conn.batch(&format!("KILL {}", id[0].as_deref().unwrap()));
        }
        ids.len()
    };
    // The four clients', and the counters probe's.
    assert!(killed >= 4, "{killed} connections");
    drop(conn);
    let stderr: Vec<String> = lines.map(Result::unwrap).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr:?}");
    let r = read_json(&out);
    assert!(u(&r, "/reconnects") >= 4, "{}", r["reconnects"]);
    assert!(u(&r, "/events") > 0);
    let out = tpcc(&t, "check", &["--after-run"]).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        stdout.lines().filter(|l| l.ends_with(" pass")).count(),
        11,
        "{stdout}"
    );
});

/// Issue 18: MariaDB 10.11 accepts `innodb_buffer_pool_instances` and ignores it. The run says
/// so, records what the server has, and the report puts it above every table.
#[test]
fn settings_a_server_ignores_are_read_back_warned_and_reported() {
    let s = Scratch::new();
    let out = s.path("m.json");
    let output = run_with_settings(
        "mariadb",
        &[
            "innodb_buffer_pool_instances=8",
            "innodb-buffer-pool-size=64M",
        ],
        &out,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: setting innodb_buffer_pool_instances = 8 was requested"),
        "{stderr}"
    );
    let r = read_json(&out);
    assert_valid_results(&r);
    let eff = &r["server"]["effective"];
    assert_eq!(
        eff["innodb_buffer_pool_instances"]["applied"], false,
        "{eff}"
    );
    assert!(eff["innodb_buffer_pool_instances"]["effective"].is_null());
    assert_eq!(eff["innodb-buffer-pool-size"]["applied"], true, "{eff}");
    assert_eq!(eff["innodb-buffer-pool-size"]["effective"], "67108864");
    let warnings = r["server"]["setting_warnings"].to_string();
    assert!(
        warnings.contains("server log:") && warnings.contains("innodb-buffer-pool-instances"),
        "the server log's own warning is kept: {warnings}"
    );
    let report = dbsweep().arg("report").arg(&out).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success());
    let first = text.lines().next().unwrap_or_default();
    assert_eq!(
        first, "Warning: settings the server did not apply",
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.contains("innodb_buffer_pool_instances"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("(no such variable)"), "{row}");
    assert!(
        !text.contains("innodb-buffer-pool-size"),
        "an applied setting is not listed\n{text}"
    );
}

/// Issue 18: PostgreSQL gives `shared_buffers` in 8kB pages: 32768 of them are the 256MB asked
/// for; a value the server rounds or refuses to take as given is not.
#[test]
fn postgres_settings_are_compared_in_their_units() {
    let s = Scratch::new();
    let out = s.path("p.json");
    let output = run_with_settings(
        "postgres",
        &[
            "shared_buffers=256MB",
            "checkpoint_timeout=5min",
            "synchronous_commit=false",
        ],
        &out,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let r = read_json(&out);
    let eff = &r["server"]["effective"];
    assert_eq!(eff["shared_buffers"]["effective"], "32768 8kB", "{eff}");
    assert_eq!(eff["shared_buffers"]["applied"], true, "{eff}");
    assert_eq!(eff["checkpoint_timeout"]["effective"], "300 s", "{eff}");
    assert_eq!(eff["checkpoint_timeout"]["applied"], true, "{eff}");
    assert_eq!(eff["synchronous_commit"]["applied"], true, "{eff}");
    assert_eq!(r["server"]["setting_warnings"], serde_json::json!([]));
}

/// Issue 18: a sweep on a running server by URL, with the step options `server_pid` and
/// `data_dir` naming its process and data, samples the server's CPU as a managed one's, and
/// `environment.json` records the server's version.
#[test]
fn a_url_target_with_server_pid_records_the_servers_figures_and_version() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    let plan = s.path("ext.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"ext\"\nclients = [1]\ntable_size = 500\nread_time = 1\n\
             options = {{ server_pid = {}, data_dir = \"{}\" }}\n\n\
             [[targets]]\nname = \"pg\"\nurl = \"{}\"\n\n\
             [[steps]]\nload = true\n\n\
             [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
            server.pid().unwrap(),
            server.dir.join("data").display(),
            server.url
        ),
    )
    .unwrap();
    let dir = s.path("out");
    dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--force", "--output"])
        .arg(&dir)
        .assert()
        .success();
    let step = read_json(&dir.join("steps/pg.default.c1/02-point.json"));
    let hw = &step["results"]["hw"];
    assert!(
        hw["cpu_us_per_op"]["server"].as_f64().unwrap_or(0.0) > 0.0,
        "the server's processes are sampled: {hw}"
    );
    assert!(
        hw["device"].is_string(),
        "the data's device is followed: {hw}"
    );
    let env = read_json(&dir.join("environment.json"));
    let version = env["servers"]["pg"].as_str().unwrap_or_default();
    assert!(
        version.contains("PostgreSQL 15") || version.contains("15."),
        "{env}"
    );
}

/// 100 point selects on a managed `server` started with `settings`, results to `out`.
fn run_with_settings(
    server: &str,
    settings: &[&str],
    out: &std::path::Path,
) -> std::process::Output {
    let mut c = dbsweep();
    c.args(["run", "oltp_point_select", "--server", server]);
    for set in settings {
        c.args(["--server-set", set]);
    }
    c.args([
        "--table-size",
        "100",
        "--events",
        "100",
        "--time",
        "0",
        "--report-interval",
        "0",
    ])
    .arg("--output")
    .arg(out)
    .output()
    .unwrap()
}
