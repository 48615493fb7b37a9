//! dbsweep as a drop-in for sysbench 1.0.20: a driver script calls `sysbench` through a link
//! to dbsweep and parses its output as it parses sysbench's, on real PostgreSQL and MariaDB
//! servers, with sysbench itself as the reference.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use dbsweep::server::{ManagedServer, ServerKind};

use crate::util::{Scratch, dbsweep, read_json, root_of, start, sysbench_connection};

/// A directory holding `sysbench`, a link to the dbsweep binary.
fn link(s: &Scratch) -> PathBuf {
    let dir = s.path("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("sysbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &link).unwrap();
    link
}

/// A driver as performance engineers write them: options before and after the script, the
/// command last, and the summary parsed with grep and awk into `name=value` words.
const DRIVER: &str = r#"#!/bin/bash
set -e
SB=$1; shift
for t in oltp_point_select oltp_read_only oltp_read_write oltp_write_only oltp_update_index oltp_update_non_index oltp_delete oltp_insert select_random_points select_random_ranges; do
  $SB --threads=1 $t "$@" --tables=1 --table-size=500 prepare > /dev/null
  out=$($SB --threads=1 $t "$@" --table-size=500 --tables=1 --events=200 --time=0 --rand-seed=5 --skip-trx=off run)
  $SB $t "$@" --tables=1 cleanup > /dev/null
  tx=$(echo "$out" | grep 'transactions:' | awk '{print $2}')
  q=$(echo "$out" | grep 'queries:' | awk '{print $2}')
  r=$(echo "$out" | grep ' read:' | awk '{print $2}')
  w=$(echo "$out" | grep ' write:' | awk '{print $2}')
  o=$(echo "$out" | grep ' other:' | awk '{print $2}')
  tps=$(echo "$out" | grep 'transactions:' | awk '{print $3}' | tr -d '(')
  p=$(echo "$out" | grep 'percentile:' | awk '{print $3}')
  avg=$(echo "$out" | grep 'avg:' | awk '{print $2}')
  tt=$(echo "$out" | grep 'total time:' | awk '{print $3}')
  ev=$(echo "$out" | grep 'events (avg/stddev):' | awk '{print $3}')
  ex=$(echo "$out" | grep 'execution time (avg/stddev):' | awk '{print $4}')
  echo "$t tx=$tx q=$q r=$r w=$w o=$o tps=$tps pct=$p avg=$avg time=$tt events=$ev exec=$ex"
done
"#;

