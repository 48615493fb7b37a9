//! LinkBench on SQLite and on real servers: the load's counts, the operation mix over a fixed
//! number of events, the counts consistent with the links after a run (and a broken count
//! found), and the plan end to end with its report table.

use dbsweep::server::ServerKind;
use dbsweep::workload::linkbench;

use crate::util::{Line, Scratch, assert_valid_results, start, u};

const NODES: u64 = 3000;
const EVENTS: u64 = 10_000;

fn count(url: &str, sql: &str) -> i64 {
    let target = dbsweep::db::open(url, Default::default()).expect("target");
    let mut conn = target.connect().expect("connect");
    conn.query_i64(sql).expect("count").expect("a count")
}

fn linkbench(url: &str, s: &Scratch) {
    Line::new(&["prepare", "linkbench", "--nodes", &NODES.to_string()])
        .target(url)
        .assert()
        .success();
    // Every node, its loaded links (all visible), and their counts adding up to them.
    let links = linkbench::loaded_links(NODES) as i64;
    assert_eq!(count(url, "SELECT COUNT(*) FROM nodetable"), NODES as i64);
    assert_eq!(count(url, "SELECT COUNT(*) FROM linktable"), links);
    assert_eq!(count(url, "SELECT SUM(count) FROM counttable"), links);
    // LinkBench's type ids: links of 123456789 and 123456790, nodes of 2048.
    assert_eq!(
        count(url, "SELECT MIN(link_type) FROM linktable"),
        123_456_789
    );
    assert_eq!(
        count(url, "SELECT MAX(link_type) FROM counttable"),
        123_456_790
    );
    assert_eq!(
        count(url, "SELECT COUNT(*) FROM nodetable WHERE type <> 2048"),
        0
    );
    let r = Line::new(&[
        "run",
        "linkbench",
        "--nodes",
        &NODES.to_string(),
        "--threads",
        "2",
        "--time",
        "0",
        "--events",
        &EVENTS.to_string(),
    ])
    .target(url)
    .quiet()
    .output(&s.path("lb.json"))
    .results();
    assert_valid_results(&r);
    assert_eq!(u(&r, "/events"), EVENTS);
    assert!(r["error"].is_null(), "{}", r["error"]);
    // The mix: each operation's count within five standard deviations of its share.
    let ops = r["statements"].as_array().expect("operations");
    let mut seen = 0;
    for (name, share) in linkbench::shares() {
        let op = ops
            .iter()
            .find(|o| o["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {ops:?}"));
        let p = f64::from(share) / 10_000.0;
        let expected = p * EVENTS as f64;
        let sigma = (EVENTS as f64 * p * (1.0 - p)).sqrt();
        let n = u(op, "/count") as f64;
        assert!(
            (n - expected).abs() <= 5.0 * sigma,
            "{name}: {n} of {EVENTS}, expected {expected:.0} +- {:.0}",
            5.0 * sigma
        );
        assert!(op["latency_ms"]["p99"].as_f64().unwrap() > 0.0, "{op}");
        seen += n as u64;
    }
    assert_eq!(seen, EVENTS);
    // Times in milliseconds, as LinkBench's: the newest link was written within the last hour.
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let newest = count(url, "SELECT MAX(time) FROM linktable");
    assert!(
        now_ms - newest < 3_600_000 && newest <= now_ms,
        "{newest} against {now_ms}"
    );
    // The writes kept every count equal to its visible links.
    let ok = Line::new(&["check", "linkbench", "--nodes", &NODES.to_string()])
        .target(url)
        .assert()
        .success();
    let out = String::from_utf8_lossy(&ok.get_output().stdout).to_string();
    assert!(out.contains("consistent"), "{out}");
    // A count made wrong is found.
    let target = dbsweep::db::open(url, Default::default()).expect("target");
    let mut conn = target.connect().expect("connect");
    let first = conn
        .query_rows(
            "SELECT id, link_type FROM counttable ORDER BY id, link_type LIMIT 1",
            2,
        )
        .expect("a count row");
    let (id, t) = (first[0][0].clone().unwrap(), first[0][1].clone().unwrap());
    conn.batch(&format!(
        "UPDATE counttable SET count = count + 1 WHERE id = {id} AND link_type = {t}"
    ))
    .expect("break a count");
    drop(conn);
    let bad = Line::new(&["check", "linkbench", "--nodes", &NODES.to_string()])
        .target(url)
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&bad.get_output().stderr).to_string();
    assert!(
        err.contains("LinkBench check failed: 1 (node, link type) pair"),
        "{err}"
    );
    // A graph of another size than --nodes says so, for the requests and the check alike,
    // larger or smaller, and touches nothing.
    for other in [NODES / 2, NODES * 2] {
        for cmd in [
            &["run", "linkbench", "--events", "10", "--time", "0"][..],
            &["check", "linkbench"],
        ] {
            let out = Line::new(cmd)
                .args(["--nodes", &other.to_string()])
                .target(url)
                .assert()
                .code(2);
            let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
            assert!(
                err.contains(&format!("do not hold a graph of --nodes {other}")),
                "{cmd:?} {other}: {err}"
            );
        }
    }
    // A load cut short (its last step, the index, not made) is refused too.
    let target = dbsweep::db::open(url, Default::default()).expect("target");
    let mut conn = target.connect().expect("connect");
    let drop_index = if url.starts_with("mysql") {
        "DROP INDEX id1_type ON linktable"
    } else {
        "DROP INDEX id1_type"
    };
    conn.batch(drop_index).expect("drop the index");
    drop(conn);
    let out = Line::new(&["run", "linkbench", "--events", "10", "--time", "0"])
        .args(["--nodes", &NODES.to_string()])
        .target(url)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("the LinkBench load did not finish"), "{err}");
    Line::new(&["cleanup", "linkbench"])
        .target(url)
        .assert()
        .success();
    assert!(
        !dbsweep::db::open(url, Default::default())
            .unwrap()
            .connect()
            .unwrap()
            .table_exists("linktable")
            .unwrap()
    );
}

