//! Diagnosis per step: the wait profile of the server's sessions, on real PostgreSQL and
//! MariaDB servers.

use std::process::Command;

use dbsweep::server::ServerKind;
use serde_json::Value;

use crate::util::{Line, Scratch, assert_valid_results, dbsweep, read_json, run_results, start};
use crate::versions::sweep;

/// Runs `workload` with `threads` clients on `url` for 3 s; returns the results.
fn run(s: &Scratch, url: &str, workload: &str, threads: &str, name: &str) -> Value {
    let r = Line::new(&["run", workload, "--threads", threads])
        .target(url)
        .args(["--time", "3", "--table-size", "1000"])
        .quiet()
        .output(&s.path(name))
        .results();
    assert_valid_results(&r);
    r
}

fn events(r: &Value) -> Vec<(String, f64)> {
    r["waits"]["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no wait profile: {}", r["waits"]))
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_string(),
                e["share"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn prepare(url: &str) {
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--target",
            url,
            "--table-size",
            "1000",
        ])
        .assert()
        .success();
}

#[test]
fn a_hot_row_shows_lock_waits_and_cached_reads_do_not_on_postgres() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    prepare(&server.url);
    let hot = run(&s, &server.url, "update-one", "4", "hot.json");
    let ev = events(&hot);
    let total: f64 = ev.iter().map(|(_, s)| s).sum();
    assert!((total - 1.0).abs() < 1e-9, "{ev:?}");
    // 20 rounds a second over 3 s, four clients each.
    let rounds = hot["waits"]["rounds"].as_u64().unwrap();
    assert!((40..=70).contains(&rounds), "{rounds} rounds");
    // Four sessions a round (a client that ends with the run may miss the last one); not
    // dbsweep's own counter probe, which connects before the sampler.
    let samples = hot["waits"]["samples"].as_u64().unwrap();
    assert!(
        samples <= rounds * 4 && samples + 8 >= rounds * 4,
        "{samples} of {rounds}"
    );
    assert!(
        ev.iter()
            .take(3)
            .any(|(e, _)| e == "Lock:transactionid" || e == "Lock:tuple"),
        "a hot row's top waits name a row lock: {ev:?}"
    );
    let cached = run(&s, &server.url, "oltp_point_select", "2", "cached.json");
    let ev = events(&cached);
    assert!(ev.iter().all(|(e, _)| !e.starts_with("Lock:")), "{ev:?}");
    assert!(ev.iter().any(|(e, _)| e == "CPU"), "{ev:?}");
    // The report has a top-waits table with both steps.
    let text = report_text(&[&s.path("hot.json"), &s.path("cached.json")]);
    let table = &text[text
        .find("Top waits of the server's sessions")
        .expect("waits table")..];
    assert!(table.contains("Lock:"), "{table}");
    // Off when asked.
    let out = s.path("off.json");
    dbsweep()
        .args([
            "run",
            "oltp_point_select",
            "--target",
            &server.url,
            "--time",
            "1",
        ])
        .args(["--table-size", "1000", "--wait-sample-hz", "0", "--output"])
        .arg(&out)
        .assert()
        .success();
    assert!(read_json(&out).get("waits").is_none());
}

#[test]
fn a_hot_row_shows_row_lock_waits_on_mariadb() {
    hot_row_waits(ServerKind::Mariadb);
}

#[test]
fn a_hot_row_shows_row_lock_waits_on_mysql() {
    hot_row_waits(ServerKind::Mysql);
}

