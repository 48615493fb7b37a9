//! LinkBench on SQLite and on real servers: the load's counts, the operation mix over a fixed
//! number of events, the counts consistent with the links after a run (and a broken count
//! found), and the plan end to end with its report table.

use dbsweep::server::ServerKind;
use dbsweep::workload::linkbench;
use dbsweep::workload::linkbench::Degrees;

use crate::util::{Line, Scratch, assert_valid_results, start, u};

const NODES: u64 = 3000;
const EVENTS: u64 = 10_000;

/// A distribution file in the format of LinkBench's config/Distribution.dat, with made-up
/// numbers (the original's data stays in the user's checkout): a fifth of the nodes without
/// links, a heavy tail to 300.
fn distribution_file(s: &Scratch) -> std::path::PathBuf {
    let path = s.path("Distribution.dat");
    std::fs::write(
        &path,
        "nlinks\n0 20.0\n1 55.0\n2 72.5\n3 80\n5 88\n10 95\n40 99\n300 100\n\
         link_nreads\n0 50\n1 100\n",
    )
    .unwrap();
    path
}

fn count(url: &str, sql: &str) -> i64 {
    let target = dbsweep::db::open(url, Default::default()).expect("target");
    let mut conn = target.connect().expect("connect");
    conn.query_i64(sql).expect("count").expect("a count")
}