#[test]
fn linkbench_on_sqlite() {
    let s = Scratch::new();
    linkbench(&format!("sqlite://{}", s.path("lb.db").display()), &s);
}

per_server!(linkbench_on, |kind: ServerKind| {
    let s = Scratch::new();
    let server = start(kind);
    linkbench(&server.url, &s);
});

#[test]
fn the_linkbench_plan_runs_with_its_table_per_operation() {
    let s = Scratch::new();
    let dir = s.path("lb");
    let done = crate::util::dbsweep()
        .args([
            "sweep",
            "linkbench",
            "--option",
            "nodes=2000",
            "--clients",
            "1,2",
        ])
        .args(["--write-time", "0.5", "--warmup-time", "0.1", "--output"])
        .arg(&dir)
        .assert()
        .success();
    let out = String::from_utf8_lossy(&done.get_output().stdout).to_string();
    assert!(out.contains("4 step(s) done, 0 failed"), "{out}");
    let report = crate::util::dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&report.get_output().stdout).to_string();
    for clients in [1, 2] {
        let table = text
            .split("LinkBench operations of requests on SQLite")
            .nth(clients)
            .unwrap_or_else(|| panic!("no LinkBench table {clients} in\n{text}"));
        assert!(
            table.contains(&format!("at {clients} client(s)")),
            "{table}"
        );
        for (name, _) in linkbench::shares() {
            assert!(
                table.lines().any(|l| l.starts_with(&format!("{name} "))),
                "no {name} row in\n{table}"
            );
        }
    }
    // The load was the option's size: the nodes, their links and one count row per node
    // and type with links.
    let load = crate::util::read_json(&dir.join("steps/sqlite.default.c1/01-load.json"));
    let rows = u(&load, "/load/rows");
    let links = linkbench::loaded_links(2000);
    assert!(
        rows > 2000 + links && rows <= 2000 + 2 * links,
        "{rows} rows for 2000 nodes and {links} links"
    );
}

/// The statements LinkBench's MySQL store sends, in its order, read from MariaDB's general log:
/// add_link and update_link insert the link with `ON DUPLICATE KEY UPDATE visibility` first,
/// then change the count (only when the link was new or made visible again) and update the
/// found link's data; delete_link reads the visibility `FOR UPDATE`, hides the link and takes
/// the count down, never below 0.
#[test]
fn link_writes_send_linkbenchs_statements_in_its_order() {
    let s = Scratch::new();
    let server = crate::util::start_with(
        ServerKind::Mariadb,
        &[("general_log", "ON"), ("log_output", "TABLE")],
    );
    let url = server.url.clone();
    Line::new(&["prepare", "linkbench", "--nodes", "2000"])
        .target(&url)
        .assert()
        .success();
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    conn.batch("TRUNCATE TABLE mysql.general_log").unwrap();
    Line::new(&[
        "run",
        "linkbench",
        "--nodes",
        "2000",
        "--time",
        "0",
        "--events",
        "3000",
    ])
    .target(&url)
    .quiet()
    .output(&s.path("lb.json"))
    .assert()
    .success();
    conn.batch("SET GLOBAL general_log = OFF").unwrap();
    let rows = conn
        .query_rows(
            "SELECT thread_id, CONVERT(argument USING utf8mb4) FROM mysql.general_log \
             WHERE command_type IN ('Execute', 'Query') ORDER BY event_time",
            2,
        )
        .unwrap();
    // Each thread's statements, in order.
    let mut by_thread: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for r in rows {
        let (t, sql) = (r[0].clone().unwrap(), r[1].clone().unwrap_or_default());
        by_thread.entry(t).or_default().push(sql);
    }
    let (mut adds, mut deletes) = (0, 0);
    for sqls in by_thread.values() {
        for (i, sql) in sqls.iter().enumerate() {
            let next = sqls.get(i + 1).map_or("", String::as_str);
            if sql.starts_with("INSERT INTO linktable") {
                assert!(
                    sql.contains("ON DUPLICATE KEY UPDATE visibility = 1"),
                    "{sql}"
                );
                assert!(
                    next.starts_with("INSERT INTO counttable")
                        && next.contains("count = count + 1")
                        || next.starts_with("UPDATE linktable SET visibility = 1, data"),
                    "after {sql}: {next}"
                );
                adds += 1;
            }
            if sql.starts_with("SELECT visibility FROM linktable") {
                assert!(sql.ends_with("FOR UPDATE"), "{sql}");
                if next.starts_with("UPDATE linktable SET visibility = 0") {
                    let then = sqls.get(i + 2).map_or("", String::as_str);
                    assert!(
                        then.starts_with("INSERT INTO counttable")
                            && then.contains("IF(count = 0, 0, count - 1)"),
                        "after {next}: {then}"
                    );
                    deletes += 1;
                }
            }
        }
    }
    assert!(
        adds > 100 && deletes > 10,
        "{adds} link writes, {deletes} hidden"
    );
    Line::new(&["check", "linkbench", "--nodes", "2000"])
        .target(&url)
        .assert()
        .success();
}
