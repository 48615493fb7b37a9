//! Runner and metrics, exactly, on the mock target (fixed service time, no IO).

use crate::util::{Line, Scratch, f, per_client, u};

fn mock(s: &Scratch, url: &str, args: &[&str]) -> serde_json::Value {
    let line = Line::new(args).target(url).output(&s.path("m.json"));
    if args.contains(&"--report-interval") {
        line.results()
    } else {
        line.quiet().results()
    }
}

#[test]
fn mock_event_counts_are_exact_for_every_mix() {
    let s = Scratch::new();
    let r = mock(
        &s,
        "mock://",
        &[
            "run",
            "oltp_read_write",
            "--events",
            "10000",
            "--time",
            "0",
            "--threads",
            "2",
        ],
    );
    assert_eq!(u(&r, "/events"), 10_000);
    assert_eq!(
        (
            u(&r, "/queries/read"),
            u(&r, "/queries/write"),
            u(&r, "/queries/other")
        ),
        (140_000, 40_000, 20_000)
    );
    assert_eq!(r["target"]["kind"], "mock");
}

#[test]
fn latency_percentiles_match_a_known_service_time() {
    let s = Scratch::new();
    let r = mock(
        &s,
        "mock://?service_us=2000",
        &["run", "oltp_point_select", "--events", "300", "--time", "0"],
    );
    assert_eq!(u(&r, "/events"), 300);
    // One statement per event at 2 ms of service: no latency can be below 2 ms, and with one
    // client running events back to back, the latencies fill the measured time (what the
    // runner does between events is microseconds). No upper bound on the latency itself: a
    // loaded machine oversleeps, and that is what it measures.
    let (min, p50, max) = (
        f(&r, "/latency_ms/min"),
        f(&r, "/latency_ms/p50"),
        f(&r, "/latency_ms/max"),
    );
    assert!(min >= 2.0 * 0.999, "min {min}");
    assert!(p50 >= min && max >= p50, "min {min} p50 {p50} max {max}");
    let busy = f(&r, "/latency_ms/sum") / (f(&r, "/time_s") * 1000.0);
    assert!(
        (0.8..=1.001).contains(&busy),
        "latencies cover {busy} of the run"
    );
    // A transaction of 18 statements at 2 ms each takes at least 36 ms.
    let r = mock(
        &s,
        "mock://?service_us=2000",
        &["run", "oltp_read_write", "--events", "20", "--time", "0"],
    );
    let min = f(&r, "/latency_ms/min");
    assert!(min >= 36.0 * 0.999, "min {min}");
    let busy = f(&r, "/latency_ms/sum") / (f(&r, "/time_s") * 1000.0);
    assert!(
        (0.8..=1.001).contains(&busy),
        "latencies cover {busy} of the run"
    );
}

#[test]
fn open_loop_latency_counts_from_the_schedule() {
    let s = Scratch::new();
    // 1000 events/s offered to a client that serves 500/s: the backlog grows for the whole
    // second, and latency measured from each event's scheduled start must show it.
    let r = mock(
        &s,
        "mock://?service_us=2000",
        &["run", "oltp_point_select", "--rate", "1000", "--time", "1"],
    );
    let p99 = f(&r, "/latency_ms/p99");
    assert!(p99 > 200.0, "p99 {p99}: coordinated omission not corrected");
    let backlogged_p50 = f(&r, "/latency_ms/p50");
    assert!(f(&r, "/rate/lag_max_ms") > 200.0);
    assert!(u(&r, "/events") <= 510);
    // Offered below capacity, the schedule is kept: no backlog, latency is the service time.
    let r = mock(
        &s,
        "mock://?service_us=200",
        &[
            "run",
            "oltp_point_select",
            "--rate",
            "200",
            "--events",
            "100",
            "--time",
            "0",
        ],
    );
    assert_eq!(u(&r, "/events"), 100);
    // No backlog: the median is the service time plus wake-up delays, an order of magnitude
    // below the backlogged run's (hundreds of ms). Compared with that run rather than with a
    // fixed time, so that a loaded machine's late wake-ups do not fail it.
    let p50 = f(&r, "/latency_ms/p50");
    assert!(
        p50 * 10.0 < backlogged_p50,
        "p50 {p50} ms against {backlogged_p50} ms with a backlog"
    );
    assert!(
        f(&r, "/time_s") > 0.45,
        "100 events at 200/s take about half a second"
    );
}