/// Runs the driver with `sysbench` and returns its words per script.
fn drive(
    s: &Scratch,
    sysbench: &Path,
    conn: &[String],
) -> BTreeMap<String, BTreeMap<String, String>> {
    let driver = s.path("driver.sh");
    std::fs::write(&driver, DRIVER).unwrap();
    let out = Command::new("bash")
        .arg(&driver)
        .arg(sysbench)
        .args(conn)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{} failed:\n{text}\n{}",
        sysbench.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(|l| {
            let mut words = l.split_whitespace();
            let script = words.next().unwrap().to_string();
            let fields = words
                .map(|w| {
                    let (k, v) = w.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect();
            (script, fields)
        })
        .collect()
}

/// The kind of a parsed field: what a driver can do with it.
fn kind(v: &str) -> &'static str {
    if v.parse::<u64>().is_ok() {
        "count"
    } else if v.parse::<f64>().is_ok() {
        "decimal"
    } else if v
        .strip_suffix('s')
        .is_some_and(|n| n.parse::<f64>().is_ok())
    {
        "seconds"
    } else if v
        .split_once('/')
        .is_some_and(|(a, b)| a.parse::<f64>().is_ok() && b.parse::<f64>().is_ok())
    {
        "average/deviation"
    } else {
        "other"
    }
}

fn same_fields_both_ways(kind_: ServerKind) {
    let server = start(kind_);
    let s = Scratch::new();
    let conn = sysbench_connection(kind_, &server);
    let theirs = drive(&s, Path::new("/usr/bin/sysbench"), &conn);
    let ours = drive(&s, &link(&s), &conn);
    assert_eq!(theirs.len(), 10, "{theirs:?}");
    assert_eq!(
        theirs.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>()
    );
    for (script, t) in &theirs {
        let o = &ours[script];
        for (field, v) in t {
            let mine = &o[field];
            assert_ne!(kind(v), "other", "{script} {field}={v} (sysbench)");
            // Counts per transaction are the same; a DELETE of a drawn id is a write or an
            // other depending on whether an earlier event took the row.
            let by_draw = *script == "oltp_delete" && (field == "w" || field == "o");
            if ["tx", "q", "r", "w", "o"].contains(&field.as_str()) && !by_draw {
                assert_eq!(mine, v, "{script} {field}: dbsweep {o:?}, sysbench {t:?}");
            } else {
                assert_eq!(
                    kind(mine),
                    kind(v),
                    "{script} {field}: dbsweep {mine}, sysbench {v}"
                );
            }
        }
    }
}

#[test]
fn a_driver_parses_the_same_fields_from_the_link_as_from_sysbench_on_postgres() {
    same_fields_both_ways(ServerKind::Postgres);
}

#[test]
fn a_driver_parses_the_same_fields_from_the_link_as_from_sysbench_on_mariadb() {
    same_fields_both_ways(ServerKind::Mariadb);
}

#[test]
fn a_driver_parses_the_same_fields_from_the_link_as_from_sysbench_on_mysql() {
    same_fields_both_ways(ServerKind::Mysql);
}

/// A script with a dashed option, an option named like sysbench's `--threads`, and the other
/// kinds of options `help` shows.
const OPTIONS_SCRIPT: &str = r#"
sysbench.cmdline.options = {
  ["cpu-max-prime"] = {"Upper limit for primes", 10000},
  threads = {"A script option named like sysbench's", 7},
  flag = {"A boolean", false},
  name = {"A string", "abc"},
  list = {"A list", {"a", "b"}},
  nodefault = {"No default"},
}
function thread_init() print("thread " .. sysbench.tid .. " prime " .. sysbench.opt.cpu_max_prime .. " flag " .. tostring(sysbench.opt.flag) .. " threads " .. sysbench.opt.threads) end
function event() end
"#;

/// The lines of `--histogram`'s section with every number and run of stars replaced.
fn histogram_shape(text: &str) -> Vec<String> {
    let start = text
        .find("Latency histogram")
        .unwrap_or_else(|| panic!("no histogram in {text}"));
    let end = ["SQL statistics:", "General statistics:"]
        .iter()
        .filter_map(|h| text.find(h))
        .min()
        .unwrap_or(text.len());
    let section = &text[start..end];
    let mut shapes: Vec<String> = section
        .lines()
        .map(|l| {
            let (value, rest) = l.split_once(" |").unwrap_or((l, ""));
            let count = rest.rsplit(' ').next().unwrap_or_default();
            let value_ok = value.trim().parse::<f64>().is_ok() && value.len() == 12;
            let count_ok = count.parse::<u64>().is_ok();
            if value_ok && count_ok && rest.len() == 41 + count.len() {
                "row".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    shapes.dedup();
    shapes
}

fn outputs(mut c: Command) -> String {
    let out = c.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn script_options_are_read_and_shown_as_sysbench_does() {
    let s = Scratch::new();
    let script = s.path("opts.lua");
    std::fs::write(&script, OPTIONS_SCRIPT).unwrap();
    let sb = link(&s);
    let args = |bin: &Path, extra: &[&str]| {
        let mut c = Command::new(bin);
        c.current_dir(s.dir.path())
            .arg("--threads=2")
            .arg("opts.lua")
            .args(["--cpu-max-prime=5", "--flag", "--events=4", "--time=0"])
            .arg("--histogram")
            .args(extra)
            .arg("run");
        c
    };
    let theirs = outputs(args(Path::new("/usr/bin/sysbench"), &[]));
    let ours = outputs(args(&sb, &[&format!("--target={}", s.target())]));
    // Each thread's line; sysbench's threads write to stdout at once, so two lines can come
    // out run together ("...flag truethread 1 ..."): split them again.
    let threads = |text: &str| {
        let mut lines: Vec<String> = text
            .lines()
            .filter(|l| l.starts_with("thread "))
            .flat_map(|l| {
                l.split("thread ")
                    .filter(|p| !p.is_empty())
                    .map(|p| format!("thread {p}"))
                    .collect::<Vec<_>>()
            })
            .collect();
        lines.sort();
        lines
    };
    assert_eq!(
        threads(&theirs),
        // sysbench 1.0.20 runs --threads=2, and the script's own `threads` keeps its default.
        [
            "thread 0 prime 5 flag true threads 7",
            "thread 1 prime 5 flag true threads 7"
        ]
    );
    assert_eq!(threads(&ours), threads(&theirs), "{ours}");
    assert!(ours.contains("Number of threads: 2\n"), "{ours}");
    assert_eq!(histogram_shape(&ours), histogram_shape(&theirs), "{ours}");
    // `help`: every line after the banner, as sysbench prints it.
    let help = |bin: &Path| {
        let mut c = Command::new(bin);
        c.current_dir(s.dir.path()).args(["opts.lua", "help"]);
        let text = outputs(c);
        text.lines().skip(1).collect::<Vec<_>>().join("\n")
    };
    let theirs = help(Path::new("/usr/bin/sysbench"));
    assert!(theirs.contains("--flag[=on|off]"), "{theirs}");
    assert_eq!(help(&sb), theirs);
}

/// Queries `thread_init` runs count in the totals, as in sysbench.
const INIT_QUERIES: &str = r#"
function thread_init()
  con = sysbench.sql.driver():connect()
  con:query("SELECT pg_backend_pid()")
  con:query("SELECT 1")
end
function event() con:query("SELECT 2") end
"#;

#[test]
fn thread_init_queries_count_as_in_sysbench() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    std::fs::write(s.path("init.lua"), INIT_QUERIES).unwrap();
    let sb = link(&s);
    let reads = |bin: &Path| {
        let mut c = Command::new(bin);
        c.current_dir(s.dir.path())
            .arg("init.lua")
            .args(sysbench_connection(ServerKind::Postgres, &server))
            .args(["--threads=2", "--events=10", "--time=0", "run"]);
        let text = outputs(c);
        text.lines()
            .find_map(|l| l.trim().strip_prefix("read:"))
            .unwrap_or_else(|| panic!("{text}"))
            .trim()
            .to_string()
    };
    let theirs = reads(Path::new("/usr/bin/sysbench"));
    assert_eq!(
        theirs, "14",
        "sysbench: 10 events and 2 x 2 thread_init queries"
    );
    assert_eq!(reads(&sb), theirs);
}

/// `Com_insert` of a MariaDB server: INSERT statements it ran.
fn inserts(server: &ManagedServer) -> u64 {
    let rows = root_of(server)
        .query_rows("SHOW GLOBAL STATUS LIKE 'Com_insert'", 2)
        .unwrap();
    rows[0][1].as_deref().unwrap().parse().unwrap()
}

fn bulk_insert_sends_as_many_statements_as_sysbench(kind: ServerKind) {
    let server = start(kind);
    let s = Scratch::new();
    let sb = link(&s);
    let mut statements = Vec::new();
    for bin in [Path::new("/usr/bin/sysbench"), sb.as_path()] {
        let conn = sysbench_connection(kind, &server);
        let mut prepare = Command::new(bin);
        prepare.args(["bulk_insert", "--threads=1"]).args(&conn);
        outputs({
            prepare.arg("prepare");
            prepare
        });
        let before = inserts(&server);
        let mut run = Command::new(bin);
        run.args(["bulk_insert", "--threads=1", "--events=100000", "--time=0"])
            .args(&conn)
            .arg("run");
        outputs(run);
        statements.push(inserts(&server) - before);
        let mut cleanup = Command::new(bin);
        cleanup.args(["bulk_insert", "--threads=1"]).args(&conn);
        outputs({
            cleanup.arg("cleanup");
            cleanup
        });
    }
    assert!(statements[0] <= 5, "sysbench sent {}", statements[0]);
    assert_eq!(
        statements[1], statements[0],
        "dbsweep, sysbench: INSERT statements"
    );
}

#[test]
fn bulk_insert_sends_as_many_statements_as_sysbench_on_mariadb() {
    bulk_insert_sends_as_many_statements_as_sysbench(ServerKind::Mariadb);
}

#[test]
fn bulk_insert_sends_as_many_statements_as_sysbench_on_mysql() {
    bulk_insert_sends_as_many_statements_as_sysbench(ServerKind::Mysql);
}

#[test]
fn twenty_runs_stopped_by_timeout_all_write_their_results_and_summary() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    let conn = sysbench_connection(ServerKind::Postgres, &server);
    dbsweep()
        .args(["sysbench", "oltp_read_write", "--table-size=1000"])
        .args(&conn)
        .arg("prepare")
        .assert()
        .success();
    let mut lost = Vec::new();
    // Four runs at a time: each is cut at its third second whatever the others do.
    for batch in 0..5 {
        let runs: Vec<_> = (0..4)
            .map(|k| {
                let i = batch * 4 + k;
                let out = s.path(&format!("r{i}.json"));
                // `timeout` signals dbsweep, then its whole process group: two SIGINTs at once.
                let child = Command::new("timeout")
                    .args(["--preserve-status", "-s", "INT", "3"])
                    .arg(assert_cmd::cargo::cargo_bin("dbsweep"))
                    .args(["sysbench", "oltp_read_write", "--threads=2", "--time=60"])
                    .arg("--table-size=1000")
                    .args(&conn)
                    .arg(format!("--output={}", out.display()))
                    .arg("run")
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap();
                (i, out, child)
            })
            .collect();
        for (i, out, child) in runs {
            let run = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&run.stdout);
            let whole = run.status.code() == Some(130)
                && text.contains("transactions:")
                && out.exists()
                && read_json(&out)["interrupted"] == true;
            if !whole {
                lost.push(format!(
                    "run {i}: {:?}\n{text}{}",
                    run.status,
                    String::from_utf8_lossy(&run.stderr)
                ));
            }
        }
    }
    assert!(lost.is_empty(), "{}", lost.join("\n"));
}

#[test]
fn sysbench_grammar_mistakes_are_one_line_errors() {
    let s = Scratch::new();
    let sb = link(&s);
    // sysbench's words and its exit status (1); its log (FATAL) on stdout, its grammar's
    // complaints on stderr.
    for (args, says, on_stdout) in [
        (
            &["oltp_point_select", "run", "extra"][..],
            "Unrecognized command line argument: extra",
            false,
        ),
        (
            &["--percentile=101", "oltp_point_select", "run"][..],
            "FATAL: --percentile=101",
            true,
        ),
        (
            &["--rand-spec-iter=10", "oltp_point_select", "run"][..],
            "not supported",
            true,
        ),
        (
            &["--report-checkpoints=1,x", "oltp_point_select", "run"][..],
            "FATAL: Invalid value for --report-checkpoints: 'x'",
            true,
        ),
        (
            &["no_such_test", "run"][..],
            "FATAL: Cannot find benchmark 'no_such_test': no such built-in test, file or module",
            true,
        ),
    ] {
        let out = Command::new(&sb).args(args).output().unwrap();
        let (stdout, err) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}{err}");
        let said = if on_stdout {
            stdout.lines().filter(|l| l.starts_with("FATAL")).count()
        } else {
            err.lines().count()
        };
        assert_eq!(said, 1, "{args:?}: {stdout}{err}");
        let text = if on_stdout { &stdout } else { &err };
        assert!(text.contains(says), "{args:?}: {text}");
    }
    // A built-in workload without a command: its sysbench script is loaded, as by sysbench,
    // and asks for one.
    let out = Command::new(&sb).arg("oltp_point_select").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("FATAL: /usr/share/sysbench/oltp_common.lua:28: Command is required")
    );
    let out = Command::new(&sb).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sysbench 1.0.20\n");
}

