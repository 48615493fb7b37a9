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

#[test]
fn a_run_held_past_its_time_by_another_processs_lock_counts_the_seconds_it_took() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_update_index", "--table-size", "1000"])
        .assert()
        .success();
    let out = s.path("r.json");
    let mut cmd = crate::util::dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args(["run", "oltp_update_index", "--target", &s.target()])
        .args([
            "--table-size",
            "1000",
            "--time",
            "2",
            "--report-interval",
            "1",
        ])
        .arg("--output")
        .arg(&out);
    // This process holds the write lock from before the run until 6 s into it: the run's
    // writer waits for it past the run's 2 s.
    let mut db = s.sqlite();
    let tx = db
        .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)
        .unwrap();
    let held = std::time::Instant::now();
    let (mut child, lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    while held.elapsed() < std::time::Duration::from_secs(6) {
        std::thread::park_timeout(std::time::Duration::from_millis(100));
    }
    tx.commit().unwrap();
    let stderr: Vec<String> = lines.collect();
    assert!(child.wait().unwrap().success(), "{stderr:?}");
    let r = read_json(&out);
    let took = r["time_s"].as_f64().unwrap();
    assert!(
        took > 4.0,
        "time_s {took}: the divisor is --time, not the time taken"
    );
    let events = r["events"].as_f64().unwrap();
    assert!((r["tps"].as_f64().unwrap() - events / took).abs() < 1e-6 * events.max(1.0));
    assert!(
        stderr.iter().any(|l| l.contains("after --time 2")),
        "{stderr:?}"
    );
}

/// The client's peak resident memory of a mock run with `args`, in KB (the step's own
/// high-water mark, from its results file).
fn mock_peak_kb(s: &Scratch, name: &str, args: &[&str]) -> u64 {
    let res = s.path(name);
    dbsweep()
        .args(["run", "--target", "mock://", "--report-interval", "0"])
        .args(args)
        .arg("--output")
        .arg(&res)
        .assert()
        .success();
    read_json(&res)["hw"]["client_peak_rss_kb"]
        .as_u64()
        .expect("the client's peak")
}

#[test]
fn memory_does_not_grow_by_megabytes_with_a_scripts_commands_or_the_clients() {
    // Each command of a script timed apart once held a histogram of 270 KB, twice: a
    // 10,000-command script took 10.5 GB for one transaction. The bench `memory` prints the
    // figures against the targets (100 MB, 150 MB, 300 KB a client thread); here,
    // bounds far above them and far below what the histograms took.
    let s = Scratch::new();
    let script = s.path("long.sql");
    let text: String = (0..10_000).map(|i| format!("SELECT {i};\n")).collect();
    std::fs::write(&script, text).unwrap();
    let long = mock_peak_kb(
        &s,
        "long.json",
        &[
            "pgbench",
            "--script",
            script.to_str().unwrap(),
            "--events",
            "1",
            "--time",
            "0",
            "--statement-times",
            "on",
        ],
    );
    assert!(long < 400 << 10, "a 10,000-command script took {long} KB");
    // 200 clients of oltp_read_write, whose events time 11 kinds of statement each.
    let clients = mock_peak_kb(
        &s,
        "clients.json",
        &[
            "oltp_read_write",
            "--threads",
            "200",
            "--connect-rate",
            "0",
            "--events",
            "20000",
            "--time",
            "0",
        ],
    );
    assert!(clients < 300 << 10, "200 clients took {clients} KB");
}

#[test]
fn ctrl_c_ends_a_script_whose_done_never_returns() {
    let s = Scratch::new();
    s.sqlite().execute_batch("VACUUM").unwrap();
    let script = s.path("forever.lua");
    std::fs::write(
        &script,
        "function event() end\nfunction done()\n  io.stderr:write('in done\\n')\n  local i = 0\n  while true do i = i + 1 end\nend\n",
    )
    .unwrap();
    let mut cmd = crate::util::dbsweep_std();
    cmd.args(["run", script.to_str().unwrap(), "--target", &s.target()])
        .args(["--time", "2", "--report-interval", "1"]);
    let (mut child, mut lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    // The run ends at 2 s and enters done(); Ctrl-C comes while it loops.
    assert!(lines.any(|l| l.contains("in done")), "done() never began");
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let stopped = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if stopped.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("done() went on 30 s after Ctrl-C");
        }
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
}