#[test]
fn warmup_events_are_excluded() {
    let s = Scratch::new();
    // 1 ms per event: 0.3 s of warm-up then 0.3 s measured can record at most 300 events.
    let r = mock(
        &s,
        "mock://?service_us=1000",
        &[
            "run",
            "oltp_point_select",
            "--warmup",
            "0.3",
            "--time",
            "0.3",
        ],
    );
    let events = u(&r, "/events");
    assert!(events > 0 && events <= 305, "events {events}");
    assert!(f(&r, "/time_s") < 0.45);
}

#[test]
fn intervals_add_up_to_the_total() {
    let s = Scratch::new();
    let r = mock(
        &s,
        "mock://?service_us=100",
        &[
            "run",
            "oltp_point_select",
            "--time",
            "2.5",
            "--threads",
            "2",
            "--report-interval",
            "1",
        ],
    );
    let ivs = r["intervals"].as_array().unwrap();
    assert!(ivs.len() >= 2);
    let sum: u64 = ivs.iter().map(|i| i["events"].as_u64().unwrap()).sum();
    assert_eq!(sum, u(&r, "/events"));
}

#[test]
fn interval_lines_stop_before_the_runs_last_second_as_sysbenchs() {
    // sysbench 1.0.20 with --time=3 --report-interval=1 prints [ 1s ] and [ 2s ]: the line of
    // the last second would come at the end, and is left out. The results keep that second.
    let s = Scratch::new();
    for _ in 0..3 {
        let out = Line::new(&[
            "run",
            "oltp_point_select",
            "--time",
            "3",
            "--report-interval",
            "1",
        ])
        .target("mock://?service_us=100")
        .output(&s.path("iv.json"))
        .assert()
        .success();
        let o = out.get_output();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("[ "))
            .map(|l| l.split(']').next().unwrap())
            .collect();
        assert_eq!(lines, ["[ 1s ", "[ 2s "], "{text}");
        let r = crate::util::read_json(&s.path("iv.json"));
        let ivs = r["intervals"].as_array().unwrap();
        assert_eq!(ivs.len(), 3);
        let sum: u64 = ivs.iter().map(|i| i["events"].as_u64().unwrap()).sum();
        assert_eq!(sum, u(&r, "/events"));
    }
}

/// Regression: a workload listed by `dbsweep workloads` but missing from the registry of
/// names made `run` panic. Every listed workload must build and run.
#[test]
fn every_listed_workload_runs() {
    let out = crate::util::dbsweep().arg("workloads").output().unwrap();
    let list = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() >= 19, "{list}");
    // TPC-C reads the values its queries return, which the mock has none of; tests/tpcc.rs
    // runs it on SQLite, PostgreSQL and MariaDB.
    assert!(names.contains(&"tpcc"), "{list}");
    let s = Scratch::new();
    // sql-bench's groups make their own tables and refuse to start where one is there, which
    // the mock says of every table; tests/sqlbench.rs runs them on SQLite and the servers.
    for name in names
        .into_iter()
        .filter(|n| *n != "tpcc" && !n.starts_with("sqlbench_"))
    {
        // The pgbench workload runs the scripts it is given.
        let mut args = vec![
            "run",
            name,
            "--events",
            "5",
            "--time",
            "0",
            "--threads",
            "2",
        ];
        if name == "pgbench" {
            args.extend(["--script", "builtin:select-only"]);
        }
        // LinkBench's out-degrees come from a Distribution.dat (made up here, in its format).
        let data = s.path("Distribution.dat");
        if name == "linkbench" {
            std::fs::write(&data, "nlinks\n0 50\n3 100\n").unwrap();
            args.extend(["--linkbench-data", data.to_str().unwrap()]);
        }
        // Deletes follow the inserts beside them: alone, ibench_delete finds nothing to delete
        // and counts no event (tests/ibench.rs).
        if name == "ibench_delete" {
            args.extend(["--role", "ibench_insert"]);
        }
        let r = mock(&s, "mock://", &args);
        assert_eq!(u(&r, "/events"), 5, "{name}");
        assert_eq!(r["workload"], name);
    }
}