/// Whether sbtest1 has planner statistics (an ANALYZE ran), asked through dbsweep's own Lua
/// API on the same server.
fn analyzed(s: &Scratch, url: &str) -> bool {
    let script = s.path("stats.lua");
    std::fs::write(
        &script,
        "function check()\n  local con = sysbench.sql.driver():connect()\n  \
         print('analyzed ' .. con:query_row(\"SELECT count(*) FROM pg_stats WHERE tablename = 'sbtest1'\"))\nend\n\
         sysbench.cmdline.commands = { check = {check} }\n",
    )
    .unwrap();
    let out = dbsweep()
        .args(["lua"])
        .arg(&script)
        .args(["check", "--target", url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let n: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("analyzed "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{text}{}", String::from_utf8_lossy(&out.stderr)));
    n > 0
}

#[test]
fn acting_as_sysbench_prepare_leaves_statistics_as_sysbench_does() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    let conn = sysbench_connection(ServerKind::Postgres, &server);
    // sysbench's own prepare: no statistics until autovacuum gets to the table.
    let mut c = Command::new("/usr/bin/sysbench");
    c.args(["oltp_point_select", "--table-size=1000"])
        .args(&conn);
    outputs({
        c.arg("prepare");
        c
    });
    let theirs = analyzed(&s, &server.url);
    let mut c = Command::new("/usr/bin/sysbench");
    c.arg("oltp_point_select").args(&conn);
    outputs({
        c.arg("cleanup");
        c
    });
    dbsweep()
        .args(["sysbench", "oltp_point_select", "--table-size=1000"])
        .args(&conn)
        .arg("prepare")
        .assert()
        .success();
    assert_eq!(analyzed(&s, &server.url), theirs, "as sysbench");
    assert!(!theirs);
    // dbsweep's own prepare analyzes.
    dbsweep()
        .args(["sysbench", "oltp_point_select"])
        .args(&conn)
        .arg("cleanup")
        .assert()
        .success();
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--table-size=1000",
            "--target",
            &server.url,
        ])
        .assert()
        .success();
    assert!(analyzed(&s, &server.url));
}

