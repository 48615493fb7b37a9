//! Every wait has a bound: a script whose code never returns ends at the end of `--time` and on
//! the first Ctrl-C, a script that restarts every event ends at `--time` with its restarts
//! counted, a script's heap has a cap, client counts the machine cannot hold are refused
//! before any client starts, and a thread that panics ends the process with its message.

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{HANG, wait_bounded};
use crate::util::{Scratch, dbsweep, dbsweep_std, read_json, spawn_measuring, u};

/// `dbsweep run SCRIPT --time 1` on the scratch database, bounded by [`HANG`]: its exit code,
/// stderr and how long it ran.
fn run_script(s: &Scratch, source: &str, extra: &[&str]) -> (Option<i32>, String, Duration) {
    let script = s.path("script.lua");
    std::fs::write(&script, source).unwrap();
    let began = Instant::now();
    let out = dbsweep()
        .args(["run", script.to_str().unwrap(), "--target", &s.target()])
        .args(["--time", "1", "--report-interval", "0"])
        .args(extra)
        .timeout(HANG)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        began.elapsed(),
    )
}

#[test]
fn an_event_that_never_returns_ends_after_the_end_of_time() {
    let s = Scratch::new();
    // A loop the interpreter runs (the script turned the JIT off): the hook stops it, and the
    // error names the script's line.
    let (code, stderr, took) = run_script(
        &s,
        "jit.off()\nfunction event()\n  while true do end\nend\n",
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("script.lua:3: still running 5 s after the end of --time"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    // A loop LuaJIT compiles, where no hook runs: the watch ends the process.
    let (code, stderr, _) = run_script(&s, "function event() while true do end end\n", &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("still running 10 s after the end of --time"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Starts `dbsweep run SCRIPT help` with a script whose top level writes `ready` to stderr and
/// then loops; sends SIGINT once it is ready; returns the exit code and the rest of stderr.
fn interrupt_top_level(s: &Scratch, source: &str) -> (Option<i32>, String) {
    let script = s.path("top.lua");
    std::fs::write(&script, source).unwrap();
    let (mut child, lines) = spawn_measuring(
        dbsweep_std()
            .args(["run", script.to_str().unwrap(), "help"])
            .stdout(Stdio::null()),
        "ready",
    );
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = wait_bounded(&mut child);
    let rest: Vec<String> = lines.collect();
    (status.code(), rest.join("\n"))
}

#[test]
fn a_top_level_that_never_returns_ends_on_the_first_ctrl_c() {
    let s = Scratch::new();
    let (code, stderr) = interrupt_top_level(
        &s,
        "jit.off()\nio.stderr:write('ready\\n')\nwhile true do end\n",
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("top.lua:3: stopped by Ctrl-C"), "{stderr}");
    let (code, stderr) =
        interrupt_top_level(&s, "io.stderr:write('ready\\n')\nwhile true do end\n");
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("did not stop within 5 s of Ctrl-C"),
        "{stderr}"
    );
}

#[test]
fn a_script_that_restarts_every_event_ends_at_time_with_its_restarts_counted() {
    let s = Scratch::new();
    let out = s.path("r.json");
    let (code, stderr, took) = run_script(
        &s,
        "function event() error({errcode = sysbench.error.RESTART_EVENT}) end\n",
        &["--output", out.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    let r = read_json(&out);
    assert_eq!(u(&r, "/events"), 0);
    assert!(u(&r, "/errors/ignored") > 100, "{}", r["errors"]);
}

#[test]
fn a_script_past_its_heap_cap_fails_with_lua_words_not_an_abort() {
    let s = Scratch::new();
    // The machine's available memory is shared among the run's states: with 64 clients each
    // has at most a 65th of it.
    let (code, stderr, _) = run_script(
        &s,
        "function event()\n  if sysbench.tid > 0 then return true end\n  local t = {}\n  for i = 1, 1e9 do t[i] = string.rep('x', 1000) .. i end\nend\n",
        &["--threads", "64", "--time", "30"],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("not enough memory: the script's heap"),
        "{stderr}"
    );
}

#[test]
fn client_counts_the_machine_cannot_hold_are_refused_before_any_client_starts() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    // 100,000 SQLite clients (on two threads) need a hundred GiB: refused at once, nothing
    // connected.
    let (code, stderr) = exit_and_stderr(
        dbsweep_std()
            .args([
                "run",
                "oltp_point_select",
                "--table-size",
                "1000",
                "--time",
                "5",
            ])
            .args([
                "--threads",
                "100000",
                "--workers",
                "2",
                "--target",
                &s.target(),
            ]),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("100000 client connection(s) on sqlite need about")
            && stderr.contains("available")
            && stderr.contains("cache_size"),
        "{stderr}"
    );
    let errors = stderr.lines().filter(|l| l.contains("error")).count();
    assert_eq!(errors, 1, "{stderr}");
}

#[test]
fn a_thread_that_panics_ends_the_process_with_its_message() {
    // The mock's third connection is a client thread's, opened before the clients start
    // together: the others would wait for it forever (and a signal would not end the wait).
    let (code, stderr) = exit_and_stderr(
        dbsweep_std()
            .args([
                "run",
                "oltp_point_select",
                "--threads",
                "2",
                "--time",
                "600",
            ])
            .args([
                "--report-interval",
                "0",
                "--target",
                "mock://?panic_connect=3",
            ])
            .env("RUST_BACKTRACE", "0"),
    );
    assert_eq!(code, Some(101), "{stderr}");
    assert!(
        stderr.contains("connection 3 panics") && stderr.contains("stopped at once"),
        "{stderr}"
    );
}

/// Runs `cmd` to its end, bounded by [`HANG`]: its exit code and stderr.
fn exit_and_stderr(cmd: &mut std::process::Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_bounded(&mut child);
    let mut stderr = String::new();
    let mut pipe = child.stderr.take().unwrap();
    pipe.read_to_string(&mut stderr).unwrap();
    (status.code(), stderr)
}
