//! Thousands of terminals: TPC-C clients multiplexed on a few worker threads, each with a
//! connection of its own or sharing a few, on real PostgreSQL and MariaDB servers; the limit
//! of the server's connections; Ctrl-C at 10,000 terminals.

use std::process::Stdio;
use std::time::{Duration, Instant};

use dbsweep::db::{Conn, OpenOptions};
use dbsweep::server::{ManagedServer, ServerKind};
use serde_json::Value;

use crate::tpcc::tpcc;
use crate::util::{
    Scratch, assert_valid_results, dbsweep, f, lax_commits, per_client, read_json, start_with, u,
};

/// A connection to `server` for counting.
fn connect(server: &ManagedServer) -> Box<dyn Conn> {
    let target = dbsweep::db::open(
        &server.url,
        OpenOptions {
            create: false,
            text_statements: true,
            pipeline: false,
            timeouts: Default::default(),
        },
    )
    .unwrap();
    target.connect().unwrap()
}

/// Sessions the server has accepted so far (PostgreSQL counts them per database since 14).
fn sessions(kind: ServerKind, conn: &mut dyn Conn) -> i64 {
    match kind {
        ServerKind::Postgres => conn
            .query_i64("SELECT sum(sessions)::bigint FROM pg_stat_database")
            .unwrap()
            .unwrap(),
        _ => conn
            .query_rows("SHOW GLOBAL STATUS LIKE 'Connections'", 2)
            .unwrap()[0][1]
            .as_deref()
            .unwrap()
            .parse()
            .unwrap(),
    }
}

/// A managed server with `settings` and the TPC-C tables of `warehouses`.
fn tpcc_server(kind: ServerKind, settings: &[(&str, &str)], warehouses: &str) -> ManagedServer {
    // Commits written to the OS rather than flushed (still safe from a killed server): these
    // tests are about the client's terminals, and a flush per commit on a busy 2-core machine
    // only makes them wait longer for the server.
    let mut settings = settings.to_vec();
    settings.extend_from_slice(lax_commits(kind));
    let server = start_with(kind, &settings);
    tpcc(
        &server.url,
        "prepare",
        &["--warehouses", warehouses, "--threads", "2"],
    )
    .assert()
    .success();
    server
}

/// Transactions each terminal runs in [`paced_run`].
const PER_TERMINAL: u64 = 2;

