//! TPC-C prepare, check and cleanup on SQLite (the managed servers' are in `servers.rs`).

use serde_json::Value;

use crate::util::{Scratch, assert_valid_results, dbsweep, f, read_json, u};

/// `dbsweep tpcc ACTION --target <scratch db> ARGS`.
pub fn tpcc(target: &str, action: &str, args: &[&str]) -> assert_cmd::Command {
    let mut c = dbsweep();
    c.args(["tpcc", action, "--target", target]).args(args);
    c
}

/// Checks the cardinalities of `warehouses` loaded warehouses through `count(sql)`.
pub fn assert_cardinalities(warehouses: i64, count: &mut dyn FnMut(&str) -> i64) {
    let w = warehouses;
    for (table, rows) in [
        ("item", 100_000),
        ("warehouse", w),
        ("district", 10 * w),
        ("customer", 30_000 * w),
        ("history", 30_000 * w),
        ("orders", 30_000 * w),
        ("new_order", 9_000 * w),
        ("stock", 100_000 * w),
    ] {
        assert_eq!(
            count(&format!("SELECT COUNT(*) FROM {table}")),
            rows,
            "{table}"
        );
    }
    let lines = count("SELECT COUNT(*) FROM order_line");
    assert_eq!(lines, count("SELECT SUM(o_ol_cnt) FROM orders"));
    assert!((5 * 30_000 * w..=15 * 30_000 * w).contains(&lines));
    // The first 1000 customers of a district take the 1000 last names in order.
    assert_eq!(
        count("SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_id <= 1000"),
        1000
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM customer WHERE c_id = 372 AND c_last = 'PRICALLYOUGHT'"),
        10 * w
    );
    // 10% of item data holds ORIGINAL; 10% of customers have bad credit.
    let original = count("SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'");
    assert!((8_000..12_000).contains(&original), "{original}");
    let bad = count("SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'");
    assert!((2_000 * w..4_000 * w).contains(&bad), "{bad}");
    // Undelivered: the last 900 orders of each district.
    assert_eq!(
        count("SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL AND o_id >= 2101"),
        9_000 * w
    );
}

fn passes(stdout: &str) -> usize {
    stdout.lines().filter(|l| l.ends_with(" pass")).count()
}

#[test]
fn prepare_checks_and_cleanup_on_sqlite() {
    for warehouses in [1, 2] {
        let s = Scratch::new();
        let t = s.target();
        let w = warehouses.to_string();
        let out = tpcc(&t, "prepare", &["--warehouses", &w])
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert_eq!(passes(&stdout), 12, "{stdout}");
        assert!(stdout.contains("rows/s"), "{stdout}");
        let db = s.sqlite();
        assert_cardinalities(warehouses, &mut |sql| {
            db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap()
        });
        drop(db);
        let out = tpcc(&t, "check", &["--warehouses", &w]).assert().success();
        assert_eq!(
            passes(&String::from_utf8_lossy(&out.get_output().stdout)),
            12
        );

        // Broken money: conditions 1 and 8 fail and name the warehouse.
        s.sqlite()
            .execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1", [])
            .unwrap();
        let out = tpcc(&t, "check", &["--warehouses", &w]).assert().code(1);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        let fail = |n: &str| {
            stdout
                .lines()
                .find(|l| l.starts_with(n))
                .unwrap()
                .contains("FAIL: w_id=1 w_ytd=300001")
        };
        assert!(fail(" 1.") && fail(" 8."), "{stdout}");
        assert_eq!(passes(&stdout), 10, "{stdout}");
        // A customer's balance off by 5: conditions 10 and 12 name the customer.
        s.sqlite()
            .execute(
                "UPDATE customer SET c_balance = c_balance + 5 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 7",
                [],
            )
            .unwrap();
        let out = tpcc(&t, "check", &["--warehouses", &w]).assert().code(1);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        for n in ["10.", "12."] {
            let line = stdout.lines().find(|l| l.starts_with(n)).unwrap();
            assert!(
                line.contains("FAIL: c_w_id=1 c_d_id=2 c_id=7 c_balance=-5"),
                "{line}"
            );
        }
        s.sqlite()
            .execute("UPDATE customer SET c_balance = -10 WHERE c_id = 7", [])
            .unwrap();
        // After a run, condition 11 is left out.
        s.sqlite()
            .execute("DELETE FROM new_order WHERE no_o_id = 2101", [])
            .unwrap();
        s.sqlite()
            .execute("UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1", [])
            .unwrap();
        let out = tpcc(&t, "check", &["--warehouses", &w, "--after-run"])
            .assert()
            .code(1);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(
            stdout.contains("11. ") && stdout.contains("skipped"),
            "{stdout}"
        );
        // The deleted new_order rows break 3 and 5 (orders left undelivered without one).
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(" 5.") && l.contains("FAIL")),
            "{stdout}"
        );

        tpcc(&t, "cleanup", &[]).assert().success();
        let left: i64 = s
            .sqlite()
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0, "every TPC-C table is dropped");
    }
}

