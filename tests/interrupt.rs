//! Ctrl-C: the run stops cleanly, prints its summary and saves results marked interrupted.

use std::process::Stdio;

use crate::util::{Scratch, assert_valid_results, dbsweep_std, read_json, spawn_measuring, u};
use dbsweep::server::ServerKind;

/// Starts `dbsweep run ARGS --time 600` on the scratch database, sends SIGINT once the first
/// interval line shows it measuring, and checks that it stopped cleanly: exit 130, the summary
/// marked interrupted, a valid results file marked so, no temporary file left.
fn interrupt_run(s: &Scratch, args: &[&str]) {
    let out = s.path("r.json");
    let (child, lines) = spawn_measuring(
        dbsweep_std()
            .arg("run")
            .args(args)
            .args(["--time", "600", "--target", &s.target()])
            .arg("--output")
            .arg(&out)
            .stdout(Stdio::piped()),
        "[ 1s ]",
    );
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let rest: Vec<String> = lines.collect();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{args:?} stderr: {rest:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("SQL statistics") && stdout.contains("Interrupted"),
        "{stdout}"
    );
    let r = read_json(&out);
    assert_valid_results(&r);
    assert_eq!(r["interrupted"], true);
    assert!(u(&r, "/events") > 0);
    assert!(r["time_s"].as_f64().unwrap() < 600.0);
    let leftovers: Vec<_> = std::fs::read_dir(s.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn sigint_leaves_a_valid_results_file_marked_interrupted() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    interrupt_run(&s, &["oltp_point_select", "--table-size", "1000"]);
}

#[test]
fn sigint_stops_a_lua_script_cleanly_too() {
    // A script's `event`, and a script's own loop (`thread_run`).
    let s = Scratch::new();
    let event = s.path("event.lua");
    std::fs::write(
        &event,
        "function thread_init()\n  con = sysbench.sql.driver():connect()\nend\nfunction event()\n  con:query('SELECT 1')\nend\n",
    )
    .unwrap();
    let own = s.path("own.lua");
    std::fs::write(
        &own,
        "local ffi = require('ffi')\nfunction event() end\nfunction thread_run(tid)\n  local con = sysbench.sql.driver():connect()\n  while ffi.C.sb_more_events(tid) do\n    ffi.C.sb_event_start(tid)\n    con:query('SELECT 1')\n    ffi.C.sb_event_stop(tid)\n  end\nend\n",
    )
    .unwrap();
    for script in [event, own] {
        interrupt_run(&s, &[script.to_str().unwrap(), "--threads", "2"]);
    }
}

#[test]
fn ctrl_c_ends_everything_a_shell_command_of_a_script_started() {
    let s = Scratch::new();
    s.sqlite().execute_batch("VACUUM").unwrap();
    let pidfile = s.path("sleep.pid");
    let script = s.path("t.sql");
    // The shell forks the inner one (`; true` keeps it from exec'ing), which becomes the sleep.
    std::fs::write(
        &script,
        format!(
            "\\shell sh -c 'echo $$ > {}; exec sleep 300'; true\n",
            pidfile.display()
        ),
    )
    .unwrap();
    let mut cmd = crate::util::dbsweep_std();
    cmd.args(["run", "pgbench", "--target", &s.target()])
        .args(["--script", script.to_str().unwrap()])
        .args(["--time", "600", "--report-interval", "1"]);
    let (mut child, _lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("the shell command ran in the first second")
        .trim()
        .parse()
        .unwrap();
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // Gone, or a zombie waiting for its new parent: not sleeping on.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|st| {
            st.rsplit_once(')')
                .map(|(_, r)| r.trim().chars().next().unwrap())
        });
    if state.is_some_and(|c| c != 'Z') {
        // SAFETY: clean up what the code under test left running.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        panic!("the shell's child {pid} outlived Ctrl-C");
    }
}

/// The statements of another session still running `needle` on the server at `url`.
fn running_elsewhere(url: &str, kind: ServerKind, needle: &str) -> i64 {
    let sql = match kind {
        ServerKind::Postgres => format!(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' \
             AND pid <> pg_backend_pid() AND query LIKE '%{needle}%'"
        ),
        _ => format!(
            "SELECT count(*) FROM information_schema.processlist WHERE id <> CONNECTION_ID() \
             AND command = 'Query' AND info LIKE '%{needle}%'"
        ),
    };
    dbsweep::db::open(url, Default::default())
        .unwrap()
        .connect()
        .unwrap()
        .query_i64(&sql)
        .unwrap()
        .unwrap_or(0)
}

per_server!(
    ctrl_c_cancels_the_statement_on_the_server,
    |kind: ServerKind| {
        let s = Scratch::new();
        let server = crate::util::start(kind);
        let (sleep, needle) = match kind {
            ServerKind::Postgres => ("SELECT pg_sleep(300);", "pg_sleep(300)"),
            _ => ("SELECT SLEEP(300);", "SLEEP(300)"),
        };
        let script = s.path("long.sql");
        std::fs::write(&script, format!("{sleep}\n")).unwrap();
        let mut cmd = crate::util::dbsweep_std();
        cmd.args(["run", "pgbench", "--target", &server.url])
            .args(["--script", script.to_str().unwrap()])
            .args(["--time", "600", "--report-interval", "1"]);
        let (mut child, _lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
        assert_eq!(running_elsewhere(&server.url, kind, needle), 1);
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(child.wait().unwrap().code(), Some(130));
        // The server ends the statement on the cancel's arrival: within seconds, not 300.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while running_elsewhere(&server.url, kind, needle) > 0 {
            assert!(
                std::time::Instant::now() < until,
                "the server still runs the statement Ctrl-C stopped"
            );
            std::thread::park_timeout(std::time::Duration::from_millis(50));
        }
    }
);

#[test]
fn ctrl_c_ends_pgbench_init_of_many_partitions_at_once() {
    let server = crate::util::start(ServerKind::Postgres);
    let mut cmd = crate::util::dbsweep_std();
    cmd.arg("pgbench")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
            "-U",
            "sbtest",
        ])
        .args(["-i", "-s", "1", "--partitions", "20000", "sbtest"]);
    let (mut child, _lines) = crate::util::spawn_measuring(&mut cmd, "creating 20000 partitions");
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let stopped = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if stopped.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("pgbench -i went on 20 s after Ctrl-C");
        }
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    };
    assert_ne!(status.code(), Some(0));
}
