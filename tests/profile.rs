//! Profiles per step (--profile): flame graphs, top functions and differential views in sweeps,
//! dbsweep itself on embedded SQLite, and a run without perf.

use std::process::Command;

use crate::diagnosis::report_text;
use crate::util::{Scratch, assert_valid_results, dbsweep, read_json};

/// Runs the sweep `plan` (TOML) into a directory of `s`, which it returns; the sweep must
/// succeed.
fn sweep(s: &Scratch, plan: &str) -> std::path::PathBuf {
    let file = s.path("plan.toml");
    std::fs::write(&file, plan).unwrap();
    let dir = s.path("out");
    dbsweep()
        .arg("sweep")
        .arg(&file)
        .arg("--output")
        .arg(&dir)
        .assert()
        .success();
    dir
}

/// Fails the test, saying why, when perf cannot record every CPU here (scripts/test installs
/// Debian's linux-perf; a container may forbid perf_event_open).
fn assert_perf_records() {
    let s = Scratch::new();
    let data = s.path("probe.data");
    let out = Command::new("perf")
        .args(["record", "-a", "-q", "-F", "99", "-o"])
        .arg(&data)
        .args(["--", "true"])
        .output()
        .unwrap_or_else(|e| panic!("perf cannot run here ({e}): install Debian's linux-perf"));
    assert!(
        out.status.success() && data.exists(),
        "perf cannot record on this machine: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn gunzip(path: &std::path::Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// Frames (`<rect`) of a flame graph SVG file.
fn frames(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .matches("<rect")
        .count()
}

#[test]
fn a_profiled_sweep_has_flame_graphs_top_functions_and_a_differential_view() {
    assert_perf_records();
    let s = Scratch::new();
    let dir = sweep(
        &s,
        r#"
clients = [2]
tables = 1
table_size = 2000
read_time = 3
warmup_time = 0.5

[[targets]]
server = "postgres"
[[targets]]
server = "mariadb"

[configs.small]
profile = true
settings = { }
[configs.plain]

[[steps]]
load = true
[[steps]]
workload = "oltp_read_only"
class = "read"
"#,
    );
    let recs = crate::sweep::records(&dir);
    let mut profiled = 0;
    for (name, r) in &recs {
        assert_eq!(r["status"], "ok", "{name}: {}", r["error"]);
        let Some(results) = r.get("results").filter(|v| !v.is_null()) else {
            continue;
        };
        assert_valid_results(results);
        let p = &results["profile"];
        if !name.contains(".small.") {
            assert!(p.is_null(), "{name}: profiled without profile = true");
            continue;
        }
        profiled += 1;
        assert!(p["samples"].as_u64().unwrap() > 20, "{name}: {p}");
        let cell = dir.join("steps").join(name.split('/').next().unwrap());
        let stacks = gunzip(&cell.join(p["stacks_file"].as_str().unwrap()));
        let svg = cell.join(p["flame_file"].as_str().unwrap());
        assert!(frames(&svg) > 20, "{name}: a flame graph with few frames");
        if name.starts_with("postgres") {
            assert!(
                stacks.contains("PostgresMain")
                    && (stacks.contains("ExecutorRun") || stacks.contains("PortalRun")),
                "{name}: the stacks name no postgres function"
            );
        } else {
            // profile = true turned performance_schema's wait instruments on.
            let waits = &results["waits"]["instruments"];
            assert!(
                waits.as_array().is_some_and(|w| !w.is_empty()),
                "{name}: no waits by instrument: {}",
                results["waits"]
            );
            assert!(stacks.contains("mariadbd") || stacks.contains("mysqld"));
        }
        let top = p["functions"].as_array().unwrap();
        assert!(!top.is_empty());
    }
    assert_eq!(profiled, 2, "one profiled step per server");
    let text = report_text(&[&dir]);
    assert!(
        text.contains("Top functions of the server's on-CPU profile"),
        "{text}"
    );
    let html = s.path("report.html");
    dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .args(["--format", "html", "--output"])
        .arg(&html)
        .assert()
        .success();
    let dom = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("no Chromium: install the Debian package chromium (scripts/test does)");
    let dom = String::from_utf8_lossy(&dom.stdout);
    // Per server: the profiled step's flame graph; no second profiled column to diff against.
    assert_eq!(dom.matches("src=\"data:image/svg+xml;base64,").count(), 2);
    assert!(dom.contains("On-CPU profiles of the server"));
}

#[test]
fn two_profiled_columns_get_a_differential_flame_graph() {
    assert_perf_records();
    let s = Scratch::new();
    let mut outs = Vec::new();
    for (name, threads) in [("a.json", "1"), ("b.json", "2")] {
        let out = s.path(name);
        dbsweep()
            .args([
                "run",
                "oltp_point_select",
                "--server",
                "postgres",
                "--profile",
            ])
            .args(["--threads", threads])
            .args([
                "--time",
                "2",
                "--table-size",
                "2000",
                "--report-interval",
                "0",
            ])
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        outs.push(out);
    }
    let a = read_json(&outs[0]);
    assert!(s.path("a.flame.svg").is_file() && s.path("a.stacks.gz").is_file());
    assert!(a["profile"]["samples"].as_u64().unwrap() > 0);
    let html = s.path("r.html");
    dbsweep()
        .args(["report", "--full"])
        .args(&outs)
        .args(["--format", "html", "--output"])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    // One per run, and the second run's against the first.
    assert_eq!(page.matches("<figure class=\"flame\">").count(), 3);
    assert_eq!(page.matches("alt=\"against the first column\"").count(), 1);
}

#[test]
fn without_perf_the_run_succeeds_unprofiled_with_one_warning() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    let out = s.path("r.json");
    let run = s
        .cmd(&["run", "oltp_point_select", "--profile", "--time", "1"])
        .env("DBSWEEP_PERF", "/nonexistent/perf")
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(err.matches("warning: --profile").count(), 1, "{err}");
    assert!(err.contains("/nonexistent/perf"), "{err}");
    let r = read_json(&out);
    assert!(r.get("profile").is_none());
    assert!(r["events"].as_u64().unwrap() > 0);
}

#[test]
fn embedded_sqlite_profiles_dbsweep_itself() {
    assert_perf_records();
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_read_only", "--table-size", "1000"])
        .assert()
        .success();
    let out = s.path("r.json");
    s.cmd(&[
        "run",
        "oltp_read_only",
        "--profile",
        "--time",
        "2",
        "--profile-hz",
        "499",
    ])
    .arg("--output")
    .arg(&out)
    .assert()
    .success();
    let r = read_json(&out);
    assert_valid_results(&r);
    assert_eq!(r["profile"]["subject"], "dbsweep (embedded SQLite)");
    assert_eq!(r["profile"]["hz"], 499);
    let stacks = gunzip(&s.path("r.stacks.gz"));
    assert!(
        stacks.contains("sqlite3"),
        "SQLite's functions are in dbsweep's stacks"
    );
}