fn linkbench(url: &str, s: &Scratch) {
    Line::new(&[
        "prepare",
        "linkbench_synthetic",
        "--nodes",
        &NODES.to_string(),
    ])
    .target(url)
    .assert()
    .success();
    // Every node, its loaded links (all visible), and their counts adding up to them.
    let links = Degrees::synthetic(NODES).loaded_links() as i64;
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
        "linkbench_synthetic",
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
    let nodes = NODES.to_string();
    let check = || Line::new(&["check", "linkbench_synthetic", "--nodes", &nodes]).target(url);
    let ok = check().assert().success();
    let out = String::from_utf8_lossy(&ok.get_output().stdout).to_string();
    assert!(out.contains("consistent"), "{out}");
    // A count made wrong is found: one of a pair that has visible links (a pair whose links
    // the run hid, count 0, would be told apart as a count above zero without a link).
    let target = dbsweep::db::open(url, Default::default()).expect("target");
    // The first count row above zero but `except`'s, changed by `sql` (its id and link type
    // filled in); what the check then says.
    let break_one = |except: Option<&(String, String)>, sql: &str| {
        let mut conn = target.connect().expect("connect");
        let not = except.map_or(String::new(), |(id, t)| {
            format!(" AND NOT (id = {id} AND link_type = {t})")
        });
        let row = conn
            .query_rows(
                &format!(
                    "SELECT id, link_type FROM counttable WHERE count > 0{not} \
                     ORDER BY id, link_type LIMIT 1"
                ),
                2,
            )
            .expect("a count row");
        let (id, t) = (row[0][0].clone().unwrap(), row[0][1].clone().unwrap());
        conn.batch(&sql.replace("{id}", &id).replace("{t}", &t))
            .expect("break it");
        drop(conn);
        let bad = check().assert().code(1);
        let err = String::from_utf8_lossy(&bad.get_output().stderr).to_string();
        ((id, t), err)
    };
    let (first, err) = break_one(
        None,
        "UPDATE counttable SET count = count + 1 WHERE id = {id} AND link_type = {t}",
    );
    assert!(
        err.contains("LinkBench check failed: 1 (node, link type) pair"),
        "{err}"
    );
    // And a count left above zero when its links are hidden behind its back.
    let (_, err) = break_one(
        Some(&first),
        "UPDATE linktable SET visibility = 0 WHERE id1 = {id} AND link_type = {t}",
    );
    assert!(
        err.contains("1 (node, link type) pair(s)")
            && err.contains("1 count row(s) above zero without a visible link"),
        "{err}"
    );
    // A graph of another size than --nodes says so, for the requests and the check alike,
    // larger or smaller, and touches nothing.
    for other in [NODES / 2, NODES * 2] {
        for cmd in [
            &[
                "run",
                "linkbench_synthetic",
                "--events",
                "10",
                "--time",
                "0",
            ][..],
            &["check", "linkbench_synthetic"],
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
    let out = Line::new(&[
        "run",
        "linkbench_synthetic",
        "--events",
        "10",
        "--time",
        "0",
    ])
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
            "--option",
            &format!("linkbench_data={}", distribution_file(&s).display()),
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
    let links = Degrees::measured(&distribution_file(&s), 2000)
        .unwrap()
        .loaded_links();
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
    Line::new(&["prepare", "linkbench_synthetic", "--nodes", "2000"])
        .target(&url)
        .assert()
        .success();
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    conn.batch("TRUNCATE TABLE mysql.general_log").unwrap();
    Line::new(&[
        "run",
        "linkbench_synthetic",
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
    Line::new(&["check", "linkbench_synthetic", "--nodes", "2000"])
        .target(&url)
        .assert()
        .success();
}

/// `linkbench` is the original's: its out-degrees are read from a Distribution.dat (refused
/// without one, or with a broken one, naming the way out), node i's links of a type go to i,
/// i + 1, ... as many as the file gives the node (each node's place in the distribution
/// shuffled), payloads are log-normal (nodes' past 1 KB), loaded nodes are version 1, and the
/// requests' id2s stay within ID2Chooser's ranges (add_link: 20 times the loaded links of
/// its id1 and type; update and delete: 1.11 times).
#[test]
fn linkbench_reads_its_out_degrees_and_chooses_id2s_as_the_original() {
    let s = Scratch::new();
    let url = format!("sqlite://{}", s.path("lb.db").display());
    let nodes = 3000u64;
    let n = nodes.to_string();
    // No file: refused before anything is made, saying how to give it.
    let out = Line::new(&["prepare", "linkbench", "--nodes", &n])
        .target(&url)
        .command()
        .env_remove("LINKBENCH_HOME")
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("--linkbench-data") && err.contains("linkbench_synthetic"),
        "{err}"
    );
    assert!(!s.path("lb.db").exists(), "nothing made");
    let broken = s.path("broken.dat");
    std::fs::write(&broken, "nlinks\n0 20\n1 fifty\n").unwrap();
    let out = Line::new(&["prepare", "linkbench", "--nodes", &n])
        .args(["--linkbench-data", broken.to_str().unwrap()])
        .target(&url)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("broken.dat: line 3"), "{err}");

    let file = distribution_file(&s);
    let data = ["--linkbench-data", file.to_str().unwrap()];
    Line::new(&["prepare", "linkbench", "--nodes", &n])
        .args(data)
        .target(&url)
        .assert()
        .success();
    let degrees = Degrees::measured(&file, nodes).unwrap();
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    let rows = |conn: &mut Box<dyn dbsweep::db::Conn>, sql: &str, cols: usize| -> Vec<Vec<i64>> {
        conn.query_rows(sql, cols)
            .unwrap()
            .into_iter()
            .map(|r| r.into_iter().map(|v| v.unwrap().parse().unwrap()).collect())
            .collect()
    };
    // Each node's loaded links per type, as the file and the original's split give them, to
    // id1, id1 + 1, ...
    let counts = rows(
        &mut conn,
        "SELECT id1, link_type, COUNT(*), MIN(id2 - id1), MAX(id2 - id1) FROM linktable \
         GROUP BY id1, link_type",
        5,
    );
    let mut total = 0;
    for r in &counts {
        let (id1, t) = (r[0] as u64, r[1] as u64 - 123_456_788);
        let c = degrees.of_type(id1, t);
        assert_eq!(
            (r[2] as u64, r[3], r[4] as u64),
            (c, 0, c - 1),
            "node {id1} type {t}"
        );
        total += c;
    }
    assert_eq!(total, degrees.loaded_links());
    // A fifth of the nodes have no links, as the file's first point says; the most linked
    // has 300 and is not node 1 (its place is shuffled).
    let without = (1..=nodes).filter(|&id| degrees.total(id) == 0).count();
    assert_eq!(without, 600);
    let top = degrees.most_linked(1).next().unwrap();
    assert_eq!(degrees.total(top), 300);
    assert_ne!(top, 1);
    // Payloads: log-normal with medians 8 and 128 bytes (sigma 1), links below 255 bytes,
    // a node's past 1,024 bytes now and then; nodes loaded as version 1.
    let median = |conn: &mut Box<dyn dbsweep::db::Conn>, table: &str| {
        let mut v: Vec<i64> = rows(conn, &format!("SELECT LENGTH(data) FROM {table}"), 1)
            .into_iter()
            .map(|r| r[0])
            .collect();
        v.sort_unstable();
        (v[v.len() / 2], *v.last().unwrap())
    };
    let (link_median, link_max) = median(&mut conn, "linktable");
    assert!(
        (6..=10).contains(&link_median) && link_max < 255,
        "{link_median} {link_max}"
    );
    let (node_median, node_max) = median(&mut conn, "nodetable");
    assert!(
        (110..=146).contains(&node_median) && node_max > 1024,
        "{node_median} {node_max}"
    );
    assert_eq!(
        rows(
            &mut conn,
            "SELECT COUNT(*) FROM nodetable WHERE version <> 1",
            1
        )[0][0],
        0
    );
    // The requests: every link there after them (added, updated or hidden) lies within the
    // range ID2Chooser gives its id1 and type.
    Line::new(&[
        "run",
        "linkbench",
        "--nodes",
        &n,
        "--time",
        "0",
        "--events",
        "20000",
    ])
    .args(data)
    .target(&url)
    .quiet()
    .output(&s.path("run.json"))
    .assert()
    .success();
    let all = rows(
        &mut conn,
        "SELECT id1, link_type, id2, visibility FROM linktable",
        4,
    );
    let (mut beyond_loaded, mut hidden) = (0, 0);
    for r in &all {
        let (id1, t, id2) = (r[0] as u64, r[1] as u64 - 123_456_788, r[2] as u64);
        let c = degrees.of_type(id1, t);
        let add_range = ((1.0 / 0.05) * c as f64).ceil().max(1.0) as u64;
        assert!(
            id2 >= id1 && id2 - id1 < add_range,
            "link ({id1}, {t}, {id2}) beyond ID2Chooser's range {add_range}"
        );
        beyond_loaded += u64::from(id2 - id1 >= c);
        hidden += u64::from(r[3] == 0);
    }
    assert!(
        beyond_loaded > 100,
        "{beyond_loaded} links added past the loaded ones"
    );
    assert!(hidden > 10, "{hidden} links hidden");
    Line::new(&["check", "linkbench", "--nodes", &n])
        .args(data)
        .target(&url)
        .assert()
        .success();
}

/// The built-in plan without the user's Distribution.dat refuses before it starts: one line,
/// no sweep directory (its schedule still shows with --dry-run).
#[test]
fn the_linkbench_plan_without_its_data_refuses_before_it_starts() {
    let s = Scratch::new();
    let dir = s.path("lb");
    let out = crate::util::dbsweep()
        .env_remove("LINKBENCH_HOME")
        .args(["sweep", "linkbench", "--output"])
        .arg(&dir)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("linkbench: its out-degrees are LinkBench's measured ones")
            && err.contains("--linkbench-data FILE")
            && err.lines().count() == 1,
        "{err}"
    );
    assert!(!dir.exists());
    crate::util::dbsweep()
        .env_remove("LINKBENCH_HOME")
        .args(["sweep", "linkbench", "--dry-run"])
        .assert()
        .success();
}
