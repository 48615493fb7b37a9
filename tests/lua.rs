//! sysbench's own Lua scripts, unmodified, run by dbsweep on managed PostgreSQL and MariaDB,
//! with the same per-event counts as sysbench 1.0.20 reports for the same options.

use std::process::Command;

use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};

use crate::util::{Scratch, dbsweep, read_json, u};

fn start(kind: ServerKind) -> ManagedServer {
    ManagedServer::start(&ServerSpec {
        kind,
        settings: Vec::new(),
        datadir: None,
        keep: false,
    })
    .unwrap_or_else(|e| panic!("starting a managed {kind:?} server: {e}"))
}

/// sysbench's connection options for `server`.
fn connection(kind: ServerKind, server: &ManagedServer) -> Vec<String> {
    let (driver, p) = if kind == ServerKind::Postgres {
        ("pgsql", "pgsql")
    } else {
        ("mysql", "mysql")
    };
    vec![
        format!("--db-driver={driver}"),
        format!("--{p}-host=127.0.0.1"),
        format!("--{p}-port={}", server.port),
        format!("--{p}-user=sbtest"),
        format!("--{p}-db=sbtest"),
    ]
}

fn sysbench(
    kind: ServerKind,
    server: &ManagedServer,
    script: &str,
    command: &str,
    opts: &[&str],
) -> String {
    let out = Command::new("sysbench")
        .arg(script)
        .args(connection(kind, server))
        .args(opts)
        .arg(command)
        .output()
        .expect("sysbench is installed (scripts/test installs it)");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "sysbench {script} {command}:\n{text}");
    text
}

/// `read:`, `write:` and `other:` of sysbench's report.
fn sysbench_counts(text: &str) -> (u64, u64, u64) {
    let count = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    (count("read:"), count("write:"), count("other:"))
}

/// dbsweep running a script with sysbench's own connection options, as a published command
/// line gives them.
fn dbsweep_script(
    kind: ServerKind,
    server: &ManagedServer,
    command: &str,
    script: &str,
    opts: &[&str],
) -> assert_cmd::Command {
    let mut c = dbsweep();
    c.args([command, script, "--report-interval", "0"])
        .args(connection(kind, server))
        .args(opts);
    c
}

/// Every script of Debian's sysbench package, its options for a short deterministic run.
const SCRIPTS: &[(&str, &[&str])] = &[
    ("oltp_point_select", &["--tables=2", "--table-size=1000"]),
    ("oltp_read_only", &["--tables=2", "--table-size=1000"]),
    ("oltp_read_write", &["--tables=2", "--table-size=1000"]),
    ("oltp_write_only", &["--tables=2", "--table-size=1000"]),
    ("oltp_update_index", &["--tables=2", "--table-size=1000"]),
    (
        "oltp_update_non_index",
        &["--tables=2", "--table-size=1000"],
    ),
    ("oltp_delete", &["--tables=2", "--table-size=1000"]),
    ("oltp_insert", &["--tables=2", "--table-size=1000"]),
    ("select_random_points", &["--tables=1", "--table-size=1000"]),
    ("select_random_ranges", &["--tables=1", "--table-size=1000"]),
    ("bulk_insert", &[]),
];

