//! sql-bench: every group's tests timed on SQLite and on real servers, no table
//! left behind, the tables of seconds with the total, the relative table against the older
//! MariaDB, and a table it did not make never dropped.

use std::path::Path;

use dbsweep::server::ServerKind;

use crate::util::{Line, Scratch, assert_valid_results, read_json, u};

/// The steps of the sqlbench plan and how many tests each times (big-tables times two loops
/// under each of its two names, as the original).
const GROUPS: [(&str, usize); 9] = [
    ("connect", 10),
    ("create", 5),
    ("insert", 51),
    ("select", 17),
    ("alter-table", 5),
    ("transactions", 9),
    ("big-tables", 2),
    ("wisconsin", 4),
    ("atis", 4),
];

/// The sqlbench plan into `dir` with `extra`; its report.
fn sweep(extra: &[&str], dir: &Path, steps: usize) -> String {
    sweep_plan("sqlbench", extra, dir, steps)
}

/// Plan `plan` (the built-in sqlbench, or a file of some of its steps) into `dir`.
fn sweep_plan(plan: &str, extra: &[&str], dir: &Path, steps: usize) -> String {
    let done = crate::util::dbsweep()
        .args(["sweep", plan, "--option", "small_test=on"])
        .args(extra)
        .arg("--output")
        .arg(dir)
        .assert()
        .success();
    let out = String::from_utf8_lossy(&done.get_output().stdout).to_string();
    assert!(
        out.contains(&format!("{steps} step(s) done, 0 failed")),
        "{out}"
    );
    // Each step's line in seconds per test, not a throughput of a fraction of an event.
    assert_eq!(out.matches(" s for the group: ").count(), steps, "{out}");
    assert!(!out.contains(" tps "), "{out}");
    // Its progress lines say the event runs, not a rate of 0 (tps: 0.00) until its end.
    let err = String::from_utf8_lossy(&done.get_output().stderr).to_string();
    assert!(!err.contains("tps:"), "{err}");
    let report = crate::util::dbsweep()
        .args(["report", "--full"])
        .arg(dir)
        .assert()
        .success();
    String::from_utf8_lossy(&report.get_output().stdout).to_string()
}

/// Every group of cell `cell` ran once and timed each of its tests; the original scripts'
/// groups sent their --small-test counts of statements. PostgreSQL runs no alter_table_drop:
/// sql-bench's server-cfg says it cannot drop a column, and the original skips the test.
fn assert_timed(dir: &Path, cell: &str, postgres: bool) {
    for (i, (group, tests)) in GROUPS.iter().enumerate() {
        let step = read_json(&dir.join(format!("steps/{cell}/{:02}-{group}.json", i + 1)));
        let r = &step["results"];
        assert_valid_results(r);
        assert_eq!(u(r, "/events"), 1, "{group}");
        let timed = r["statements"].as_array().expect("tests");
        let tests = tests - usize::from(postgres && *group == "alter-table");
        assert_eq!(timed.len(), tests, "{group}: {timed:?}");
        let mut sum = 0.0;
        for t in timed {
            // Names the original times more than once: its summary adds them.
            let laps = match (*group, t["name"].as_str().unwrap()) {
                ("big-tables", _) => 2,
                ("insert", "select_range_prefix" | "select_range_key2" | "drop table") => 2,
                ("insert", "select_in" | "select_join_in") => 3,
                _ => 1,
            };
            assert_eq!(u(t, "/count"), laps, "{t}");
            let ms = t["latency_ms"]["avg"].as_f64().unwrap() * laps as f64;
            assert!(ms > 0.0, "{t}");
            sum += ms;
        }
        // The original's loops at --small-test: connect's 5,000 selects a test (500 where it
        // connects), transactions' 5,000 rows a test, alter-table's 100 rows.
        let (reads, writes) = (u(r, "/queries/read"), u(r, "/queries/write"));
        match *group {
            "connect" => assert_eq!(reads, 6 * 5_000 + 3 * 500, "{group}"),
            "transactions" => assert_eq!(writes, 9 * 5_000, "{group}"),
            "alter-table" => assert_eq!(writes, 100, "{group}"),
            // insert: 3,000 rows, 1,000 duplicates refused, 1,000 selects prepared each time
            // and 1,000 executions of one.
            "insert" => assert!(writes > 3_000 && reads > 2_000, "{group}: {reads} {writes}"),
            // select: 1,000 rows; the warming sum, 1,000 and 1,000 sums, 7 big selects, 41
            // ranges, 7 MIN/MAX and 5 COUNTs 1,000 times, 9 grouping tests 700 times, 70.
            "select" => assert_eq!(
                (reads, writes),
                (1 + 2_000 + 7 + 41 + 12_000 + 6_300 + 70, 1_000),
                "{group}"
            ),
            "big-tables" => assert_eq!((reads, writes), (2 * 7_000, 2 * 7_000 + 1), "{group}"),
            // wisconsin: 31,000 rows a statement, Bprime cut, the 14 writes of the benchmark
            // once; its 10 selects 1,000 times, every row fetched (15,202 a round).
            "wisconsin" => assert_eq!(
                (reads, writes, u(r, "/queries/rows")),
                (10_000, 31_000 + 1 + 14, 15_202_000),
                "{group}"
            ),
            _ => {}
        }
        // The tests make up most of the group: its event's time is their sum and the making
        // of tables between them, which the original leaves out of its tests' times too.
        let event = r["latency_ms"]["max"].as_f64().unwrap();
        assert!(
            sum <= event * 1.01 + 0.01 && sum >= 0.5 * event,
            "{group}: tests {sum} ms, event {event} ms"
        );
    }
}