#[test]
fn bad_tpcc_input_changes_nothing() {
    let s = Scratch::new();
    let t = s.target();
    let out = tpcc(&t, "prepare", &["--warehouses", "0"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--warehouses"));
    assert!(
        !s.db().exists(),
        "nothing is created for a bad warehouse count"
    );
    tpcc(&t, "prepare", &["--warehouses", "-1"])
        .assert()
        .code(2);
    // Checking tables that are not there.
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    let other = Scratch::new();
    other.sqlite(); // an empty database file
    let out = tpcc(&other.target(), "check", &[]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("tpcc prepare"));
    // Loading over loaded tables needs --force; the data stay as they were.
    s.sqlite()
        .execute("UPDATE district SET d_name = 'marker' WHERE d_id = 1", [])
        .unwrap();
    let out = tpcc(&t, "prepare", &["--warehouses", "1"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--force"));
    let marker: i64 = s
        .sqlite()
        .query_row(
            "SELECT COUNT(*) FROM district WHERE d_name = 'marker'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(marker, 1);
    // A check for another warehouse count says what is loaded.
    let out = tpcc(&t, "check", &["--warehouses", "3"]).assert().code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr).contains("1 warehouse(s) are loaded")
    );
    // --force reloads.
    tpcc(&t, "prepare", &["--warehouses", "1", "--force"])
        .assert()
        .success();
    let marker: i64 = s
        .sqlite()
        .query_row(
            "SELECT COUNT(*) FROM district WHERE d_name = 'marker'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(marker, 0);
}

/// `tpcc run` of 4 clients for 20 s with a fixed seed, then `tpcc check --after-run`; checks
/// the results file and returns it.
pub fn run_and_check(target: &str, warehouses: i64, s: &Scratch) -> Value {
    let w = warehouses.to_string();
    let out = s.path(&format!("tpcc-{w}.json"));
    let run = tpcc(
        target,
        "run",
        &[
            "--warehouses",
            &w,
            "--threads",
            "4",
            "--time",
            "6",
            "--rand-seed",
            "7",
            "--report-interval",
            "2",
            "--output",
            out.to_str().unwrap(),
        ],
    )
    .assert()
    .success();
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    assert!(
        stderr.lines().any(|l| l.starts_with("[ 2s ]")
            && l.contains(" NOPM: ")
            && l.contains("new-order lat (ms,95%)")),
        "the interval line shows NOPM and New-Order's p95: {stderr}"
    );
    assert!(stdout.contains("NOPM (new orders per minute):"), "{stdout}");
    let r = read_json(&out);
    assert_valid_results(&r);
    assert_mix(&r, 4);
    let out = tpcc(target, "check", &["--warehouses", &w, "--after-run"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        passes(&stdout),
        11,
        "all but condition 11 after a run: {stdout}"
    );
    r
}

/// The mix of a run matches the deck: each client deals whole decks of 100 cards and at most
/// one partial deck, so each type's count is within `threads` times its cards of its share.
/// NOPM counts committed New-Orders; rollbacks are New-Order's 1%.
pub fn assert_mix(r: &Value, threads: u64) {
    let t = &r["tpcc"];
    let txns = t["transactions"].as_array().unwrap();
    let names: Vec<&str> = txns.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "new_order",
            "payment",
            "order_status",
            "delivery",
            "stock_level"
        ]
    );
    let total: u64 = txns.iter().map(|x| u(x, "/count")).sum();
    assert_eq!(total, u(r, "/events"), "every event has its type");
    for (x, cards) in txns.iter().zip([45u64, 43, 4, 4, 4]) {
        let count = u(x, "/count");
        let expected = total as f64 * cards as f64 / 100.0;
        assert!(
            (count as f64 - expected).abs() <= (threads * cards) as f64,
            "{}: {count} of {total}, the deck gives {expected}",
            x["name"]
        );
        assert!(count > 0 && f(x, "/latency_ms/p90") <= f(x, "/latency_ms/max"));
        let limit_met = f(x, "/latency_ms/p90") <= f(x, "/limit_p90_ms");
        assert_eq!(x["limit_met"], limit_met);
    }
    let no = &txns[0];
    let (count, rollbacks) = (u(no, "/count"), u(no, "/rollbacks"));
    assert!(
        rollbacks > 0 && rollbacks * 100 <= count * 3,
        "about 1% of New-Orders roll back: {rollbacks} of {count}"
    );
    assert!(txns[1..].iter().all(|x| u(x, "/rollbacks") == 0));
    let nopm = (count - rollbacks) as f64 * 60.0 / f(r, "/time_s");
    assert!((f(t, "/nopm") - nopm).abs() < 1e-6 * nopm, "{t}");
    let tpm = total as f64 * 60.0 / f(r, "/time_s");
    assert!((f(t, "/tpm") - tpm).abs() < 1e-6 * tpm, "{t}");
}

/// `tpcc run --mix new_order=50,payment=50`: the two types share the events half and half
/// (within 2%), the others none; the run warns that the mix is below the specification's
/// minimums and its results record the mix and that it does not conform.
pub fn run_fifty_fifty(target: &str, warehouses: i64, s: &Scratch) {
    let w = warehouses.to_string();
    let out = s.path("tpcc-mix.json");
    let run = tpcc(
        target,
        "run",
        &[
            "--warehouses",
            &w,
            "--threads",
            "4",
            "--time",
            "3",
            "--mix",
            "new_order=50,payment=50",
        ],
    )
    .arg("--output")
    .arg(&out)
    .assert()
    .success();
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    assert!(
        stderr.contains(
            "warning: --mix: order_status 0% < 4%, delivery 0% < 4%, stock_level 0% < 4%"
        ),
        "{stderr}"
    );
    let r = read_json(&out);
    assert_valid_results(&r);
    let t = &r["tpcc"];
    assert_eq!(t["mix"], serde_json::json!([50, 50, 0, 0, 0]));
    assert_eq!(t["mix_below_minimums"].as_array().unwrap().len(), 3);
    assert_eq!(t["conforming"], false);
    let counts: Vec<u64> = t["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| u(x, "/count"))
        .collect();
    let total: u64 = counts.iter().sum();
    assert!(total >= 100, "{counts:?}");
    for share in &counts[..2] {
        let pct = *share as f64 * 100.0 / total as f64;
        assert!((pct - 50.0).abs() <= 2.0, "{counts:?}");
    }
    assert_eq!(&counts[2..], [0, 0, 0], "{counts:?}");
    // A mix that does not add up, and one for another workload, are refused.
    tpcc(target, "run", &["--warehouses", &w, "--mix", "50,40,0,0,0"])
        .assert()
        .code(2);
    dbsweep()
        .args([
            "run",
            "oltp_point_select",
            "--target",
            target,
            "--mix",
            "50,50,0,0,0",
        ])
        .assert()
        .code(2);
}

/// After a run, the orders are the loaded ones plus exactly the committed New-Orders: the
/// expected rollbacks left nothing behind.
pub fn assert_orders_grew(warehouses: i64, r: &Value, count: &mut dyn FnMut(&str) -> i64) {
    let no = &r["tpcc"]["transactions"][0];
    let committed = (u(no, "/count") - u(no, "/rollbacks")) as i64;
    assert_eq!(
        count("SELECT COUNT(*) FROM orders"),
        30_000 * warehouses + committed
    );
    assert_eq!(
        count("SELECT SUM(d_next_o_id) - 3001 * COUNT(*) FROM district"),
        committed
    );
}

#[test]
fn tpcc_runs_and_stays_consistent_on_sqlite() {
    for warehouses in [1, 2] {
        let s = Scratch::new();
        let t = s.target();
        let w = warehouses.to_string();
        tpcc(&t, "prepare", &["--warehouses", &w])
            .assert()
            .success();
        let r = run_and_check(&t, warehouses, &s);
        let db = s.sqlite();
        assert_orders_grew(warehouses, &r, &mut |sql| {
            db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap()
        });
        drop(db);
        if warehouses == 1 {
            run_fifty_fifty(&t, 1, &s);
        }
        tpcc(&t, "cleanup", &[]).assert().success();
    }
}

#[test]
fn tpcc_run_refuses_missing_or_partly_loaded_tables() {
    let s = Scratch::new();
    let t = s.target();
    s.sqlite(); // an empty database
    let out = tpcc(&t, "run", &["--time", "1"]).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("do not exist") && stderr.contains("tpcc prepare"),
        "{stderr}"
    );
    tpcc(&t, "run", &["--warehouses", "0"]).assert().code(2);
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    let out = tpcc(&t, "run", &["--warehouses", "2", "--time", "1"])
        .assert()
        .code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr).contains("1 warehouse(s) are loaded")
    );
    // A load that stopped half-way through the stock.
    s.sqlite()
        .execute("DELETE FROM stock WHERE s_i_id > 50000", [])
        .unwrap();
    let out = tpcc(&t, "run", &["--time", "1"]).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stderr.contains("partly loaded") && stderr.contains("stock"),
        "{stderr}"
    );
    let (orders, stock): (i64, i64) = s
        .sqlite()
        .query_row(
            "SELECT (SELECT COUNT(*) FROM orders), (SELECT COUNT(*) FROM stock)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (orders, stock),
        (30_000, 50_000),
        "nothing ran, nothing dropped"
    );
    // --wait cannot be paced by --rate as well.
    let out = tpcc(&t, "run", &["--wait", "--rate", "10"])
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--wait"));
}