fn hot_row_waits(kind: ServerKind) {
    let server = start(kind);
    let s = Scratch::new();
    prepare(&server.url);
    let hot = run(&s, &server.url, "update-one", "4", "hot.json");
    assert_eq!(hot["waits"]["source"], "processlist");
    assert!(
        hot["waits"]["row_lock_waits"].as_u64().unwrap() > 0,
        "{}",
        hot["waits"]
    );
    let ev = events(&hot);
    assert!(ev.iter().any(|(e, _)| e.starts_with("Query:")), "{ev:?}");
    if kind == ServerKind::Mariadb {
        // performance_schema is off by default in MariaDB: no instruments.
        assert!(
            hot["waits"].get("instruments").is_none(),
            "{}",
            hot["waits"]
        );
    } else {
        // and on in MySQL: the step's waits by instrument.
        let instruments = hot["waits"]["instruments"].as_array();
        assert!(
            instruments.is_some_and(|i| !i.is_empty()),
            "{}",
            hot["waits"]
        );
    }
    // SHOW ENGINE INNODB STATUS was read at both ends of the step: MariaDB 10.11 prints the
    // SEMAPHORES heading without counters, so only the count of long waits is there.
    let innodb = &hot["waits"]["innodb"];
    assert!(innodb["long_waits_at_end"].is_u64(), "{}", hot["waits"]);
    let cached = run(&s, &server.url, "oltp_point_select", "1", "cached.json");
    assert_eq!(cached["waits"]["row_lock_waits"], 0, "{}", cached["waits"]);
}

#[test]
fn a_wait_sample_rate_out_of_range_is_refused() {
    let s = Scratch::new();
    s.cmd(&["run", "oltp_point_select", "--wait-sample-hz", "5000"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--wait-sample-hz"));
}

#[test]
fn query_cache_rates_are_the_counter_deltas_on_mariadb() {
    let s = Scratch::new();
    let out = s.path("qc.json");
    dbsweep()
        .args(["run", "oltp_read_only", "--server", "mariadb"])
        .args([
            "--server-set",
            "query_cache_type=1",
            "--server-set",
            "query_cache_size=1M",
        ])
        .args(["--threads", "2", "--time", "2", "--table-size", "1000"])
        .args(["--range-size", "10", "--report-interval", "0", "--output"])
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    assert_valid_results(&r);
    let st = &r["server_stats"];
    let d = |n: &str| st["deltas"][format!("global_status.{n}")].as_f64().unwrap();
    let (hits, inserts, selects, prunes) = (
        d("Qcache_hits"),
        d("Qcache_inserts"),
        d("Com_select"),
        d("Qcache_lowmem_prunes"),
    );
    assert!(hits > 0.0 && inserts > 0.0, "the cache took part: {st}");
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(
        st["qcache_hit_rate"].as_f64().unwrap(),
        hits / (hits + selects)
    ));
    assert!(close(
        st["qcache_insert_rate"].as_f64().unwrap(),
        inserts / (hits + selects)
    ));
    assert!(close(
        st["qcache_prune_rate"].as_f64().unwrap(),
        prunes / inserts
    ));
    // A 1 MB cache under 1000 rows of ranges prunes.
    assert!(prunes > 0.0, "{st}");
    let text = report_text(&[&out]);
    for t in [
        "query cache hit rate",
        "query cache insert rate",
        "query cache prune rate",
    ] {
        assert!(text.contains(t), "{t}:\n{text}");
    }
}

#[test]
fn the_machine_tuning_is_saved_and_reported() {
    let s = Scratch::new();
    let out = s.path("sweep");
    dbsweep()
        .args(["sweep", "quick", "--table-size", "500", "--clients", "1"])
        .args(["--read-time", "0.2", "--write-time", "0.2", "--output"])
        .arg(&out)
        .assert()
        .success();
    let env = read_json(&out.join("environment.json"));
    let t = &env["tuning"];
    // What the kernel says, read here independently.
    let sys = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|v| v.trim().to_string())
    };
    let thp = sys("/sys/kernel/mm/transparent_hugepage/enabled")
        .and_then(|v| Some(v.split_once('[')?.1.split_once(']')?.0.to_string()));
    assert_eq!(t["transparent_hugepages"].as_str(), thp.as_deref(), "{t}");
    assert_eq!(
        t["governor"].as_str(),
        sys("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").as_deref(),
        "{t}"
    );
    let fstype = Command::new("findmnt")
        .args(["-n", "-o", "FSTYPE", "--target"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        t["filesystem"].as_str(),
        Some(String::from_utf8_lossy(&fstype.stdout).trim()),
        "{t}"
    );
    assert!(!t["mhz"].as_array().unwrap().is_empty(), "{t}");
    let text = report_text(&[&out]);
    assert!(
        text.starts_with("Machine (each sweep's environment.json)"),
        "{text}"
    );
    let governor_line = text.lines().find(|l| l.starts_with("governor")).unwrap();
    match t["governor"].as_str() {
        Some(g) => assert!(governor_line.ends_with(g), "{governor_line}"),
        None => assert!(text.contains("no cpufreq in the kernel"), "{text}"),
    }
}