#[test]
fn clients_on_fewer_workers_queue_for_them_and_their_latency_holds_the_wait() {
    let s = Scratch::new();
    // Eight clients in a closed loop on two workers, 2 ms of service per event: at most two
    // events run at once, and a client waits for a worker about three services each time.
    let r = mock(
        &s,
        "mock://?service_us=2000",
        &[
            "run",
            "oltp_point_select",
            "--threads",
            "8",
            "--workers",
            "2",
            "--events",
            "400",
            "--time",
            "0",
        ],
    );
    assert_eq!(u(&r, "/events"), 400);
    let each = per_client(&r);
    assert_eq!(each.len(), 8);
    assert_eq!(each.iter().sum::<u64>(), 400);
    assert!(each.iter().all(|&e| e > 0), "{each:?}");
    let sv = &r["serving"];
    assert_eq!((u(sv, "/clients"), u(sv, "/workers")), (8, 2));
    assert!(sv["connections"].is_null());
    // Two workers serve at most 1,000 events a second.
    assert!(f(&r, "/time_s") >= 0.4 * 0.99, "{}", r["time_s"]);
    let (queue_p50, latency_p50) = (f(sv, "/queue_ms/p50"), f(&r, "/latency_ms/p50"));
    assert!(queue_p50 >= 2.0, "queue p50 {queue_p50} ms");
    assert!(
        latency_p50 >= queue_p50 + 2.0 * 0.999,
        "latency p50 {latency_p50} ms holds queue p50 {queue_p50} ms and the service"
    );
}

#[test]
fn clients_sharing_connections_run_every_statement_of_their_mix() {
    let s = Scratch::new();
    // Fifty clients share four connections: each event's statements run on whichever
    // connection is free, prepared there under the same numbers; the counts stay exact.
    let r = mock(
        &s,
        "mock://",
        &[
            "run",
            "oltp_read_write",
            "--threads",
            "50",
            "--connections",
            "4",
            "--events",
            "1000",
            "--time",
            "0",
        ],
    );
    assert_eq!(u(&r, "/events"), 1000);
    assert_eq!(
        (
            u(&r, "/queries/read"),
            u(&r, "/queries/write"),
            u(&r, "/queries/other")
        ),
        (14_000, 4_000, 2_000)
    );
    assert_eq!(u(&r, "/serving/connections"), 4);
    assert_eq!(per_client(&r).len(), 50);
}

#[test]
fn paced_clients_on_few_workers_keep_their_rate() {
    let s = Scratch::new();
    // A hundred clients paced at 500 events/s in all, on two workers: a waiting client holds
    // no worker, so the two keep the whole schedule.
    let r = mock(
        &s,
        "mock://?service_us=200",
        &[
            "run",
            "oltp_point_select",
            "--threads",
            "100",
            "--workers",
            "2",
            "--rate",
            "500",
            "--time",
            "2",
        ],
    );
    let events = u(&r, "/events");
    assert!(
        (900..=1001).contains(&events),
        "{events} events in 2 s at 500/s"
    );
    assert_eq!(u(&r, "/serving/workers"), 2);
    let each = per_client(&r);
    assert_eq!(each.len(), 100);
    assert!(each.iter().all(|&e| e >= 9), "{each:?}");
}

