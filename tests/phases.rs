//! Load that changes over time (`--phases`): each phase keeps its rate, a ramp's intervals rise,
//! closed-loop phases activate their clients only, Poisson arrivals vary as a Poisson process
//! does, and the results, the summary and the report give each phase's figures.

use dbsweep::server::ServerKind;
use serde_json::Value;

use crate::util::*;

/// The run's phases from its results file.
fn phases(r: &Value) -> &Vec<Value> {
    r["phases"].as_array().expect("phases in the results")
}

/// Each open-loop phase's measured rate is within 5% of the rate it asked for.
fn assert_rates_kept(r: &Value) {
    for p in phases(r) {
        let (asked, got) = (f(p, "/target_per_s"), f(p, "/tps"));
        assert!(
            (got / asked - 1.0).abs() <= 0.05,
            "{}: {got}/s of {asked}/s asked",
            p["phase"]
        );
    }
}

fn interval_events(r: &Value, phase: u64) -> Vec<u64> {
    r["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|iv| iv["phase"].as_u64() == Some(phase))
        .map(|iv| u(iv, "/events"))
        .collect()
}

#[test]
fn rate_phases_and_a_ramp_on_sqlite() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "10000"])
        .assert()
        .success();
    let out = s
        .line(&[
            "run",
            "oltp_point_select",
            "--table-size",
            "10000",
            "--threads",
            "2",
        ])
        .args(["--phases", "3s@200,3s@500,5s@ramp:100..900"])
        .output(&s.path("r.json"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let r = read_json(&s.path("r.json"));
    assert_valid_results(&r);
    assert_eq!(f(&r, "/time_s"), 11.0, "the phases' seconds are the run's");
    let names: Vec<&str> = phases(&r)
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["3s@200/s", "3s@500/s", "5s@100..900/s"]);
    assert_rates_kept(&r);
    assert_eq!(f(&phases(&r)[2], "/target_per_s"), 500.0);
    // The ramp's intervals rise: 100/s to 900/s over 5 s, some 160 more each second.
    let ramp = interval_events(&r, 3);
    assert!(ramp.len() >= 4, "{ramp:?}");
    assert!(ramp.windows(2).all(|w| w[1] > w[0] + 100), "{ramp:?}");
    // Every interval says its phase, the interval lines too; the summary has a line a phase.
    assert!(
        r["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .all(|iv| iv["phase"].is_u64())
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("[ 5s ]") && l.ends_with("phase: 2")),
        "{stderr}"
    );
    assert!(stdout.contains("Phases (target, then measured"), "{stdout}");
    assert!(stdout.contains("3s@500/s"), "{stdout}");
    // The report: a table of the phases, each kept.
    let report = dbsweep()
        .args(["report", "--format", "json"])
        .arg(s.path("r.json"))
        .assert()
        .success();
    let json: Value = serde_json::from_slice(&report.get_output().stdout).unwrap();
    let table = json
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"].as_str().unwrap().starts_with("phases-"))
        .unwrap_or_else(|| panic!("no phases table: {json}"));
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|row| row["cells"][5] == "yes"), "{table}");
}

/// Phases off the report interval's grid (1.5 s against 1 s ticks) keep their own events: each
/// phase's rate is its own, not its interval's mix of two phases, and a pause between phases
/// has no more than the events still running when it began (one a client).
#[test]
fn phases_that_are_not_whole_intervals_keep_their_own_events() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    s.line(&[
        "run",
        "oltp_point_select",
        "--table-size",
        "1000",
        "--threads",
        "2",
    ])
    .args(["--phases", "1.5s@100,1.5s@1000,0.5s@ramp:0..0,1.5s@200"])
    .output(&s.path("r.json"))
    .quiet()
    .assert()
    .success();
    let r = read_json(&s.path("r.json"));
    let p = phases(&r);
    assert_eq!(p.len(), 4);
    // Attributed by interval middles, phase 2 had 0.5 s of phase 1's rate in it: 772/s.
    for i in [0, 1, 3] {
        let (asked, got) = (f(&p[i], "/target_per_s"), f(&p[i], "/tps"));
        assert!(
            (got / asked - 1.0).abs() <= 0.05,
            "phase {}: {got}/s of {asked}/s asked: {p:?}",
            i + 1
        );
    }
    assert!(u(&p[2], "/events") <= 2, "the pause ran events: {p:?}");
}