fn performance_schema_waits_by_instrument_are_kept(server: &str) {
    let s = Scratch::new();
    let out = s.path("ps.json");
    dbsweep()
        .args(["run", "update-one", "--server", server])
        .args(["--server-set", "performance_schema=ON"])
        .args(["--server-set", "performance_schema_instrument=wait/%=ON"])
        .args(["--threads", "4", "--time", "2", "--table-size", "1000"])
        .args(["--report-interval", "0", "--output"])
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    assert_valid_results(&r);
    let inst = r["waits"]["instruments"].as_array().expect("instruments");
    assert!(!inst.is_empty() && inst.len() <= 10, "{inst:?}");
    let ms: Vec<f64> = inst.iter().map(|i| i["ms"].as_f64().unwrap()).collect();
    assert!(
        ms.windows(2).all(|w| w[0] >= w[1]),
        "most time first: {ms:?}"
    );
    assert!(
        inst.iter()
            .all(|i| i["event"] != "idle" && i["count"].as_u64().unwrap() > 0)
    );
    // Every statement of the step touched the table through the handler.
    assert!(
        inst.iter()
            .any(|i| i["event"] == "wait/io/table/sql/handler"),
        "{inst:?}"
    );
    // The start-up option is no variable: it is read back from setup_instruments, and not
    // warned about as ignored.
    let e = &r["server"]["effective"]["performance_schema_instrument"];
    assert_eq!(e["applied"], true, "{e}");
    assert!(
        e["effective"]
            .as_str()
            .unwrap()
            .contains("instruments wait/% enabled"),
        "{e}"
    );
    let warnings = r["server"]["setting_warnings"].to_string();
    assert!(
        !warnings.contains("performance_schema_instrument"),
        "{warnings}"
    );
}

#[test]
fn performance_schema_waits_by_instrument_are_kept_on_mariadb() {
    performance_schema_waits_by_instrument_are_kept("mariadb");
}

#[test]
fn performance_schema_waits_by_instrument_are_kept_on_mysql() {
    performance_schema_waits_by_instrument_are_kept("mysql");
}