/// The client's peak memory is each step's own: a step of 1 client after one of 600 in the
/// same sweep (one process: the second repeat's 1 client runs after the first's 600) reports
/// its own high-water mark, not the earlier step's.
#[test]
fn each_step_reports_its_own_peak_client_memory() {
    let s = Scratch::new();
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        r#"
name = "peak"
clients = [1, 600]
repeat = 2
read_time = 1
write_time = 1

[[targets]]
url = "mock://?service_us=200"

[[steps]]
name = "point"
workload = "oltp_point_select"
class = "read"
"#,
    )
    .unwrap();
    let dir = s.path("sweep");
    Line::sweep(&[], &plan, &dir).assert().success();
    let step = |cell: &str| {
        let cells: Vec<_> = std::fs::read_dir(dir.join("steps"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_str().unwrap().ends_with(cell))
            .collect();
        assert_eq!(cells.len(), 1, "{cell}");
        crate::util::read_json(&cells[0].path().join("01-point.json"))["results"].clone()
    };
    let (many, one) = (step(".c600.r1"), step(".c1.r2"));
    assert!(
        f(&many, "/started_at") < f(&one, "/started_at"),
        "the 600-client step runs first"
    );
    let peak = |r: &serde_json::Value| u(r, "/hw/client_peak_rss_kb");
    // 600 client threads, each with its stack and its histograms (8 KB at least a thread:
    // the 1-client step's own mark lies below the 600's by that much).
    assert!(peak(&many) > 20_000, "{}", many["hw"]);
    assert!(
        peak(&one) > 0 && peak(&one) + 600 * 8 < peak(&many),
        "{} vs {}",
        one["hw"],
        many["hw"]
    );
}

#[test]
fn roles_beside_the_run_are_counted_apart_and_keep_their_rate() {
    let s = Scratch::new();
    let line = Line::new(&[
        "run",
        "oltp_point_select",
        "--events",
        "4000",
        "--time",
        "0",
        "--threads",
        "2",
        "--role",
        "oltp_insert,clients=2,rate=200",
        "--role",
        "oltp_delete",
    ])
    .target("mock://?service_us=500")
    .output(&s.path("roles.json"));
    let done = line.quiet().assert().success();
    let out = String::from_utf8_lossy(&done.get_output().stdout).to_string();
    let r = crate::util::read_json(&s.path("roles.json"));
    crate::util::assert_valid_results(&r);
    // The run's own figures are the measured group's alone: its events, no writes.
    assert_eq!(u(&r, "/events"), 4000);
    assert_eq!(u(&r, "/queries/write"), 0);
    let roles = r["roles"].as_array().expect("roles in the results");
    assert_eq!(roles.len(), 2);
    let (insert, delete) = (&roles[0], &roles[1]);
    assert_eq!(insert["workload"], "oltp_insert");
    assert_eq!(u(insert, "/clients"), 2);
    assert_eq!(f(insert, "/rate"), 200.0);
    assert_eq!(insert["rate_met"], true, "{insert}");
    assert!(
        (f(insert, "/tps") - 200.0).abs() <= 10.0,
        "{} events/s of 200",
        f(insert, "/tps")
    );
    assert_eq!(u(insert, "/queries/write"), u(insert, "/events"));
    assert_eq!(u(insert, "/queries/read"), 0);
    // A closed-loop role: as fast as its one client goes, no rate to keep.
    assert_eq!(delete["workload"], "oltp_delete");
    assert!(delete["rate"].is_null() && delete["rate_met"].is_null());
    assert!(u(delete, "/events") > 0);
    // The summary says what ran beside the run.
    assert!(out.contains("Beside it"), "{out}");
    assert!(out.contains("oltp_insert x2 at 200/s"), "{out}");
}