/// A script that never connects: a CPU loop with a report of its own.
const NO_DATABASE_SCRIPT: &str = r#"
function event()
  local s = 0
  for i = 1, 100 do s = s + i end
end
function sysbench.hooks.report_cumulative(stat)
  print("custom report: events " .. stat.events)
end
"#;

/// A script that connects, for the error both tools give where no server answers.
const CONNECTING_SCRIPT: &str = r#"
function thread_init() con = sysbench.sql.driver():connect() end
function event() con:query("SELECT 1") end
"#;

#[test]
fn a_script_that_never_connects_runs_without_a_database_as_in_sysbench() {
    let s = Scratch::new();
    std::fs::write(s.path("cpu.lua"), NO_DATABASE_SCRIPT).unwrap();
    std::fs::write(s.path("conn.lua"), CONNECTING_SCRIPT).unwrap();
    // A port no server listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let sb = link(&s);
    let run = |bin: &Path, script: &str| {
        Command::new(bin)
            .current_dir(s.dir.path())
            .args([script, "--events=50", "--time=0", "--threads=2"])
            .args(["--mysql-host=127.0.0.1", &format!("--mysql-port={port}")])
            .arg("run")
            .output()
            .unwrap()
    };
    for bin in [Path::new("/usr/bin/sysbench"), sb.as_path()] {
        let out = run(bin, "cpu.lua");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{bin:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("custom report: events 50\n"),
            "{bin:?}: {text}"
        );
        // A script that connects still fails at its connect.
        let out = run(bin, "conn.lua");
        assert!(!out.status.success(), "{bin:?} ran without its server");
    }
    let out = run(&sb, "conn.lua");
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    // In the words of sysbench's MySQL driver. Both threads fail alike: where the second's
    // first line came between the first's two, sysbench's log says "(last message repeated 1
    // times)" there, as sysbench's own does; the pair is read without it.
    let said: String = err
        .lines()
        .filter(|l| !(l.starts_with("(last message repeated ") && l.ends_with(" times)")))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        said.contains(&format!(
            "FATAL: unable to connect to MySQL server on host '127.0.0.1', port {port}, aborting...\nFATAL: error 2002: Can't connect to server on '127.0.0.1' (115)"
        )),
        "{err}"
    );
    // Its interval lines are sysbench's generic ones (events per second, no SQL counts).
    let shape = |bin: &Path| {
        let out = Command::new(bin)
            .current_dir(s.dir.path())
            .args(["cpu.lua", "--time=2", "--report-interval=1"])
            .args(["--mysql-host=127.0.0.1", &format!("--mysql-port={port}")])
            .arg("run")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let line = text
            .lines()
            .find(|l| l.starts_with("[ 1s ]"))
            .unwrap_or_else(|| panic!("{bin:?}: no interval line: {text}"))
            .to_string();
        line.split(' ')
            .map(|w| if w.parse::<f64>().is_ok() { "N" } else { w })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let theirs = shape(Path::new("/usr/bin/sysbench"));
    assert_eq!(theirs, "[ 1s ] thds: N eps: N lat (ms,95%): N");
    assert_eq!(shape(&sb), theirs);
}