#[test]
fn wait_paces_each_client_by_keying_and_think_times() {
    let s = Scratch::new();
    let t = s.target();
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    // Two terminals for 4 s, paced, with `extra` options; the run's output.
    let wait_run = |out: &std::path::Path, extra: &[&str]| {
        let out = out.to_str().unwrap();
        let mut args = vec![
            "--wait",
            "--threads",
            "2",
            "--time",
            "4",
            "--report-interval",
            "0",
            "--output",
            out,
        ];
        args.extend_from_slice(extra);
        tpcc(&t, "run", &args).assert().success()
    };
    let out = s.path("wait.json");
    wait_run(&out, &[]);
    let r = read_json(&out);
    // Every transaction waits at least 2 s of keying time first: in 4 s a client runs at most
    // two, where without --wait it runs thousands.
    assert!(u(&r, "/events") <= 4, "{}", r["events"]);
    assert_eq!(r["options"]["wait"], true);
    // Two terminals of one warehouse reach at most a fifth of the specification's 12.86 NOPM
    // per warehouse, and are not its pacing.
    let t_ = &r["tpcc"];
    assert!((f(t_, "/nopm_ceiling_per_warehouse") - 12.86 * 2.0 / 10.0).abs() < 1e-9);
    assert_eq!(
        (
            t_["conforming"].as_bool(),
            f(t_, "/terminals_per_warehouse")
        ),
        (Some(false), 2.0)
    );
    // --think-scale shortens keying and think times as much: a hundredth of them lets each
    // client run many transactions in the same 4 s, and raises the ceiling a hundredfold.
    let scaled = s.path("scaled.json");
    let o = wait_run(&scaled, &["--think-scale", "0.01"]);
    let summary = String::from_utf8_lossy(&o.get_output().stdout).to_string();
    let r = read_json(&scaled);
    assert_valid_results(&r);
    assert!(u(&r, "/events") > 20, "{}", r["events"]);
    let t_ = &r["tpcc"];
    assert_eq!(t_["think_scale"], 0.01);
    assert!((f(t_, "/nopm_ceiling_per_warehouse") - 257.2).abs() < 1e-6);
    // The pacing holds: the committed New-Orders of the 4 s are at most what the ceiling
    // allows, give or take the count's randomness (about 17 expected; four standard deviations
    // of a Poisson count above it). Unpaced, two clients commit thousands.
    let committed = f(t_, "/nopm") * f(&r, "/time_s") / 60.0;
    let expected = f(t_, "/nopm_ceiling_per_warehouse") * f(&r, "/time_s") / 60.0;
    assert!(
        committed <= expected + 4.0 * expected.sqrt(),
        "{committed} New-Orders committed in {} s, the ceiling allows {expected}",
        r["time_s"]
    );
    assert!(
        summary.contains("NOT as specified (keying and think times x 0.01"),
        "{summary}"
    );
    assert!(summary.contains("NOPM per warehouse:"), "{summary}");
    // It scales --wait's times, and needs a sensible factor.
    for bad in [
        &["--think-scale", "0.5"][..],
        &["--wait", "--think-scale", "0"],
    ] {
        tpcc(&t, "run", bad).assert().code(2);
    }
}