#[test]
fn closed_loop_phases_run_only_their_clients() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    let r = run_results(
        &s,
        &[
            "run",
            "oltp_point_select",
            "--table-size",
            "1000",
            "--phases",
            "3s@clients:1,3s@clients:3",
        ],
    );
    assert_eq!(u(&r, "/threads"), 3, "the most clients of a phase");
    let p = phases(&r);
    assert_eq!((u(&p[0], "/clients"), u(&p[1], "/clients")), (1, 3));
    assert!(p[0]["target_per_s"].is_null());
    // The first client ran all 6 s; the others only the second phase's 3 s.
    let busy: Vec<f64> = r["thread_time_s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(busy[0] > 4.5, "{busy:?}");
    assert!(busy[1] < 3.5 && busy[2] < 3.5 && busy[2] > 1.5, "{busy:?}");
}

/// Poisson arrivals: the rate is kept on average, and the intervals' counts vary as a Poisson
/// count does (its variance its mean), where even arrivals keep them within a few events.
#[test]
fn poisson_arrivals_vary_as_poisson_and_keep_the_rate() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    let spread = |arrivals: &str| {
        let r = run_results(
            &s,
            &[
                "run",
                "oltp_point_select",
                "--table-size",
                "1000",
                "--threads",
                "2",
                "--phases",
                "12s@400",
                "--arrivals",
                arrivals,
            ],
        );
        let counts = interval_events(&r, 1);
        let inner = &counts[1..counts.len() - 1];
        let mean = inner.iter().sum::<u64>() as f64 / inner.len() as f64;
        let var = inner
            .iter()
            .map(|c| (*c as f64 - mean).powi(2))
            .sum::<f64>()
            / inner.len() as f64;
        (f(&r, "/tps"), var.sqrt())
    };
    let (tps, sd) = spread("uniform");
    assert!((tps / 400.0 - 1.0).abs() < 0.05 && sd < 4.0, "{tps} {sd}");
    let (tps, sd) = spread("poisson");
    // 4,800 events: a Poisson count's 1.4% deviation, 7 of them within 10%. Ten inner seconds'
    // counts: a sample deviation under 8 where a Poisson count's is 20 is about a 0.3% chance
    // (six counts made it 3%, and it happened).
    assert!((tps / 400.0 - 1.0).abs() < 0.10, "{tps}");
    assert!(sd > 8.0, "a Poisson count of 400 varies by some 20: {sd}");
}

#[test]
fn bad_phases_are_refused_before_anything_runs() {
    let s = Scratch::new();
    for (args, says) in [
        (&["--phases", "10s"][..], "DURATION@LOAD"),
        (&["--phases", "2s@100", "--rate", "50"], "leave out --rate"),
        (&["--phases", "2s@100", "--time", "5"], "leave out --time"),
        (
            &["--phases", "2s@clients:4", "--threads", "2"],
            "up to 4 clients",
        ),
        (&["--arrivals", "poisson"], "give --rate or --phases"),
        (
            &["--phases", "1s@100,0.003s@100"],
            "a phase lasts at least 0.1s",
        ),
    ] {
        let out = s
            .cmd(&["run", "oltp_point_select"])
            .args(args)
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!s.db().exists(), "{args:?} touched the database");
    }
}