/// Under `--rate`, each interval has sysbench's queue line: events due and not begun, and
/// events running. Two clients that take 50 ms an event cannot keep 50 a second: the queue
/// grows and both are always busy.
#[test]
fn paced_runs_print_sysbench_queue_lines() {
    let s = Scratch::new();
    std::fs::write(
        s.path("slow.lua"),
        "function event() os.execute('sleep 0.05') end\n",
    )
    .unwrap();
    let sb = link(&s);
    let queue = |bin: &Path| {
        let out = Command::new(bin)
            .current_dir(s.dir.path())
            .args(["slow.lua", "--time=3", "--rate=50", "--threads=2"])
            .args(["--report-interval=1", "run"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{bin:?}: {text}");
        let line = text
            .lines()
            .find(|l| l.starts_with("[ 2s ] queue length: "))
            .unwrap_or_else(|| panic!("{bin:?}: no queue line at 2 s: {text}"))
            .to_string();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[3..6], ["queue", "length:", words[5]], "{line}");
        assert_eq!(words[6], "concurrency:", "{bin:?}: {line}");
        let n = |w: &str| w.parse::<u64>().unwrap();
        (n(words[5]), n(words[7]))
    };
    for bin in [Path::new("/usr/bin/sysbench"), sb.as_path()] {
        let (queued, running) = queue(bin);
        assert!(queued > 0, "{bin:?}: nothing queued");
        assert_eq!(running, 2, "{bin:?}");
    }
}
