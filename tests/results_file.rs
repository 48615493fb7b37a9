//! The results file is the contract: it matches the schema, reads back into dbsweep's own
//! types, and its histogram holds every measured event.

use dbsweep::results::Results;

use crate::util::dbsweep;
use crate::util::mock_results;
use crate::util::refused;
use crate::util::write_json;
use crate::util::{Scratch, assert_valid_results, f, run_results, u};

#[test]
fn results_match_the_schema_and_read_back() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_read_write", "--table-size", "1000"])
        .assert()
        .success();
    let r = run_results(
        &s,
        &[
            "run",
            "oltp_read_write",
            "--table-size",
            "1000",
            "--time",
            "1.5",
            "--threads",
            "2",
            "--rand-type",
            "zipfian",
        ],
    );
    assert_valid_results(&r);
    // Keys scripts rely on.
    for key in [
        "/workload",
        "/target/kind",
        "/target/version",
        "/threads",
        "/time_s",
        "/events",
        "/tps",
        "/qps",
        "/queries/read",
        "/queries/write",
        "/queries/other",
        "/queries/total",
        "/latency_ms/min",
        "/latency_ms/avg",
        "/latency_ms/p50",
        "/latency_ms/p90",
        "/latency_ms/p95",
        "/latency_ms/p99",
        "/latency_ms/p999",
        "/latency_ms/max",
        "/errors",
        "/reconnects",
        "/intervals/0/t",
        "/intervals/0/tps",
        "/intervals/0/qps",
        "/intervals/0/p95_ms",
        "/histogram",
        "/options/rand_type",
        "/tool/version",
        "/interrupted",
    ] {
        assert!(r.pointer(key).is_some(), "{key} missing");
    }
    assert_eq!(r["target"]["kind"], "sqlite");
    assert_eq!(r["options"]["rand_type"], "zipfian");
    assert_eq!(r["interrupted"], false);
    // Hardware figures: the client and the machine, no server share for embedded SQLite.
    let hw = &r["hw"];
    assert!(
        hw["cpu_us_per_op"]["client"].as_f64().unwrap() > 0.0,
        "{hw}"
    );
    assert!(
        hw["cpu_us_per_op"]["machine"].as_f64().unwrap()
            >= hw["cpu_us_per_op"]["client"].as_f64().unwrap() * 0.5
    );
    assert!(hw["cpu_us_per_op"]["server"].is_null());
    assert!(
        hw["cs_per_o"].as_f64().is_some() && hw["wkb_per_o"].as_f64().is_some(),
        "{hw}"
    );
    assert!(!hw["series"].as_array().unwrap().is_empty());
    let tps = f(&r, "/tps");
    assert!((tps - u(&r, "/events") as f64 / f(&r, "/time_s")).abs() < 1e-6 * tps.max(1.0));
    let lat = &r["latency_ms"];
    let order =
        ["min", "p50", "p90", "p95", "p99", "p999", "max"].map(|k| lat[k].as_f64().unwrap());
    assert!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "percentiles out of order: {order:?}"
    );

    let typed = Results::read(&s.path("results.json")).expect("reads back into dbsweep's types");
    let hist = typed.histogram.decode().expect("histogram decodes");
    assert_eq!(hist.len(), typed.events);
    assert!((hist.value_at_quantile(0.95) as f64 / 1e6 - typed.latency_ms.p95).abs() < 1e-9);
    let leftovers = std::fs::read_dir(s.dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        })
        .count();
    assert_eq!(leftovers, 0);
}

#[test]
fn a_seed_of_zero_is_replaced_by_the_seed_used() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "100"])
        .assert()
        .success();
    let r = run_results(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "100",
            "--events",
            "10",
            "--time",
            "0",
        ],
    );
    assert!(u(&r, "/options/rand_seed") > 0);
}

#[test]
fn names_from_a_results_file_never_steer_the_terminal_nor_break_the_tables() {
    let s = Scratch::new();
    let path = s.path("r.json");
    let mut r = mock_results(&path);
    r["workload"] = "oltp\u{1b}]0;owned\u{7}\u{1b}[2J".into();
    write_json(&path, &r);
    let out = dbsweep()
        .args(["report", "--color", "always"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("oltp\\x1b]0;owned\\x07\\x1b[2J"), "{text}");
    assert!(!text.contains("\u{7}") && !text.contains("\u{1b}]0") && !text.contains("\u{1b}[2J"));
    // A name too long to pad a column to (past a format width's 65,535).
    r["workload"] = "w".repeat(70_000).into();
    write_json(&path, &r);
    for format in ["text", "markdown"] {
        let out = dbsweep()
            .args(["report", "--format", format])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{format}: {stderr}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(&"w".repeat(70_000)));
    }
    // Error messages escape too: a file name that would clear the screen.
    let bad = s.path("x\u{1b}[2J.json");
    std::fs::write(&bad, "not json").unwrap();
    let out = dbsweep().arg("report").arg(&bad).output().unwrap();
    let err = refused(&out, 2);
    assert!(
        err.contains("x\\x1b[2J.json") && !err.contains('\u{1b}'),
        "{err}"
    );
}