/// `tpcc run` on 2 warehouses with keying and think times at a hundredth, `PER_TERMINAL`
/// transactions a terminal (a minute at most), and `args`; the results file (checked against
/// the schema) and the summary. The run ends when the last terminal has run its share, not at
/// a time: a fixed time would ask a busy machine's server for a throughput (every terminal ran
/// only if the server committed more than there are terminals; MySQL sharing 2 cores with
/// other tests left 389 of 2,000 idle in 6 s). No warm-up: every transaction committed is
/// counted, so that the orders table's growth can be compared.
fn paced_run(server: &ManagedServer, s: &Scratch, args: &[&str]) -> (Value, String) {
    let out = s.path("paced.json");
    let per_terminal = PER_TERMINAL.to_string();
    let mut all = vec![
        "--warehouses",
        "2",
        "--wait",
        "--think-scale",
        "0.01",
        "--rand-seed",
        "11",
        "--events-per-client",
        &per_terminal,
        "--time",
        "60",
        "--report-interval",
        "0",
        "--output",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let run = tpcc(&server.url, "run", &all).assert().success();
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    let r = read_json(&out);
    assert_valid_results(&r);
    (r, stdout)
}

/// The orders and the districts' next order ids summed, for the growth of a run.
fn orders(conn: &mut dyn Conn) -> (i64, i64) {
    let mut count = |sql: &str| conn.query_i64(sql).unwrap().unwrap();
    (
        count("SELECT COUNT(*) FROM orders"),
        count("SELECT SUM(d_next_o_id) FROM district"),
    )
}

/// Every terminal ran its `PER_TERMINAL` transactions; the mix is the deck's (the
/// specification's least mix of Payment, Order-Status, Delivery and Stock-Level, New-Order the
/// rest) within five standard deviations of the run's count, and half a point for the
/// terminals' decks cut short; the committed New-Orders are the growth of the orders table and
/// of the districts' next order ids since `before` ([`orders`] before the run), and the
/// consistency checks hold.
fn assert_terminals_ran_the_mix(
    server: &ManagedServer,
    r: &Value,
    terminals: usize,
    before: (i64, i64),
) {
    let per_terminal = per_client(r);
    assert_eq!(per_terminal.len(), terminals);
    let short = per_terminal.iter().filter(|&&e| e != PER_TERMINAL).count();
    assert_eq!(
        short, 0,
        "terminals that did not run {PER_TERMINAL} transactions"
    );
    let txns = r["tpcc"]["transactions"].as_array().unwrap();
    let total: u64 = txns.iter().map(|x| u(x, "/count")).sum();
    assert_eq!(total, u(r, "/events"));
    for (x, deck) in txns.iter().zip([0.45, 0.43, 0.04, 0.04, 0.04]) {
        let share = u(x, "/count") as f64 / total as f64;
        let tolerance = 5.0 * (deck * (1.0 - deck) / total as f64).sqrt() + 0.005;
        assert!(
            (share - deck).abs() <= tolerance,
            "{}: {:.2}% of {total}, the deck has {}%",
            x["name"],
            share * 100.0,
            deck * 100.0
        );
    }
    let no = &txns[0];
    let committed = (u(no, "/count") - u(no, "/rollbacks")) as i64;
    let after = orders(connect(server).as_mut());
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (committed, committed),
        "the orders and the districts' next ids grew by the committed New-Orders"
    );
    let check = tpcc(&server.url, "check", &["--warehouses", "2", "--after-run"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&check.get_output().stdout).to_string();
    assert_eq!(
        stdout.lines().filter(|l| l.ends_with(" pass")).count(),
        11,
        "every condition but 11 after a run: {stdout}"
    );
}

// One server and one load for both ways of serving terminals (a 2-warehouse load and a server
// start each cost more than a run): the second run's counts are taken from where the first
// left them.
per_server!(
    thousands_of_terminals_with_a_connection_each_then_sharing_sixteen,
    |kind| {
        let mut settings = vec![("max_connections", "1100")];
        if kind != ServerKind::Postgres {
            // 1,000 connections of 35 prepared statements each: more than its default allows.
            settings.push(("max_prepared_stmt_count", "100000"));
        }
        let server = tpcc_server(kind, &settings, "2");
        let mut conn = connect(&server);
        let loaded = orders(conn.as_mut());
        assert_eq!(loaded, (60_000, 3001 * 20), "the loaded orders");
        a_connection_each(&server, conn.as_mut(), loaded);
        let before = orders(conn.as_mut());
        sharing_sixteen(&server, conn.as_mut(), before);
    }
);

/// A thousand terminals on a few workers, each with a connection of its own.
fn a_connection_each(server: &ManagedServer, conn: &mut dyn Conn, before: (i64, i64)) {
    let sessions_before = sessions(server.kind, conn);
    let s = Scratch::new();
    let (r, stdout) = paced_run(server, &s, &["--threads", "1000"]);
    // A session per terminal, opened for the run.
    assert!(sessions(server.kind, conn) - sessions_before >= 1000);
    let sv = &r["serving"];
    assert_eq!(u(sv, "/clients"), 1000);
    assert!(u(sv, "/workers") < 1000, "{sv}");
    assert!(sv["connections"].is_null(), "{sv}");
    assert!(u(sv, "/clients_behind") <= 1000 && f(sv, "/connect_s") > 0.0);
    assert!(stdout.contains("1000 on"), "{stdout}");
    assert_terminals_ran_the_mix(server, &r, 1000, before);
}

/// Two thousand terminals sharing 16 connections: their queue time in every figure.
fn sharing_sixteen(server: &ManagedServer, conn: &mut dyn Conn, before: (i64, i64)) {
    let sessions_before = sessions(server.kind, conn);
    let s = Scratch::new();
    let (r, stdout) = paced_run(server, &s, &["--threads", "2000", "--connections", "16"]);
    // The terminals shared 16 connections: the server saw those and dbsweep's own few.
    let opened = sessions(server.kind, conn) - sessions_before;
    assert!((16..=24).contains(&opened), "{opened} sessions");
    let sv = &r["serving"];
    assert_eq!((u(sv, "/clients"), u(sv, "/connections")), (2000, 16));
    assert!(f(sv, "/queue_ms/avg") > 0.0, "{sv}");
    // A terminal's response time runs from its submission: every type's latency holds its
    // queue time, at every percentile.
    for x in r["tpcc"]["transactions"].as_array().unwrap() {
        let q = &x["queue_ms"];
        assert!(f(q, "/max") > 0.0, "{x}");
        for p in ["/avg", "/p50", "/p90", "/p99", "/max"] {
            assert!(
                f(&x["latency_ms"], p) >= f(q, p),
                "{} {p}: latency {} < queue {}",
                x["name"],
                f(&x["latency_ms"], p),
                f(q, p)
            );
        }
    }
    assert!(stdout.contains("sharing 16 connections"), "{stdout}");
    assert!(stdout.contains("queue time (ms)"), "{stdout}");
    // The report's TPC-C table has the queue time and the terminals behind.
    let report = dbsweep()
        .args(["report", "--full"])
        .arg(s.path("paced.json"))
        .assert()
        .success();
    let report = String::from_utf8_lossy(&report.get_output().stdout).to_string();
    assert!(report.contains("queue p90 ms"), "{report}");
    assert!(
        report.contains("2000 terminals on") && report.contains("sharing 16 connections"),
        "{report}"
    );
    assert_terminals_ran_the_mix(server, &r, 2000, before);
}

per_server!(
    more_terminals_than_the_server_has_connections_is_refused_first,
    |kind| {
        let server = start_with(kind, &[("max_connections", "40")]);
        let mut conn = connect(&server);
        let s = Scratch::new();
        let t = server.url.as_str();
        dbsweep()
            .args([
                "prepare",
                "oltp_point_select",
                "--table-size",
                "1000",
                "--target",
                t,
            ])
            .assert()
            .success();
        let before = sessions(kind, conn.as_mut());
        let out = s.path("r.json");
        let run = |extra: &[&str]| {
            let mut c = dbsweep();
            c.args([
                "run",
                "oltp_point_select",
                "--table-size",
                "1000",
                "--target",
                t,
            ])
            .args(["--rate", "200", "--time", "2", "--output"])
            .arg(&out)
            .args(extra);
            c.assert()
        };
        let refused = run(&["--threads", "200"]).code(2);
        let stderr = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(
            lines[0].contains("--threads 200") && lines[0].contains("max_connections 40"),
            "{stderr}"
        );
        // Before any client connected (dbsweep's own check and nothing else), and no file.
        assert!(sessions(kind, conn.as_mut()) - before <= 3);
        assert!(!out.exists());
        // The same clients sharing 8 connections run, as any built-in workload's can.
        run(&["--threads", "200", "--connections", "8"]).success();
        let r = read_json(&out);
        assert_eq!(u(&r, "/serving/connections"), 8);
        assert!(u(&r, "/events") > 0);
        assert_eq!(per_client(&r).len(), 200);
    }
);

#[test]
fn ctrl_c_ends_ten_thousand_pooled_terminals_within_a_second() {
    let server = tpcc_server(ServerKind::Postgres, &[], "1");
    // The bound is for the run's own work after the signal (the clients stopped, the pool
    // closed, the last hardware and server readings, the results file). A CI machine busy with
    // other tests' servers can stretch that work past it once: a second attempt must then
    // meet it; a hang or a slow shutdown fails both.
    let first = ctrl_c_exit_time(&server.url);
    if first >= Duration::from_secs(1) {
        let second = ctrl_c_exit_time(&server.url);
        assert!(
            second < Duration::from_secs(1),
            "exited {first:?}, then {second:?} after Ctrl-C"
        );
    }
}

/// Runs 10,000 paced terminals on 64 connections, sends Ctrl-C once they measure, checks the
/// interrupted results file and returns how long the process took to exit after the signal.
fn ctrl_c_exit_time(url: &str) -> Duration {
    let s = Scratch::new();
    let out = s.path("r.json");
    // Measuring for a few seconds: terminals are still keying their first transactions; some
    // have run.
    let (child, lines) = crate::util::spawn_measuring(
        crate::util::dbsweep_std()
            .args(["tpcc", "run", "--target", url, "--warehouses", "1"])
            .args(["--wait", "--threads", "10000", "--connections", "64"])
            .args(["--time", "600", "--output"])
            .arg(&out)
            .stdout(Stdio::piped()),
        "[ 4s ]",
    );
    let signalled = Instant::now();
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let rest: Vec<String> = lines.collect();
    let output = child.wait_with_output().unwrap();
    let took = signalled.elapsed();
    assert_eq!(output.status.code(), Some(130), "stderr: {rest:?}");
    let r = read_json(&out);
    assert_valid_results(&r);
    assert_eq!(r["interrupted"], true);
    assert!(u(&r, "/events") > 0);
    assert_eq!(per_client(&r).len(), 10_000);
    assert_eq!(u(&r, "/serving/connections"), 64);
    took
}
