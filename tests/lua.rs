//! sysbench's own Lua scripts, unmodified, run by dbsweep on managed PostgreSQL and MariaDB,
//! with the same per-event counts as sysbench 1.0.20 reports for the same options.

use std::process::Command;

use dbsweep::server::{ManagedServer, ServerKind};

use crate::util::{Scratch, dbsweep, read_json, start, sysbench_connection, u};

pub(crate) fn sysbench(
    kind: ServerKind,
    server: &ManagedServer,
    script: &str,
    command: &str,
    opts: &[&str],
) -> String {
    let out = Command::new("sysbench")
        .arg(script)
        .args(sysbench_connection(kind, server))
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
pub(crate) fn sysbench_counts(text: &str) -> (u64, u64, u64) {
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
pub(crate) fn dbsweep_script(
    kind: ServerKind,
    server: &ManagedServer,
    command: &str,
    script: &str,
    opts: &[&str],
) -> assert_cmd::Command {
    let mut c = dbsweep();
    c.args([command, script, "--report-interval", "0"])
        .args(sysbench_connection(kind, server))
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

#[test]
fn sysbench_scripts_count_as_sysbench_on_mysql() {
    same_counts_as_sysbench(ServerKind::Mysql);
}

/// Writes `source` as `name` in the scratch directory and runs it on the scratch SQLite
/// database with `args`.
pub(crate) fn run_local(
    s: &Scratch,
    name: &str,
    source: &str,
    args: &[&str],
) -> assert_cmd::Command {
    let script = s.path(name);
    std::fs::write(&script, source).unwrap();
    let mut c = dbsweep();
    c.args(["run", script.to_str().unwrap(), "--target"])
        .arg(s.target());
    if !args.contains(&"--report-interval") {
        c.args(["--report-interval", "0"]);
    }
    c.args(args);
    c
}

/// stdout and stderr of a script run (as `run_local`) that must succeed.
fn output_of(s: &Scratch, name: &str, source: &str, args: &[&str]) -> (String, String) {
    let run = run_local(s, name, source, args).assert().success();
    let o = run.get_output();
    (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

/// stderr of a script run that must fail with exit 1.
pub(crate) fn failure(s: &Scratch, source: &str) -> String {
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

#[test]
fn report_hooks_replace_the_printed_reports_with_sysbench_fields() {
    let s = Scratch::new();
    let out = s.path("hooks.json");
    let (stdout, stderr) = output_of(
        &s,
        "hooks.lua",
        r#"
function thread_init() con = sysbench.sql.driver():connect() end
function event() con:query("SELECT 1") end
function sysbench.hooks.report_intermediate(stat)
  print(string.format("INTERMEDIATE threads=%d interval=%s", stat.threads_running,
    tostring(stat.time_interval > 0 and stat.reads == stat.events)))
  sysbench.report_csv(stat)
end
function sysbench.hooks.report_cumulative(stat)
  print(string.format("CUMULATIVE events=%d reads=%d writes=%d other=%d latency=%s",
    stat.events, stat.reads, stat.writes, stat.other,
    tostring(stat.latency_min <= stat.latency_avg and stat.latency_avg <= stat.latency_max
      and stat.latency_pct > 0)))
end
"#,
        &[
            "--time",
            "2",
            "--threads",
            "2",
            "--report-interval",
            "1",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let r = read_json(&out);
    let events = u(&r, "/events");
    assert!(events > 0);
    // Every interval went to the hook (each one prints its line and a CSV line), none to
    // dbsweep's own line; the summary went to the cumulative hook instead of dbsweep's.
    let intermediate: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("INTERMEDIATE"))
        .collect();
    assert!(!intermediate.is_empty(), "{stdout}");
    assert!(
        intermediate
            .iter()
            .all(|l| *l == "INTERMEDIATE threads=2 interval=true"),
        "{stdout}"
    );
    let csv = stdout
        .lines()
        .filter(|l| l.split(',').count() == 10 && l.split(',').nth(1) == Some("2"))
        .count();
    assert_eq!(csv, intermediate.len(), "{stdout}");
    assert!(!stderr.contains("thds:"), "{stderr}");
    assert!(
        stdout.contains(&format!(
            "CUMULATIVE events={events} reads={events} writes=0 other=0 latency=true"
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("queries:"), "{stdout}");
}

#[test]
fn report_json_prints_the_intervals_and_the_cumulative_report_as_two_json_arrays() {
    let s = Scratch::new();
    let (stdout, _) = output_of(
        &s,
        "json.lua",
        "function event() end\nsysbench.hooks.report_intermediate = sysbench.report_json\nsysbench.hooks.report_cumulative = sysbench.report_json\n",
        &["--time", "2", "--report-interval", "1"],
    );
    // sysbench reports intervals in a state of their own, closed before the cumulative
    // report: one array each.
    let start = stdout.find('[').expect("an array");
    let end = stdout.rfind(']').expect("closed");
    let arrays: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&stdout[start..=end])
        .into_iter::<serde_json::Value>()
        .collect::<Result<_, _>>()
        .expect("valid JSON");
    assert_eq!(arrays.len(), 2, "{stdout}");
    let intervals = arrays[0].as_array().unwrap();
    let cumulative = arrays[1].as_array().unwrap();
    assert!(!intervals.is_empty(), "{stdout}");
    assert!(
        intervals
            .iter()
            .all(|i| i["threads"] == 1 && i["qps"]["total"] == 0.0),
        "{stdout}"
    );
    // The run has ended when it is reported: no thread runs.
    assert_eq!(cumulative.len(), 1, "{stdout}");
    assert_eq!(cumulative[0]["threads"], 0, "{stdout}");
}

/// A script whose every second event call fails on a missing table; `ignore` is the hook
/// `sql_error_ignorable` (or nothing). Each restart is counted by `before_restart_event`.
fn flaky_script(ignore: &str) -> String {
    format!(
        r#"
function thread_init() con = sysbench.sql.driver():connect() n = 0 restarts = 0 end
function event()
  n = n + 1
  if n % 2 == 0 then con:query("SELECT * FROM no_such_table_xyz") end
  con:query("SELECT 1")
end
{ignore}
function sysbench.hooks.before_restart_event(err)
  assert(err.errcode == sysbench.error.RESTART_EVENT and err.sql_errmsg ~= "")
  restarts = restarts + 1
end
function thread_done() print("RESTARTS " .. restarts) end
"#
    )
}

const IGNORE_MISSING_TABLE: &str = r#"
function sysbench.hooks.sql_error_ignorable(err)
  return err.sql_errmsg:find("no_such_table_xyz") ~= nil
end"#;

/// Runs `source` on `server` for 10 events on one thread; the results and stdout, or None
/// when the run fails with exit 1 (then stderr must name the script's line).
fn run_flaky(
    kind: ServerKind,
    server: &ManagedServer,
    s: &Scratch,
    source: &str,
    extra: &[&str],
) -> Option<(serde_json::Value, String)> {
    let script = s.path("flaky.lua");
    std::fs::write(&script, source).unwrap();
    let out = s.path("flaky.json");
    let _ = std::fs::remove_file(&out);
    let mut c = dbsweep_script(kind, server, "run", script.to_str().unwrap(), extra);
    c.args(["--events", "10", "--time", "0", "--output"])
        .arg(&out);
    let o = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    match o.status.code() {
        Some(0) => Some((read_json(&out), stdout)),
        Some(1) => {
            assert!(
                stderr.contains("flaky.lua:5") && stderr.contains("no_such_table_xyz"),
                "{stderr}"
            );
            None
        }
        other => panic!("exit {other:?}: {stderr}"),
    }
}

fn ignorable_errors_restart_the_event(kind: ServerKind) {
    let server = start(kind);
    let s = Scratch::new();
    // Ten events succeed; the nine failed calls between them restart their event.
    let check = |(r, stdout): (serde_json::Value, String)| {
        assert_eq!(u(&r, "/events"), 10);
        assert_eq!(u(&r, "/queries/read"), 10);
        assert_eq!(u(&r, "/errors/ignored"), 9);
        assert!(stdout.contains("RESTARTS 9"), "{stdout}");
    };
    check(run_flaky(kind, &server, &s, &flaky_script(IGNORE_MISSING_TABLE), &[]).expect("runs"));
    // Not ignorable: the run stops with the script's line.
    assert!(run_flaky(kind, &server, &s, &flaky_script(""), &[]).is_none());
    if kind == ServerKind::Mariadb {
        // MySQL's missing table is error 1146.
        let flaky = flaky_script("");
        check(run_flaky(kind, &server, &s, &flaky, &["--mysql-ignore-errors=1146"]).expect("runs"));
        check(run_flaky(kind, &server, &s, &flaky, &["--mysql-ignore-errors=all"]).expect("runs"));
    }
}

#[test]
fn ignorable_errors_restart_the_event_on_postgres() {
    ignorable_errors_restart_the_event(ServerKind::Postgres);
}

#[test]
fn ignorable_errors_restart_the_event_on_mariadb() {
    ignorable_errors_restart_the_event(ServerKind::Mariadb);
}

#[test]
fn ignorable_errors_restart_the_event_on_mysql() {
    ignorable_errors_restart_the_event(ServerKind::Mysql);
}

#[test]
fn a_script_may_restart_its_event_itself() {
    let s = Scratch::new();
    let out = s.path("restart.json");
    let (stdout, _) = output_of(
        &s,
        "restart.lua",
        r#"
n = 0 restarts = 0
function event()
  n = n + 1
  if n % 3 == 0 then error({errcode = sysbench.error.RESTART_EVENT}) end
end
function sysbench.hooks.before_restart_event(err) restarts = restarts + 1 end
function thread_done() print("RESTARTS " .. restarts) end
"#,
        &[
            "--events",
            "20",
            "--time",
            "0",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    // Calls 3, 6, ..., 27 restart: 9 restarts for 20 events.
    assert!(stdout.contains("RESTARTS 9"), "{stdout}");
    let r = read_json(&out);
    assert_eq!((u(&r, "/events"), u(&r, "/errors/ignored")), (20, 9));
}

#[test]
fn sysbench_05_scripts_run_with_the_old_globals() {
    let s = Scratch::new();
    let source = r#"
function prepare()
  assert(db_driver == "sqlite" and type(legacy_rows) == "number", "legacy globals")
  db_query("CREATE TABLE legacy_t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
  db_bulk_insert_init("INSERT INTO legacy_t (id, v) VALUES")
  for i = 1, legacy_rows do db_bulk_insert_next("(" .. i .. ", 0)") end
  db_bulk_insert_done()
end

function thread_init(id)
  assert(id == thread_id)
  stmt = db_prepare("UPDATE legacy_t SET v = v + 1 WHERE id = ?")
  params = {0}
  db_bind_param(stmt, params)
end

function event(id)
  params[1] = sb_rand(1, legacy_rows)
  db_execute(stmt)
  db_query("SELECT v FROM legacy_t WHERE id = " .. sb_rand_uniform(1, legacy_rows))
end

function cleanup()
  -- sysbench 1.0's db_query returns nothing (it frees what it read): the rows come through
  -- the SQL API.
  assert(db_query("SELECT SUM(v) FROM legacy_t") == nil, "db_query returns nothing")
  local sum, rows = sysbench.sql.driver():connect():query_row("SELECT SUM(v), COUNT(*) FROM legacy_t")
  print("SUM " .. sum .. " ROWS " .. rows)
  db_query("DROP TABLE legacy_t")
end
"#;
    let script = s.path("legacy.lua");
    std::fs::write(&script, source).unwrap();
    let cmd = |command: &str| {
        let mut c = dbsweep();
        c.args([command, script.to_str().unwrap(), "--target"])
            .arg(s.target())
            .args(["--legacy-rows=5", "--report-interval", "0"]);
        c
    };
    cmd("prepare").assert().success();
    let out = s.path("legacy.json");
    cmd("run")
        .args([
            "--events",
            "40",
            "--time",
            "0",
            "--threads",
            "2",
            "--output",
        ])
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    assert_eq!((u(&r, "/queries/read"), u(&r, "/queries/write")), (40, 40));
    // Every bound value was read at its execute: 40 updates of existing rows.
    cmd("cleanup")
        .assert()
        .success()
        .stdout(predicates::str::contains("SUM 40 ROWS 5"));
}

#[test]
fn script_output_keeps_its_place_among_dbsweeps_own() {
    let s = Scratch::new();
    // stdout is a pipe here: the script's lines (C stdio) come before dbsweep's summary.
    let (stdout, _) = output_of(
        &s,
        "default.lua",
        "function event() end\nsysbench.hooks.report_intermediate = sysbench.report_default\n",
        &["--time", "2", "--report-interval", "1"],
    );
    let line = stdout
        .find("[ 1s ] thds: 1 tps: ")
        .expect("sysbench's line");
    let summary = stdout.find("SQL statistics:").expect("dbsweep's summary");
    assert!(line < summary, "{stdout}");
}

/// Issue 18: a script that counts its own errors through the FFI (as TPC-C scripts count their
/// deliberate New-Order rollbacks) reports them as sysbench does, on the same server.
#[test]
fn errors_a_script_counts_through_the_ffi_are_reported_as_sysbench_reports_them() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    let script = s.path("rollbacks.lua");
    std::fs::write(
        &script,
        "local ffi = require('ffi')\nlocal n = 0\n\
         ffi.cdef[[void sb_counter_inc(int, sb_counter_type);]]\n\
         function thread_init()\n  drv = sysbench.sql.driver()\n  con = drv:connect()\nend\n\
         function event()\n  n = n + 1\n  con:query('BEGIN')\n  con:query('SELECT 1')\n\
           if n % 10 == 0 then\n    con:query('ROLLBACK')\n\
             ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)\n\
           else\n    con:query('COMMIT')\n  end\nend\n\
         function thread_done()\n  con:disconnect()\nend\n",
    )
    .unwrap();
    let script = script.to_str().unwrap();
    let opts = ["--events=200", "--time=0", "--threads=1"];
    let ignored = |text: &str| -> String {
        text.lines()
            .find_map(|l| l.trim().strip_prefix("ignored errors:"))
            .unwrap_or_else(|| panic!("no ignored errors in\n{text}"))
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let theirs = sysbench(ServerKind::Postgres, &server, script, "run", &opts);
    let out = s.path("r.json");
    let ours = dbsweep_script(ServerKind::Postgres, &server, "run", script, &opts)
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    let ours = String::from_utf8_lossy(&ours.get_output().stdout).to_string();
    assert_eq!(ignored(&theirs), "20", "{theirs}");
    assert_eq!(ignored(&ours), ignored(&theirs), "{ours}");
    let r = read_json(&out);
    assert_eq!(u(&r, "/errors/script"), 20, "{}", r["errors"]);
    assert_eq!(
        u(&r, "/retries"),
        0,
        "counted errors are not retried events"
    );
    assert_eq!(u(&r, "/events"), 200);
}

/// Issue 18: published scripts' READMEs write `sysbench SCRIPT.lua [options] run`; dbsweep
/// takes the command after the options (and options before the script), and a bad option is
/// one line, not clap's usage of another command under a doubled "error: error:".
#[test]
fn the_command_after_the_options_runs_as_in_sysbench() {
    let s = Scratch::new();
    let script = s.path("count.lua");
    std::fs::write(
        &script,
        "sysbench.cmdline.options = { size = {'a size', 1} }\nfunction event()\nend\n",
    )
    .unwrap();
    let script = script.to_str().unwrap();
    let out = s.path("r.json");
    dbsweep()
        .args([
            "lua",
            script,
            "--events=7",
            "--time=0",
            "--report-interval=0",
        ])
        .arg(format!("--output={}", out.display()))
        .arg("run")
        .assert()
        .success();
    assert_eq!(u(&read_json(&out), "/events"), 7);
    let out2 = s.path("r2.json");
    dbsweep()
        .args([
            "run",
            "--events=5",
            "--time=0",
            script,
            "--report-interval=0",
        ])
        .arg(format!("--output={}", out2.display()))
        .assert()
        .success();
    assert_eq!(u(&read_json(&out2), "/events"), 5);
    let bad = dbsweep()
        .args(["lua", script, "--no-such-option=1", "--time=1", "run"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&bad.get_output().stderr).to_string();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("dbsweep: error: ") && !stderr.contains("error: error:"),
        "{stderr}"
    );
    assert!(stderr.contains("--no-such-option"), "{stderr}");
}

/// sysbench's SQL API as its own suite sees it: the error codes, the objects' names when
/// printed, and a CHAR parameter cut to the length it was created with (on embedded SQLite).
#[test]
fn sql_api_error_codes_printed_objects_and_char_widths_are_sysbenchs() {
    let s = Scratch::new();
    let script = "function event()\n  local drv = sysbench.sql.driver()\n  local con = drv:connect()\n  print(sysbench.sql.error.NONE, sysbench.sql.error.IGNORABLE, sysbench.sql.error.FATAL)\n  print(drv, con)\n  con:query('DROP TABLE IF EXISTS w')\n  con:query('CREATE TABLE w(b CHAR(10))')\n  local st = con:prepare('INSERT INTO w VALUES (?)')\n  local b = st:bind_create(sysbench.sql.type.CHAR, 3)\n  print(st, b)\n  st:bind_param(b)\n  b:set('abcdef')\n  st:execute()\n  local rs = con:query('SELECT b FROM w')\n  print(rs, rs:fetch_row()[1])\n  con:query('DROP TABLE w')\nend\n";
    let (stdout, _) = output_of(&s, "api.lua", script, &["--events", "1", "--time", "0"]);
    assert!(stdout.contains("0\t1\t2\n"), "{stdout}");
    assert!(
        stdout.contains("<sql_driver>\t<sql_connection>\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("<sql_statement>\t<sql_param>\n"),
        "{stdout}"
    );
    assert!(stdout.contains("<sql_result>\tabc\n"), "{stdout}");
}