/// `statements` of results as (name, count, per_event, avg ms).
fn statements(r: &Value) -> Vec<(String, u64, f64, f64)> {
    r["statements"]
        .as_array()
        .unwrap_or_else(|| panic!("no statements: {r}"))
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["count"].as_u64().unwrap(),
                x["per_event"].as_f64().unwrap(),
                x["latency_ms"]["avg"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Runs 300 events of `workload` on 2 clients; checks each statement kind's count against
/// `per_event` times the events, exactly, and that the statements' times add up to no more
/// than the events' (each statement runs from the end of the one before).
fn check_statements(url: &str, workload: &str, extra: &[&str], per_event: &[(&str, u64)]) {
    let s = Scratch::new();
    let out = s.path("r.json");
    dbsweep()
        .args(["run", workload, "--target", url, "--threads", "2"])
        .args([
            "--events",
            "300",
            "--table-size",
            "1000",
            "--report-interval",
            "0",
        ])
        .args(extra)
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    assert_valid_results(&r);
    let events = r["events"].as_u64().unwrap();
    assert_eq!(events, 300);
    let got = statements(&r);
    let names: Vec<&str> = got.iter().map(|x| x.0.as_str()).collect();
    let want: Vec<&str> = per_event.iter().map(|x| x.0).collect();
    assert_eq!(names, want, "{workload} {extra:?} on {url}");
    for ((name, count, per, _), (_, n)) in got.iter().zip(per_event) {
        assert_eq!(
            *count,
            n * events,
            "{name} of {workload} {extra:?} on {url}"
        );
        assert_eq!(*per, *n as f64, "{name}");
    }
    let statement_ms: f64 = got.iter().map(|x| x.1 as f64 * x.3).sum();
    let event_ms = r["latency_ms"]["sum"].as_f64().unwrap();
    assert!(
        statement_ms > 0.0 && statement_ms <= event_ms * 1.01,
        "statements {statement_ms} ms, events {event_ms} ms"
    );
    let summary = dbsweep()
        .args(["report", "--full", out.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&summary.stdout);
    assert!(
        text.contains("Statement latency, 99th percentile")
            && text.contains(&format!(": {}", want[0])),
        "{text}"
    );
}

const READ_WRITE: &[(&str, u64)] = &[
    ("begin", 1),
    ("point_select", 10),
    ("simple_range", 1),
    ("sum_range", 1),
    ("order_range", 1),
    ("distinct_range", 1),
    ("index_update", 1),
    ("non_index_update", 1),
    ("delete", 1),
    ("insert", 1),
    ("commit", 1),
];

#[test]
fn each_statement_kind_is_counted_and_timed_on_sqlite() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_read_write", "--table-size", "1000"])
        .assert()
        .success();
    let url = s.target();
    check_statements(&url, "oltp_read_write", &[], READ_WRITE);
    check_statements(
        &url,
        "oltp_read_only",
        &[
            "--skip-trx",
            "--point-selects",
            "3",
            "--distinct-ranges",
            "2",
        ],
        &[
            ("point_select", 3),
            ("simple_range", 1),
            ("sum_range", 1),
            ("order_range", 1),
            ("distinct_range", 2),
        ],
    );
    check_statements(&url, "oltp_update_index", &[], &[("index_update", 1)]);
}

per_server!(
    each_statement_kind_is_counted_and_timed,
    |kind: ServerKind| {
        let server = start(kind);
        dbsweep()
            .args(["prepare", "oltp_read_write", "--target", &server.url])
            .args(["--table-size", "1000"])
            .assert()
            .success();
        check_statements(&server.url, "oltp_read_write", &[], READ_WRITE);
        check_statements(
            &server.url,
            "oltp_write_only",
            &["--delete-inserts", "2"],
            &[
                ("begin", 1),
                ("index_update", 1),
                ("non_index_update", 1),
                ("delete", 2),
                ("insert", 2),
                ("commit", 1),
            ],
        );
    }
);

#[test]
fn a_crash_step_times_recovery_checks_tpcc_and_the_sweep_goes_on() {
    let s = Scratch::new();
    let dir = sweep(
        &s,
        r#"
clients = [2]
write_time = 3
read_time = 2
warmup_time = 1
options = { warehouses = 1 }

[[targets]]
server = "postgres"
[[targets]]
server = "mariadb"
[[targets]]
server = "mysql"

[[steps]]
load = "tpcc"
[[steps]]
name = "crash"
workload = "tpcc"
class = "write"
crash = true
crash_after = 1
[[steps]]
workload = "tpcc"
class = "read"
"#,
    );
    let recs = crate::sweep::records(&dir);
    assert_eq!(recs.len(), 9, "3 cells x 3 steps");
    for (name, r) in &recs {
        assert_eq!(r["status"], "ok", "{name}: {}", r["error"]);
        if r["name"] == "crash" {
            let x = &r["recovery"];
            assert!(x["seconds"].as_f64().unwrap() > 0.0, "{name}: {x}");
            assert!(x["redo_bytes"].as_u64().unwrap() > 0, "{name}: {x}");
            assert_eq!(x["checks"], "passed", "{name}");
            let at = x["crash_after_s"].as_f64().unwrap();
            assert!((1.0..2.5).contains(&at), "{name}: crashed at {at} s");
            assert_eq!(r["reported"], false, "its throughput stops at the crash");
        } else if r["name"] == "tpcc" {
            // The step after the crash runs on the recovered server.
            assert!(r["results"]["events"].as_u64().unwrap() > 0, "{name}");
        }
    }
    let text = report_text(&[&dir]);
    let table = text
        .split("Crash recovery of crash")
        .nth(1)
        .unwrap_or_else(|| panic!("no recovery table: {text}"));
    assert!(
        table.contains("postgres/default c2")
            && table.contains("mariadb/default c2")
            && table.contains("mysql/default c2"),
        "{table}"
    );
}

/// A crash that leaves a large transaction open: InnoDB answers before it has rolled the
/// transaction back (a background thread undoes it), and the step waits for that rollback
/// before anything reads the data, reporting it as part of the recovery.
#[test]
fn a_crash_step_waits_for_innodb_to_roll_back_what_the_crash_left_open() {
    let s = Scratch::new();
    let script = s.path("open_txn.lua");
    // One client updates every row in one transaction and holds it open until the crash.
    std::fs::write(
        &script,
        r#"
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
end
function event()
  con:query("BEGIN")
  con:query("UPDATE sbtest1 SET k = k + 1, c = REPEAT('x', 120)")
  con:query("SELECT SLEEP(20)")
  con:query("COMMIT")
end
"#,
    )
    .unwrap();
    let dir = sweep(
        &s,
        &format!(
            r#"
clients = [1]
tables = 1
table_size = 200000
write_time = 4
warmup_time = 0.5

[[targets]]
server = "mariadb"
[[targets]]
server = "mysql"

[[steps]]
load = true
[[steps]]
name = "crash"
workload = "{}"
class = "write"
crash = true
crash_after = 2
"#,
            script.display()
        ),
    );
    let recs = crate::sweep::records(&dir);
    let mut crashes = 0;
    for (name, r) in &recs {
        assert_eq!(r["status"], "ok", "{name}: {}", r["error"]);
        if r["name"] != "crash" {
            continue;
        }
        crashes += 1;
        let x = &r["recovery"];
        assert_eq!(x["recovered_txns"], 1, "{name}: {x}");
        assert!(x["rollback_s"].as_f64().unwrap() > 0.0, "{name}: {x}");
    }
    assert_eq!(crashes, 2);
    let text = report_text(&[&dir]);
    assert!(
        text.contains("open txns") && text.contains("rollback s"),
        "{text}"
    );
}

#[test]
fn a_crash_step_needs_a_managed_server_and_a_workload() {
    let s = Scratch::new();
    let plan = s.path("plan.toml");
    for (body, says) in [
        (
            "[[steps]]\nworkload = \"oltp_read_only\"\nclass = \"read\"\ncrash = true\n",
            "crash = true needs managed servers",
        ),
        (
            "[[targets]]\nserver = \"postgres\"\n[[steps]]\nload = true\ncrash = true\n",
            "crash = true needs a workload step",
        ),
        (
            "[[targets]]\nserver = \"postgres\"\n[[steps]]\nworkload = \"oltp_read_only\"\nclass = \"read\"\ncrash_after = 2\n",
            "crash_after needs crash = true",
        ),
    ] {
        std::fs::write(&plan, body).unwrap();
        let out = dbsweep()
            .args(["sweep", plan.to_str().unwrap(), "--dry-run"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{body}: {err}");
    }
}

#[test]
fn sqlite_counts_its_busy_waits_exactly() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_update_index", "--table-size", "1000"])
        .assert()
        .success();
    let run = |threads: &str, wait: &str, name: &str| {
        let out = s.path(name);
        Line::new(&[
            "run",
            "oltp_update_index",
            "--time",
            "2",
            "--threads",
            threads,
        ])
        .in_dir(&s.path(""))
        .target(&format!("{}?lock_wait={wait}", s.target()))
        .quiet()
        .output(&out)
        .assert()
        .success();
        let r = read_json(&out);
        assert_valid_results(&r);
        r
    };
    // One writer never finds the database locked.
    let alone = run("1", "fifo", "one.json");
    assert_eq!(alone["waits"]["source"], "SQLite busy handler");
    assert_eq!(alone["waits"]["busy_waits"], 0);
    // Four writers take turns on SQLite's one write lock (the default): each wait is a sleep
    // until a turn is handed over, never a retry.
    let four = run("4", "fifo", "four.json");
    let waits = four["waits"]["busy_waits"].as_u64().unwrap();
    let ms = four["waits"]["busy_ms"].as_f64().unwrap();
    assert!(waits > 0 && ms > 0.0, "{}", four["waits"]);
    assert_eq!(four["waits"]["busy_retries"], 0, "{}", four["waits"]);
    // In batches, a waiter lets the holder go on for at least 300 us before the turn is its.
    let batch = run("4", "batch", "batch.json");
    let waits = batch["waits"]["busy_waits"].as_u64().unwrap();
    let ms = batch["waits"]["busy_ms"].as_f64().unwrap();
    assert!(waits > 0 && ms >= waits as f64 * 0.3, "{}", batch["waits"]);
    assert_eq!(batch["waits"]["busy_retries"], 0, "{}", batch["waits"]);
    // Polling writers retry: each wait sleeps at least 20 us, once per retry.
    let poll = run("4", "poll", "poll.json");
    let waits = poll["waits"]["busy_waits"].as_u64().unwrap();
    let retries = poll["waits"]["busy_retries"].as_u64().unwrap();
    let ms = poll["waits"]["busy_ms"].as_f64().unwrap();
    assert!(waits > 0 && retries >= waits, "{}", poll["waits"]);
    assert!(ms >= retries as f64 * 0.02, "{retries} retries in {ms} ms");
    let text = report_text(&[&s.path("one.json"), &s.path("four.json")]);
    assert!(text.contains("busy waits 0, 0.0 ms"), "{text}");
}

#[test]
fn a_step_whose_cpu_frequency_varied_is_warned_in_reports() {
    let s = Scratch::new();
    let r = run_results(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size",
            "1000",
            "--time",
            "1",
        ],
    );
    // This machine may have no cpufreq (a virtual machine): the sampler then records none.
    let has_cpufreq = std::path::Path::new("/sys/devices/system/cpu/cpu0/cpufreq").exists();
    assert_eq!(r["hw"].get("cpu_mhz").is_some(), has_cpufreq, "{}", r["hw"]);
    // A results file is input: one whose step saw 1.2 to 3.0 GHz is warned about, one whose
    // step held 3.0 GHz is not.
    let write = |name: &str, min: f64| {
        let mut r = r.clone();
        r["hw"]["cpu_mhz"] = serde_json::json!({"min": min, "max": 3000.0, "mean": 2500.0});
        assert_valid_results(&r);
        let path = s.path(name);
        std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
        path
    };
    let report = |path: &std::path::Path| {
        let out = dbsweep()
            .args(["report", "--full"])
            .arg(path)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let varied = report(&write("varied.json", 1200.0));
    assert!(
        varied.contains("Warning: the CPU frequency varied during these steps")
            && varied.contains("1200"),
        "{varied}"
    );
    let steady = report(&write("steady.json", 2990.0));
    assert!(!steady.contains("CPU frequency varied"), "{steady}");
}

/// The text report of `inputs` (its standard output).
pub(crate) fn report_text(inputs: &[&std::path::Path]) -> String {
    let out = dbsweep()
        .args(["report", "--full"])
        .args(inputs)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}