/// The table of seconds: its total row and one row per group and test.
fn seconds_table(report: &str) -> &str {
    let table = report
        .split("sql-bench: seconds per test")
        .nth(1)
        .unwrap_or_else(|| panic!("no sql-bench table in\n{report}"));
    let table = table.split("\n\n").next().unwrap();
    assert!(table.lines().any(|l| l.starts_with("total ")), "{table}");
    for (group, _) in GROUPS {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("{group} (group)"))),
            "no {group} in\n{table}"
        );
    }
    table
}

#[test]
fn every_group_is_timed_on_sqlite() {
    let s = Scratch::new();
    let dir = s.path("sb");
    let report = sweep(&[], &dir, 9);
    assert_timed(&dir, "sqlite.default.c1", false);
    let table = seconds_table(&report);
    assert_eq!(
        table.lines().filter(|l| l.contains(": ")).count(),
        107,
        "{table}"
    );
    // The original's names, test by test.
    for test in [
        "connect: select_1_row_cache",
        "create: create_key+drop",
        "alter-table: alter_table_drop",
        "transactions: update_rollback",
        "select: count_distinct_group_on_key_parts",
        "insert: update_of_primary_key_many_keys",
        "big-tables: insert_many_fields",
    ] {
        assert!(table.contains(test), "no {test} in\n{table}");
    }
    // Not also among the statement latencies of the oltp workloads.
    assert!(!report.contains("Statement latency"), "{report}");
}

