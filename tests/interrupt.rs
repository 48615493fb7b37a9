//! Ctrl-C: the run stops cleanly, prints its summary and saves results marked interrupted.

use std::process::Stdio;

use crate::util::{Scratch, assert_valid_results, dbsweep_std, read_json, spawn_measuring, u};

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