#[test]
fn tpcc_is_a_sweep_step() {
    let s = Scratch::new();
    let plan = s.path("tpcc.toml");
    std::fs::write(
        &plan,
        "clients = [2]\nwrite_time = 2\nread_time = 0.5\ntable_size = 1000\n\
         options = { warehouses = 1, range_size = 5 }\n\n\
         [[steps]]\nload = \"tpcc\"\noptions = { warehouses = 1 }\n\n\
         [[steps]]\nworkload = \"tpcc\"\nclass = \"write\"\n\n\
         [[steps]]\nload = true\n\n\
         [[steps]]\nworkload = \"oltp_read_only\"\nclass = \"read\"\n",
    )
    .unwrap();
    // Issue 18: the README's form (options on the load step, and plan-wide options for both
    // kinds of workload) is taken, and each workload gets only the options it takes.
    let dry = dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--dry-run"])
        .assert()
        .success();
    let schedule = String::from_utf8_lossy(&dry.get_output().stdout).to_string();
    let line = |w: &str| {
        schedule
            .lines()
            .find(|l| l.contains(w))
            .unwrap_or_else(|| panic!("{w} in\n{schedule}"))
            .to_string()
    };
    assert!(line("tpcc (W)").contains("--warehouses=1"), "{schedule}");
    assert!(!line("tpcc (W)").contains("range-size"), "{schedule}");
    assert!(
        line("oltp_read_only (R)").contains("--range-size=5"),
        "{schedule}"
    );
    assert!(
        !line("oltp_read_only (R)").contains("warehouses"),
        "{schedule}"
    );
    let wrong = s.path("wrong.toml");
    std::fs::write(
        &wrong,
        "clients = [1]\n[[steps]]\nworkload = \"oltp_read_only\"\nclass = \"read\"\noptions = { warehouses = 2 }\n",
    )
    .unwrap();
    dbsweep()
        .args(["sweep", wrong.to_str().unwrap(), "--dry-run"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "wrong.toml:2: option warehouses: this workload does not take it (it is TPC-C's)",
        ));
    let dir = s.path("sweep");
    dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--output"])
        .arg(&dir)
        .assert()
        .success();
    let cell = dir.join("steps/sqlite.default.c2");
    let load = read_json(&cell.join("01-load.json"));
    assert_eq!(load["status"], "ok");
    assert!(u(&load, "/load/rows") > 500_000, "{}", load["load"]);
    let run = read_json(&cell.join("02-tpcc.json"));
    assert_eq!(run["status"], "ok");
    let r = &run["results"];
    assert_valid_results(r);
    assert!(f(r, "/tpcc/nopm") > 0.0 && r["tpcc"]["warehouses"] == 1);
    let ro = read_json(&cell.join("04-oltp_read_only.json"));
    assert_eq!(ro["status"], "ok");
    assert_eq!(ro["results"]["options"]["range_size"], 5);
    assert!(r["intervals"][0]["nopm"].as_f64().is_some());
    // Each interval has New-Order's 90th percentile (its limit's), at most its 95th.
    for iv in r["intervals"].as_array().unwrap() {
        let (p90, p95) = (f(iv, "/new_order_p90_ms"), f(iv, "/new_order_p95_ms"));
        assert!(p90 <= p95, "{iv}");
    }
    // The HTML report charts it over the step, beside NOPM.
    let out = dbsweep()
        .args(["report", "--full", "--format", "html"])
        .arg(&dir)
        .assert()
        .success();
    let html = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for title in ["tpcc: per second", "tpcc: New-Order p90 per second"] {
        let at = html
            .find(&format!(">{title}</text>"))
            .unwrap_or_else(|| panic!("no chart {title}"));
        let svg = &html[at..at + html[at..].find("</svg>").unwrap()];
        assert!(svg.contains("<polyline"), "{title}: {svg}");
    }
    // The report's throughput of a TPC-C step is its NOPM.
    let out = dbsweep()
        .args(["report", "--full", "--format", "csv"])
        .arg(&dir)
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let row = csv
        .lines()
        .find(|l| l.starts_with("throughput,") && l.contains(",tpcc,"))
        .unwrap_or_else(|| panic!("no TPC-C throughput row in:\n{csv}"));
    assert!(row.contains("NOPM for TPC-C"), "{row}");
    // value,lo,hi (no interval for one run).
    let shown: f64 = row.rsplit(',').nth(2).unwrap().parse().unwrap();
    assert!(row.ends_with(",,"), "{row}");
    let nopm = f(r, "/tpcc/nopm");
    assert!((shown - nopm).abs() <= 1e-9 * nopm, "{row} vs NOPM {nopm}");
    // Issue 18: the report shows each transaction type against its limit, as the summary does.
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    // Its title names the DBMS and its version, which nothing else of a one-file report does.
    let version = r["target"]["version"].as_str().unwrap();
    let at = text
        .find(&format!(
            "TPC-C transactions of tpcc on SQLite {version} at 2 client(s): 1 warehouse(s)"
        ))
        .unwrap_or_else(|| panic!("no TPC-C table in:\n{text}"));
    let mut counted = 0.0;
    for t in r["tpcc"]["transactions"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let line = text[at..]
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}"));
        // A count is an integer, not 12.00.
        let count: u64 = line[name.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(count, t["count"].as_u64().unwrap(), "{line}");
        let verdict = if t["limit_met"] == true {
            "pass"
        } else {
            "FAIL"
        };
        assert!(line.trim_end().ends_with(verdict), "{line}");
        counted += count as f64;
    }
    assert_eq!(counted, f(r, "/events"));
}