per_server!(every_group_is_timed_on, |kind: ServerKind| {
    let s = Scratch::new();
    let dir = s.path("sb");
    let name = match kind {
        ServerKind::Postgres => "postgres",
        ServerKind::Mariadb => "mariadb",
        ServerKind::Mysql => "mysql",
    };
    let report = sweep(&["--server", name], &dir, 9);
    let cell = std::fs::read_dir(dir.join("steps"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    assert_timed(&dir, &cell.to_string_lossy(), kind == ServerKind::Postgres);
    seconds_table(&report);
});

#[test]
fn mariadb_10_11_and_11_4_side_by_side_relative_to_the_older() {
    // Two of the plan's groups: the table's columns and the relative total are the point here
    // (every group's rows are the tests above).
    let s = Scratch::new();
    let dir = s.path("sbm");
    let plan = s.path("two.toml");
    std::fs::write(
        &plan,
        "name = \"two\"\nclients = [1]\n\
         [[steps]]\nname = \"connect\"\nworkload = \"sqlbench_connect\"\nclass = \"once\"\n\
         options = { events = 1 }\n\
         [[steps]]\nname = \"select\"\nworkload = \"sqlbench_select\"\nclass = \"once\"\n\
         options = { events = 1 }\n",
    )
    .unwrap();
    let report = sweep_plan(
        plan.to_str().unwrap(),
        &["--server", "mariadb:10.11", "--server", "mariadb:11.4"],
        &dir,
        4,
    );
    let table = report
        .split("sql-bench: seconds per test")
        .nth(1)
        .unwrap_or_else(|| panic!("no sql-bench table in\n{report}"));
    let table = table.split("\n\n").next().unwrap();
    for group in ["connect (group)", "select (group)"] {
        assert!(table.lines().any(|l| l.starts_with(group)), "{table}");
    }
    let head = table.lines().nth(2).unwrap();
    assert!(
        head.contains("mariadb-10_11 s") && head.contains("mariadb-11_4 s"),
        "{head}"
    );
    let rel = report
        .split("sql-bench: seconds relative to mariadb-10_11")
        .nth(1)
        .unwrap_or_else(|| panic!("no relative table in\n{report}"));
    let total = rel
        .lines()
        .find(|l| l.starts_with("total "))
        .unwrap_or_else(|| panic!("no total in\n{rel}"));
    let cells: Vec<f64> = total
        .split_whitespace()
        .skip(1)
        .map(|c| c.parse().unwrap())
        .collect();
    assert_eq!(cells.len(), 2, "{total}");
    assert_eq!(cells[0], 1.0);
    assert!(cells[1] > 0.2 && cells[1] < 5.0, "{total}");
}

#[test]
fn a_table_it_did_not_make_is_refused_and_kept_and_one_client_only() {
    let s = Scratch::new();
    let url = format!("sqlite://{}", s.path("sb.db").display());
    let c = rusqlite::Connection::open(s.path("sb.db")).unwrap();
    c.execute_batch(
        "CREATE TABLE sqlbench_bench3 (mine INT); INSERT INTO sqlbench_bench3 VALUES (7);",
    )
    .unwrap();
    let refused = Line::new(&["run", "sqlbench_insert", "--events", "1", "--time", "0"])
        .target(&url)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(
        err.contains("table sqlbench_bench3 is already there") && err.lines().count() == 1,
        "{err}"
    );
    let kept: i64 = c
        .query_row("SELECT mine FROM sqlbench_bench3", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, 7);
    let two = Line::new(&["run", "sqlbench_select", "--events", "1", "--threads", "2"])
        .target(&url)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&two.get_output().stderr).to_string();
    assert!(
        err.contains("--threads") && err.contains("one client"),
        "{err}"
    );
}

/// The Wisconsin group loads the files of a sql-bench checkout (`--sqlbench-data`), each line a
/// row as the original sends it; a line that is not a row is refused, naming the file and line,
/// before anything is made.
#[test]
fn wisconsin_loads_a_checkouts_data_files_and_refuses_a_line_that_is_not_a_row() {
    let s = Scratch::new();
    let checkout = s.path("sql-bench");
    let data = checkout.join("Data/Wisconsin");
    std::fs::create_dir_all(&data).unwrap();
    // Made-up rows in the files' form: 3 in onek, 1,500 in tenk (Bprime keeps the 1,000 below
    // unique2 1000).
    let row = |u1: u64, u2: u64| {
        format!(
            "{u1},{u2},{},{},{},{},{},{},{},{},{},{},{},'ABAAAA','ACAAAA','AAAAxx'\n",
            u1 % 2,
            u1 % 4,
            u1 % 10,
            u1 % 20,
            u1 % 100,
            u1 % 1000,
            u1 % 2000,
            u1 % 5000,
            u1,
            (u1 % 100) * 2,
            (u1 % 100) * 2 + 1
        )
    };
    std::fs::write(
        data.join("onek.data"),
        (0..3).map(|i| row(2 - i, i)).collect::<String>(),
    )
    .unwrap();
    std::fs::write(
        data.join("tenk.data"),
        (0..1_500).map(|i| row(1_499 - i, i)).collect::<String>(),
    )
    .unwrap();
    let url = format!("sqlite://{}", s.path("w.db").display());
    let run = || {
        Line::new(&["run", "sqlbench_wisconsin", "--events", "1", "--time", "0"])
            .args([
                "--small-test",
                "--sqlbench-data",
                checkout.to_str().unwrap(),
            ])
            .target(&url)
    };
    Line::new(&["prepare", "sqlbench_wisconsin"])
        .target(&url)
        .assert()
        .success();
    let r = run().output(&s.path("w.json")).results();
    let q = &r["queries"];
    // 3 + 3 x 1,500 rows inserted, Bprime's 500 above 999 deleted at once, and the 14 writes
    // of the benchmark but the two updates of unique2 2000 and 1974, rows these files lack.
    assert_eq!(u(q, "/write"), 3 + 3 * 1_500 + 1 + 12, "{q}");
    // A round of the 10 selects: 100 rows by a unique2 range, 852 by the unique1 range (648 to
    // 1,499 here), none by unique2 2001, 100, 1,000 of each of the first two joins and 3 of
    // the one with onek, the 1,500 of tenk1 and the 3 of onek, and the minimum.
    assert_eq!(u(q, "/read"), 10 * 1_000, "{q}");
    assert_eq!(
        u(q, "/rows"),
        (100 + 852 + 100 + 1_000 + 1_000 + 3 + 1_500 + 3 + 1) * 1_000,
        "{q}"
    );
    // A line that would end the statement and start another is not a row.
    std::fs::write(
        data.join("tenk.data"),
        format!("{}1,2); drop table x; --\n", row(0, 0)),
    )
    .unwrap();
    let out = run().assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("Data/Wisconsin/tenk.data:2: not a Wisconsin row") && err.lines().count() == 1,
        "{err}"
    );
    // A sweep refuses before it starts: one line, no sweep directory.
    let dir = s.path("sweep");
    let out = crate::util::dbsweep()
        .args(["sweep", "sqlbench", "--option"])
        .arg(format!("sqlbench_data={}", checkout.display()))
        .arg("--output")
        .arg(&dir)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("step wisconsin: sqlbench_wisconsin: ")
            && err.contains("tenk.data:2: not a Wisconsin row")
            && err.lines().count() == 1,
        "{err}"
    );
    assert!(!dir.exists());
}