per_server!(rate_phases_on, |kind: ServerKind| {
    let s = Scratch::new();
    let server = start(kind);
    let r = Line::new(&[
        "run",
        "oltp_point_select",
        "--prepare",
        "--table-size",
        "1000",
    ])
    .in_dir(s.dir.path())
    .target(&server.url)
    .args(["--threads", "2", "--phases", "2s@100,2s@300"])
    .output(&s.path("r.json"))
    .quiet()
    .results();
    assert_eq!(phases(&r).len(), 2);
    assert_rates_kept(&r);
});

/// Client hosts' parts of one `--phases` run merge into the run's phases: each phase's events,
/// errors and asked rate added, its latencies from the parts' histograms added; a part whose
/// phases are not the others' is refused.
#[test]
fn the_phases_of_client_hosts_merge_into_the_runs_phases() {
    let s = Scratch::new();
    let part = |id: &str, phases: &str| {
        let file = s.path(&format!("{id}.json"));
        Line::new(&["run", "oltp_point_select", "--threads", "2"])
            .args(["--phases", phases, "--client-id", id])
            .target("mock://?service_us=300")
            .output(&file)
            .quiet()
            .assert()
            .success();
        file
    };
    let (a, b) = (part("h1", "1s@200,1s@400"), part("h2", "1s@200,1s@400"));
    let merged = s.path("merged.json");
    let merge = |files: [&std::path::Path; 2]| {
        crate::util::dbsweep()
            .arg("merge")
            .args(files)
            .arg("--output")
            .arg(&merged)
            .assert()
    };
    merge([&a, &b]).success();
    let (ra, rb, m) = (read_json(&a), read_json(&b), read_json(&merged));
    crate::util::assert_valid_results(&m);
    assert_eq!(phases(&m).len(), 2, "{}", m["phases"]);
    for (i, p) in phases(&m).iter().enumerate() {
        let (pa, pb) = (&phases(&ra)[i], &phases(&rb)[i]);
        assert_eq!(p["phase"], pa["phase"]);
        assert!(u(pa, "/events") > 0 && u(pb, "/events") > 0);
        assert_eq!(u(p, "/events"), u(pa, "/events") + u(pb, "/events"), "{p}");
        assert_eq!(u(p, "/errors"), u(pa, "/errors") + u(pb, "/errors"));
        let asked = f(pa, "/target_per_s") + f(pb, "/target_per_s");
        assert!((f(p, "/target_per_s") - asked).abs() < 1e-9, "{p}");
        let time = f(pa, "/time_s").max(f(pb, "/time_s"));
        assert!(
            (f(p, "/tps") - u(p, "/events") as f64 / time).abs() < 1e-6,
            "{p}"
        );
        // The latencies are the parts' added: the max is the larger max.
        let max = f(pa, "/latency_ms/max").max(f(pb, "/latency_ms/max"));
        assert!((f(p, "/latency_ms/max") - max).abs() <= max * 0.002, "{p}");
        assert!(p["histogram"].is_object(), "{p}");
    }
    // The report's phase table reads the merged phases.
    let report = crate::util::dbsweep()
        .arg("report")
        .arg(&merged)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&report.get_output().stdout).to_string();
    assert!(text.contains("1s@400"), "{text}");

    // A part written before phases kept their histograms: merged without phases, said so.
    let mut older = read_json(&b);
    for p in older["phases"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("histogram");
    }
    std::fs::write(&b, older.to_string()).unwrap();
    let done = merge([&a, &b]).success();
    let err = String::from_utf8_lossy(&done.get_output().stderr).to_string();
    assert!(
        err.contains("h2.json: its phases have no latency histograms"),
        "{err}"
    );
    let m = read_json(&merged);
    assert!(m["phases"].as_array().is_none_or(Vec::is_empty), "{m}");
    assert_eq!(u(&m, "/events"), u(&ra, "/events") + u(&rb, "/events"));

    let other = part("h3", "1s@200,1s@300");
    std::fs::remove_file(&merged).unwrap();
    let refused = merge([&a, &other]).code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(err.lines().count() == 1 && err.contains("phases"), "{err}");
    assert!(!merged.exists());
}