#[test]
fn events_per_client_stops_each_client_at_its_own_count() {
    let s = Scratch::new();
    let args = |extra: &[&str]| {
        let mut a = vec!["run", "oltp_point_select", "--threads", "3", "--time", "0"];
        a.extend_from_slice(extra);
        a.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    };
    let r = mock(
        &s,
        "mock://?service_us=100",
        &args(&["--events-per-client", "30"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(u(&r, "/events"), 90);
    assert_eq!(per_client(&r), [30, 30, 30]);
    // With --events too, the first limit reached ends the run.
    let r = mock(
        &s,
        "mock://?service_us=100",
        &args(&["--events-per-client", "30", "--events", "50"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(u(&r, "/events"), 50);
    assert!(
        per_client(&r).iter().all(|&n| n <= 30),
        "{:?}",
        per_client(&r)
    );
}

#[test]
fn runs_with_roles_merge_each_group_with_its_parts_from_every_host() {
    let s = Scratch::new();
    let part = |id: &str, insert_rate: &str, events: &str| {
        let file = s.path(&format!("{id}.json"));
        Line::new(&[
            "run",
            "oltp_point_select",
            "--events",
            events,
            "--time",
            "0",
            "--client-id",
            id,
            "--role",
            &format!("oltp_insert,rate={insert_rate}"),
            "--role",
            "oltp_delete",
        ])
        .target("mock://?service_us=300")
        .output(&file)
        .quiet()
        .assert()
        .success();
        file
    };
    let (a, b) = (part("h1", "100", "2000"), part("h2", "150", "1500"));
    let merged = s.path("merged.json");
    crate::util::dbsweep()
        .arg("merge")
        .args([&a, &b])
        .arg("--output")
        .arg(&merged)
        .assert()
        .success();
    let (ra, rb, m) = (
        crate::util::read_json(&a),
        crate::util::read_json(&b),
        crate::util::read_json(&merged),
    );
    crate::util::assert_valid_results(&m);
    assert_eq!(u(&m, "/events"), 3500);
    let roles = m["roles"]
        .as_array()
        .expect("the merged file keeps the roles");
    assert_eq!(roles.len(), 2);
    for (i, name) in [(0, "oltp_insert"), (1, "oltp_delete")] {
        let (g, ga, gb) = (&roles[i], &ra["roles"][i], &rb["roles"][i]);
        assert_eq!(g["workload"], name);
        let events = u(ga, "/events") + u(gb, "/events");
        assert!(events > 0);
        assert_eq!(u(g, "/events"), events, "{g}");
        assert_eq!(u(g, "/clients"), 2);
        assert_eq!(
            u(g, "/queries/total"),
            u(ga, "/queries/total") + u(gb, "/queries/total")
        );
        // The group's latencies are its parts' histograms added: the max is the larger max,
        // and each operation type's count is the parts' counts added.
        let max = f(ga, "/latency_ms/max").max(f(gb, "/latency_ms/max"));
        assert!((f(g, "/latency_ms/max") - max).abs() <= max * 0.002, "{g}");
        let statements = g["statements"]
            .as_array()
            .expect("operation types per group");
        assert!(!statements.is_empty(), "{g}");
        for st in statements {
            let count = |r: &serde_json::Value| {
                r["statements"]
                    .as_array()
                    .and_then(|v| v.iter().find(|x| x["name"] == st["name"]))
                    .map_or(0, |x| u(x, "/count"))
            };
            assert_eq!(u(st, "/count"), count(ga) + count(gb), "{st}");
        }
    }
    // The paced group's rate is the hosts' rates added.
    assert_eq!(f(&roles[0], "/rate"), 250.0);
    assert!(roles[1]["rate"].is_null());
    // Parts that ran other groups beside them are not one run.
    let other = s.path("h3.json");
    Line::new(&[
        "run",
        "oltp_point_select",
        "--events",
        "100",
        "--time",
        "0",
        "--client-id",
        "h3",
        "--role",
        "oltp_insert",
    ])
    .target("mock://")
    .output(&other)
    .quiet()
    .assert()
    .success();
    let out = crate::util::dbsweep()
        .arg("merge")
        .args([&a, &other])
        .arg("--output")
        .arg(s.path("no.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("h3.json: the groups beside its measured clients (oltp_insert)")
            && err.contains("oltp_insert (paced), oltp_delete"),
        "{err}"
    );
    assert!(!s.path("no.json").exists());
}

#[test]
fn a_role_is_checked_as_a_run_is() {
    let s = Scratch::new();
    for (role, why) in [
        ("nope", "--role: nope: not a built-in workload"),
        ("oltp_insert,clients=0", "--role: oltp_insert: --threads"),
        ("oltp_insert,rate=-1", "--role: oltp_insert: --rate"),
        ("oltp_insert,speed=3", "'speed' is not clients=N or rate=R"),
    ] {
        let done = Line::new(&["run", "oltp_point_select", "--role", role])
            .target("mock://")
            .output(&s.path("x.json"))
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&done.get_output().stderr).to_string();
        assert!(err.contains(why), "{role}: {err}");
        assert!(!s.path("x.json").exists());
    }
}

#[test]
fn a_plans_step_of_roles_measures_one_group_beside_the_others() {
    let s = Scratch::new();
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        r#"
name = "roles"
clients = [2]
read_time = 1

[[targets]]
url = "mock://?service_us=200"

[[steps]]
name = "qr100"
class = "read"
roles = [ { workload = "oltp_point_select", clients = 1, measured = true },
          { workload = "oltp_insert", clients = 1, rate = 100 },
          { workload = "oltp_delete", clients = 1, rate = 100 } ]
"#,
    )
    .unwrap();
    let dir = s.path("sweep");
    Line::sweep(&[], &plan, &dir).assert().success();
    let record = crate::util::read_json(&dir.join("steps/mock.default.c2/01-qr100.json"));
    let r = &record["results"];
    crate::util::assert_valid_results(r);
    // The measured role's own clients (1, not the cell's 2), and its reads alone.
    assert_eq!(u(r, "/threads"), 1);
    assert_eq!(u(r, "/queries/write"), 0);
    let roles = r["roles"].as_array().expect("the roles beside it");
    let names: Vec<&str> = roles
        .iter()
        .map(|g| g["workload"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["oltp_insert", "oltp_delete"]);
    for g in roles {
        assert_eq!(g["rate_met"], true, "{g}");
    }
    // The report says what ran beside the measured clients, and that their rates were kept.
    let done = Line::new(&["report", "--full"])
        .args([&dir])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&done.get_output().stdout).to_string();
    let table = text
        .split("Beside the measured clients")
        .nth(1)
        .unwrap_or_else(|| panic!("no roles table in\n{text}"));
    let row = table
        .lines()
        .find(|l| l.starts_with("qr100"))
        .unwrap_or_else(|| panic!("no qr100 row in\n{table}"));
    assert!(
        row.contains("oltp_insert x1") && row.contains("of 100/s"),
        "{row}"
    );
    assert!(row.trim_end().ends_with("yes"), "{row}");
}

#[test]
fn a_background_role_that_dies_fails_the_run_and_says_which() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    s.cmd(&["prepare", "ibench_insert", "--table-size", "1000"])
        .assert()
        .success();
    let out = s.path("r.json");
    let mut cmd = crate::util::dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args(["run", "oltp_point_select", "--target", &s.target()])
        .args([
            "--table-size",
            "1000",
            "--time",
            "60",
            "--report-interval",
            "1",
        ])
        .args(["--role", "ibench_insert,rate=50"])
        .arg("--output")
        .arg(&out);
    let (mut child, lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    // The role's table goes away under it: its next insert fails.
    s.sqlite()
        .execute_batch("ALTER TABLE purchases_index RENAME TO gone")
        .unwrap();
    let rest: Vec<String> = lines.collect();
    let status = child.wait().unwrap();
    let stderr = rest.join("\n");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--role ibench_insert") && stderr.contains("failed"),
        "{stderr}"
    );
    assert!(!out.exists(), "no results of a run cut short by its role");
}
