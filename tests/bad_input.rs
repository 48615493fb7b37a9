//! Bad input: a one-line error naming what and where, exit code 2, and nothing touched.

use predicates::prelude::*;
use predicates::str::contains;

use crate::util::refused;
use crate::util::{Scratch, dbsweep};

#[test]
fn unknown_workload_lists_the_built_in_ones() {
    let s = Scratch::new();
    s.cmd(&["run", "oltp_nope"])
        .assert()
        .code(2)
        .stderr(contains("unknown workload 'oltp_nope'").and(contains("oltp_read_write")));
    assert!(
        !s.db().exists(),
        "no database may be created for a bad command"
    );
}

#[test]
fn unknown_option_is_rejected() {
    dbsweep()
        .args(["run", "oltp_read_only", "--bogus-option", "3"])
        .assert()
        .code(2)
        .stderr(contains("--bogus-option"));
}

#[test]
fn malformed_or_unsupported_targets_are_rejected() {
    for (url, says) in [
        ("dbsweep.db", "not a URL"),
        ("sqlite://", "no database path"),
        ("oracle://x", "unknown scheme 'oracle'"),
        ("sqlite://x.db?journal_mode", "not name=value"),
        ("sqlite://x.db?synchronous=1;DROP", "not a valid PRAGMA"),
    ] {
        dbsweep()
            .args(["run", "oltp_read_only", "--target", url])
            .assert()
            .code(2)
            .stderr(contains(says).and(contains(url)));
    }
}

#[test]
fn pipelining_is_refused_where_it_cannot_be_done() {
    let s = Scratch::new();
    // SQLite and MySQL do not pipeline: refused before anything is opened or created.
    s.cmd(&["run", "oltp_read_only", "--pipeline"])
        .assert()
        .code(2)
        .stderr(
            contains("--pipeline: only PostgreSQL targets pipeline").and(contains("sqlite://")),
        );
    assert!(!s.db().exists());
    dbsweep()
        .args([
            "run",
            "oltp_read_only",
            "--pipeline",
            "--target",
            "mysql://u:secret@127.0.0.1:1/db",
        ])
        .assert()
        .code(2)
        .stderr(contains("only PostgreSQL").and(contains("secret").not()));
}

#[test]
fn out_of_range_options_name_the_option() {
    for (args, says) in [
        (&["--threads", "0"][..], "--threads"),
        (&["--rand-pareto-h", "1.5"], "--rand-pareto-h"),
        (&["--time=-1"], "--time"),
        (&["--random-points", "0"], "--random-points"),
        (&["--skip-trx=perhaps"], "skip-trx"),
        (&["--threads", "100001"], "--threads"),
        (&["--threads", "6000"], "need --workers"),
        (&["--workers", "0"], "--workers"),
        (&["--connections", "4"], "more connections than clients"),
        (&["--threads", "8", "--connect-rate=-1"], "--connect-rate"),
        (
            &["--threads", "8", "--connect-rate", "nan"],
            "--connect-rate",
        ),
    ] {
        dbsweep()
            .args(["run", "oltp_read_only"])
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(says));
    }
    // What cannot share connections, or run on fewer threads than clients.
    let s = Scratch::new();
    let script = s.path("x.lua");
    std::fs::write(&script, "function event() end\n").unwrap();
    let script = script.to_str().unwrap();
    for (args, says) in [
        (
            &["run", "bulk_insert", "--threads", "8", "--connections", "2"][..],
            "bulk_insert keeps a transaction open",
        ),
        (
            &["run", script, "--threads", "8", "--connections", "2"],
            "open their own connections",
        ),
        (
            &["run", script, "--threads", "8", "--workers", "2"],
            "run a thread each",
        ),
    ] {
        s.cmd(args)
            .assert()
            .code(2)
            .stderr(contains(says).and(contains("\n").count(1)));
    }
    assert!(!s.db().exists(), "nothing was created");
}

#[test]
fn missing_database_or_table_is_reported_before_running() {
    let s = Scratch::new();
    s.cmd(&["run", "oltp_read_only"])
        .assert()
        .code(2)
        .stderr(contains("does not exist").and(contains("dbsweep prepare")));
    assert!(!s.db().exists(), "run must not create the database file");
    s.cmd(&["prepare", "oltp_read_only", "--table-size", "10"])
        .assert()
        .success();
    s.cmd(&[
        "run",
        "oltp_read_only",
        "--tables",
        "2",
        "--table-size",
        "10",
    ])
    .assert()
    .code(2)
    .stderr(contains("table sbtest2 does not exist"));
    s.sqlite().execute_batch("DELETE FROM sbtest1").unwrap();
    s.cmd(&["run", "oltp_read_only", "--table-size", "10"])
        .assert()
        .code(2)
        .stderr(contains("sbtest1").and(contains("is empty")));
}

