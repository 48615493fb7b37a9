//! Against real PostgreSQL and MariaDB servers that the tests start themselves (managed
//! servers). A missing server binary fails these tests; `scripts/test` installs them.

use std::process::{Command, Stdio};

use dbsweep::server::{ManagedServer, ServerKind};

use crate::util::{
    Line, Scratch, assert_valid_results, dbsweep, per_client, read_json, start, start_with, u,
};

/// `dbsweep <args> --target <server>`.
pub(crate) fn on(server: &ManagedServer, args: &[&str]) -> assert_cmd::Command {
    line(server, args).command()
}

fn line(server: &ManagedServer, args: &[&str]) -> Line {
    Line::new(args).target(&server.url).quiet()
}

pub(crate) fn run_json(server: &ManagedServer, s: &Scratch, args: &[&str]) -> serde_json::Value {
    line(server, args).output(&s.path("r.json")).results()
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

/// A TCP proxy in front of the server of `url` for one connection: the URL to connect to
/// instead, and the count of chunks it has received from the client so far (each at least one
/// send of the client's).
fn counting_proxy(url: &str) -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let chunks = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = chunks.clone();
    let url = crate::util::tcp_proxy(
        url,
        move |_| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        },
        |_| {},
    );
    (url, chunks)
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
            timeouts: Default::default(),
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
            timeouts: Default::default(),
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
) -> (std::process::Child, crate::util::StderrLines) {
    crate::util::spawn_measuring(
        crate::util::dbsweep_std()
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
            .stdout(Stdio::piped()),
        "[ 1s ]",
    )
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
    let stderr: Vec<String> = lines.collect();
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
        let stderr: Vec<String> = lines.collect();
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
        // Each client's own count too, of the client whose error stopped the run as well.
        let each = per_client(&r);
        assert_eq!(each.len(), 2, "{each:?}");
        assert_eq!(each.iter().sum::<u64>(), u(&r, "/events"));
    }
);