#[test]
fn merged_tpcc_runs_keep_each_types_queue_time() {
    let s = Scratch::new();
    let t = s.target();
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    // Two client hosts' runs, each of four terminals on one worker: a due terminal queues.
    let parts: Vec<std::path::PathBuf> = ["a", "b"]
        .into_iter()
        .map(|id| {
            let out = s.path(&format!("{id}.json"));
            let o = out.to_str().unwrap();
            tpcc(
                &t,
                "run",
                &[
                    "--threads",
                    "4",
                    "--workers",
                    "1",
                    "--time",
                    "2",
                    "--client-id",
                    id,
                    "--report-interval",
                    "0",
                    "--output",
                    o,
                ],
            )
            .assert()
            .success();
            out
        })
        .collect();
    let merged = s.path("merged.json");
    dbsweep()
        .arg("merge")
        .args(&parts)
        .arg("--output")
        .arg(&merged)
        .assert()
        .success();
    let m = read_json(&merged);
    assert_valid_results(&m);
    let parts: Vec<Value> = parts.iter().map(|p| read_json(p)).collect();
    let queued = |x: &Value| {
        let h: dbsweep::results::HistogramData =
            serde_json::from_value(x["queue_histogram"].clone())
                .unwrap_or_else(|e| panic!("{e}: {x}"));
        h.decode().unwrap()
    };
    for (i, x) in m["tpcc"]["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let of: Vec<&Value> = parts
            .iter()
            .map(|p| &p["tpcc"]["transactions"][i])
            .collect();
        // The merged queue times are the parts' added: every wait of both, the longest of
        // either at the top.
        let h = queued(x);
        assert_eq!(
            h.len(),
            of.iter().map(|p| queued(p).len()).sum::<u64>(),
            "{}",
            x["name"]
        );
        assert!(
            !h.is_empty(),
            "{}: terminals queued for the worker",
            x["name"]
        );
        let max = of.iter().map(|p| f(p, "/queue_ms/max")).fold(0.0, f64::max);
        assert_eq!(f(x, "/queue_ms/max"), max, "{}", x["name"]);
        assert!(f(x, "/latency_ms/p90") >= f(x, "/queue_ms/p90"), "{x}");
    }
}

/// `tpcc run --help` opens with TPC-C's own options and leaves out the sysbench workloads'.
#[test]
fn tpcc_run_help_leads_with_the_warehouses() {
    let out = dbsweep().args(["tpcc", "run", "--help"]).assert().success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let line = help
        .lines()
        .position(|l| l.trim_start().starts_with("--warehouses"))
        .unwrap_or_else(|| panic!("{help}"));
    assert!(line < 8, "--warehouses at line {line}:\n{help}");
    assert!(
        !help.contains("--range-size") && !help.contains("--point-selects"),
        "{help}"
    );
    // The sbtest options left out: `run --help` is some 190 lines.
    assert!(help.lines().count() < 130, "{help}");
}