fn same_counts_as_sysbench(kind: ServerKind) {
    let server = start(kind);
    let s = Scratch::new();
    let mut mismatches = Vec::new();
    for (script, opts) in SCRIPTS {
        let path = format!("/usr/share/sysbench/{script}.lua");
        let run_opts: Vec<&str> = opts
            .iter()
            .copied()
            .chain(["--events=300", "--time=0", "--threads=1"])
            .collect();
        sysbench(kind, &server, script, "prepare", opts);
        let theirs = sysbench_counts(&sysbench(kind, &server, script, "run", &run_opts));
        sysbench(kind, &server, script, "cleanup", opts);

        dbsweep_script(kind, &server, "prepare", &path, opts)
            .assert()
            .success();
        let out = s.path(&format!("{script}.json"));
        dbsweep_script(kind, &server, "run", &path, &run_opts)
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        let r = read_json(&out);
        let ours = (
            u(&r, "/queries/read"),
            u(&r, "/queries/write"),
            u(&r, "/queries/other"),
        );
        // A DELETE of a random id is a write when the row is still there and other when an
        // earlier event took it: which ids are drawn decides the split, not the script.
        let comparable = |(r, w, o): (u64, u64, u64)| {
            if *script == "oltp_delete" {
                (r, w + o, 0)
            } else {
                (r, w, o)
            }
        };
        if comparable(ours) != comparable(theirs) {
            mismatches.push(format!("{script}: dbsweep {ours:?}, sysbench {theirs:?}"));
        }
        dbsweep_script(kind, &server, "cleanup", &path, opts)
            .assert()
            .success();
    }
    assert!(
        mismatches.is_empty(),
        "{kind:?}: (read, write, other) differ:\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn sysbench_scripts_count_as_sysbench_on_postgres() {
    same_counts_as_sysbench(ServerKind::Postgres);
}

#[test]
fn sysbench_scripts_count_as_sysbench_on_mariadb() {
    same_counts_as_sysbench(ServerKind::Mariadb);
}

/// Writes `source` as `name` in the scratch directory and runs it on the scratch SQLite
/// database with `args`.
fn run_local(s: &Scratch, name: &str, source: &str, args: &[&str]) -> assert_cmd::Command {
    let script = s.path(name);
    std::fs::write(&script, source).unwrap();
    let mut c = dbsweep();
    c.args(["run", script.to_str().unwrap(), "--target"])
        .arg(s.target())
        .args(["--report-interval", "0"])
        .args(args);
    c
}

/// stderr of a script run that must fail with exit 1.
fn failure(s: &Scratch, source: &str) -> String {
    let out = run_local(s, "broken.lua", source, &["--time", "1"])
        .assert()
        .code(1);
    String::from_utf8_lossy(&out.get_output().stderr).to_string()
}

#[test]
fn script_errors_name_the_file_and_line() {
    let s = Scratch::new();
    let stderr = failure(
        &s,
        "function event()\n  local x = nil\n  return x.field\nend\n",
    );
    assert!(stderr.contains("broken.lua:3"), "{stderr}");
    // A bad statement: the database's error and the script's line.
    let stderr = failure(
        &s,
        "function thread_init()\n  con = sysbench.sql.driver():connect()\nend\n\nfunction event()\n  con:query('SELEC 1')\nend\n",
    );
    assert!(
        stderr.contains("broken.lua:6") && stderr.contains("syntax error"),
        "{stderr}"
    );
    // A function that does not exist.
    let stderr = failure(&s, "function event()\n  no_such_function()\nend\n");
    assert!(
        stderr.contains("broken.lua:2") && stderr.contains("no_such_function"),
        "{stderr}"
    );
    dbsweep()
        .args(["run", "no_such_script.lua"])
        .assert()
        .code(2);
}

#[test]
fn ffi_counters_and_usleep_resolve_in_the_binary() {
    let s = Scratch::new();
    let out = s.path("ffi.json");
    run_local(
        &s,
        "ffi.lua",
        "local ffi = require('ffi')\nfunction event()\n  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_READ)\n  ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_WRITE)\n  ffi.C.usleep(1)\nend\n",
        &["--events", "25", "--time", "0", "--threads", "2", "--output"],
    )
    .arg(&out)
    .assert()
    .success();
    let r = read_json(&out);
    assert_eq!(u(&r, "/events"), 25);
    assert_eq!((u(&r, "/queries/read"), u(&r, "/queries/write")), (25, 25));
}

#[test]
fn an_event_that_returns_true_stops_its_thread() {
    let s = Scratch::new();
    let out = s.path("stop.json");
    run_local(
        &s,
        "stop.lua",
        "n = 0\nfunction event()\n  n = n + 1\n  return n > 7\nend\n",
        &["--time", "0", "--threads", "3", "--output"],
    )
    .arg(&out)
    .assert()
    .success();
    // Each of the three threads counts its 7 events, not the eighth that stopped it.
    let r = read_json(&out);
    assert_eq!(u(&r, "/events"), 21);
}