#[test]
fn unwritable_output_fails_before_any_table_is_touched() {
    let s = Scratch::new();
    let bad = s.path("no/such/dir/results.json");
    s.cmd(&["run", "--prepare", "oltp_read_only", "--table-size", "10"])
        .arg("--output")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(contains("--output").and(contains("no/such/dir/results.json")));
    assert!(
        !s.db().exists(),
        "the load must not start when the results cannot be written"
    );
    s.cmd(&["run", "--prepare", "oltp_read_only", "--table-size", "10"])
        .arg("--output")
        .arg(s.dir.path())
        .assert()
        .code(2)
        .stderr(contains("is a directory"));
}

#[test]
fn errors_are_one_line_and_never_a_panic() {
    let out = dbsweep()
        .args(["run", "oltp_read_only", "--target", "mysql2://x"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn managed_server_options_need_a_managed_server() {
    let s = Scratch::new();
    for opt in ["--server-socket", "--keep"] {
        s.cmd(&["run", "oltp_point_select", opt])
            .assert()
            .code(2)
            .stderr(contains("need --server"));
    }
    dbsweep()
        .args(["sweep", "quick", "--dry-run", "--server-socket"])
        .assert()
        .code(2)
        .stderr(contains("--server <KIND[:VERSION]>"));
    assert!(!s.db().exists());
}

/// The trust issue's messages: each one line, saying what and where.
#[test]
fn messages_say_what_and_where() {
    let s = Scratch::new();
    // A client count given twice would run one cell and report the rest as "kept from before".
    let out = crate::util::dry_run(
        &s,
        "name = \"dup\"\nclients = [1, 2, 1]\n\n[[steps]]\nload = true\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("p.toml:2: clients: 1 is given twice (entry 3)"),
        "{stderr}"
    );
    // An error in a client host cites the host's own line.
    let out = crate::util::dry_run(
        &s,
        "name = \"hosts\"\nclients = [2]\nclient_hosts = [\n  \"ssh://a\",\n  \"ssh://b:2a\",\n]\n\n[[steps]]\nload = true\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("p.toml:5: client_hosts:"), "{stderr}");
    // sysbench's lists of hosts or ports: said (as sysbench says what stops it: a FATAL line
    // on stdout, exit 1), not looked up as one name.
    dbsweep()
        .args(["sysbench", "oltp_point_select", "--db-driver=mysql"])
        .args(["--mysql-host=10.0.0.1,10.0.0.2", "run"])
        .assert()
        .code(1)
        .stdout(contains(
            "FATAL: --mysql-host=10.0.0.1,10.0.0.2: a list of hosts is not supported",
        ));
    dbsweep()
        .args(["sysbench", "oltp_point_select", "--db-driver=pgsql"])
        .args(["--pgsql-port=5432,5433", "run"])
        .assert()
        .code(1)
        .stdout(contains(
            "--pgsql-port=5432,5433: a list of ports is not supported",
        ));
    // A way of waiting for SQLite's write lock that does not exist is named with the choices.
    dbsweep()
        .args(["run", "oltp_update_index", "--target"])
        .arg(format!("{}?lock_wait=sometimes", s.target()))
        .assert()
        .code(2)
        .stderr(contains(
            "lock_wait=sometimes: use writer (the default), fifo, batch, poll or timeout",
        ));
    // TPC-C's check on a database that was never loaded names TPC-C's load.
    s.cmd(&["tpcc", "check"])
        .assert()
        .failure()
        .stderr(contains("dbsweep tpcc prepare"));
}

#[test]
fn messages_say_what_is_wrong_in_words() {
    let s = Scratch::new();
    // sysbench's C tests run as sysbench runs them.
    let out = dbsweep()
        .args([
            "sysbench",
            "cpu",
            "--cpu-max-prime=100",
            "--events=5",
            "run",
        ])
        .output()
        .unwrap();
    refused(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("CPU speed:"));
    // A Lua error whose value is a table: its fields, not an address.
    s.sqlite().execute_batch("VACUUM").unwrap();
    let script = s.path("e.lua");
    std::fs::write(
        &script,
        "function event() error({errcode = 1213, sqlstate = \"40001\"}) end\n",
    )
    .unwrap();
    let out = dbsweep()
        .args(["run", script.to_str().unwrap(), "--target", &s.target()])
        .args(["--time", "1", "--report-interval", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("{errcode = 1213, sqlstate = \"40001\"}") && !err.contains("table: 0x"),
        "{err}"
    );
    // sql-bench's prepare makes the database it says it made.
    let db = s.path("sb.db");
    dbsweep()
        .args(["prepare", "sqlbench_select", "--target"])
        .arg(format!("sqlite://{}", db.display()))
        .assert()
        .success();
    assert!(db.is_file());
    // A URL parameter given twice.
    let out = dbsweep()
        .args(["run", "oltp_point_select", "--target"])
        .arg(format!("{}?lock_wait=fifo&lock_wait=poll", s.target()))
        .args(["--time", "1"])
        .output()
        .unwrap();
    assert!(refused(&out, 2).contains("given twice"));
}
