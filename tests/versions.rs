//! Version studies: managed servers of several builds in one plan (PostgreSQL 13, 15 and 17;
//! MariaDB 10.11 and 11.4), as `scripts/builds` and Debian's packages install them.

use std::path::Path;

use serde_json::Value;

use crate::sweep::records;
use crate::util::Line;
use crate::util::{Scratch, dbsweep, read_json, u};

/// Runs `plan` in a sweep directory of `s`; returns the directory.
pub(crate) fn sweep(s: &Scratch, plan: &str) -> std::path::PathBuf {
    let file = s.path("plan.toml");
    std::fs::write(&file, plan).unwrap();
    let out = s.path("out");
    Line::sweep(&[], &file, &out).assert().success();
    out
}

const STEPS: &str = r#"
clients = [1, 2]
tables = 1
table_size = 2000
read_time = 1
write_time = 1
warmup_time = 0.5

[[steps]]
load = true
[[steps]]
workload = "oltp_point_select"
class = "read"
[[steps]]
workload = "oltp_update_index"
class = "write"
[[steps]]
workload = "oltp_insert"
class = "write"
"#;

/// Every record of `target`'s cells names `version` (the server's own version string) and
/// every managed server's data directory is gone, its processes with it.
fn assert_versions(dir: &Path, expected: &[(&str, &str, Option<&str>)]) {
    let recs = records(dir);
    for (target, version, basedir) in expected {
        let mine: Vec<&(String, Value)> = recs
            .iter()
            .filter(|(_, r)| r["target"] == *target)
            .collect();
        assert_eq!(mine.len(), 8, "{target}: 2 cells x 4 steps");
        for (name, r) in mine {
            assert_eq!(r["status"], "ok", "{name}: {}", r["error"]);
            let v = r["server_version"].as_str().unwrap_or_default();
            assert!(
                v.contains(version),
                "{name}: server_version {v:?}, want {version}"
            );
            assert_eq!(r["basedir"].as_str(), *basedir, "{name}");
            if let Some(results) = r["results"].as_object() {
                let tv = results["target"]["version"].as_str().unwrap_or_default();
                assert!(tv.contains(version), "{name}: results {tv:?}");
                let datadir = results["server"]["datadir"].as_str().unwrap();
                assert!(
                    !Path::new(datadir).exists(),
                    "{name}: {datadir} left behind"
                );
                assert!(
                    !processes_mention(datadir),
                    "{name}: a server of {datadir} still runs"
                );
            }
        }
    }
}

fn processes_mention(text: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|p| {
        std::fs::read(p.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(text))
            .unwrap_or(false)
    })
}

/// The relative throughput table's column headers, version line and base column values.
fn relative_table(report: &str) -> (String, String, Vec<String>) {
    let start = report
        .find("Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C; operations/s for LinkBench; transactions/s for pgbench; rows/s for ibench_insert), relative to")
        .unwrap_or_else(|| panic!("no relative table:\n{report}"));
    let lines: Vec<&str> = report[start..].lines().collect();
    let title = lines[0].to_string();
    let version = lines[3].to_string();
    let base_column: Vec<String> = lines[4..]
        .iter()
        .take_while(|l| !l.is_empty() && !l.starts_with('('))
        .filter(|l| !l.starts_with("--"))
        .map(|l| {
            l.split_whitespace()
                .rev()
                .nth(2)
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    (title, version, base_column)
}

#[test]
fn postgres_13_15_and_17_in_one_plan_report_against_the_oldest() {
    let s = Scratch::new();
    let plan = format!(
        "{STEPS}\n[[targets]]\nserver = \"postgres:15\"\n[[targets]]\nname = \"pg17\"\nserver = \"postgres:17\"\n[[targets]]\nname = \"pg13\"\nbasedir = \"/opt/dbsweep/builds/postgresql-13\"\nserver = \"postgres\"\n"
    );
    let dir = sweep(&s, &plan);
    assert_versions(
        &dir,
        &[
            (
                "pg13",
                "PostgreSQL 13.",
                Some("/opt/dbsweep/builds/postgresql-13"),
            ),
            (
                "postgres-15",
                "PostgreSQL 15.",
                Some("/usr/lib/postgresql/15"),
            ),
            (
                "pg17",
                "PostgreSQL 17.",
                Some("/opt/dbsweep/builds/postgresql-17/lib/postgresql/17"),
            ),
        ],
    );
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    let (title, version, base) = relative_table(&report);
    // The base is the oldest version wherever it stands among the columns.
    assert!(title.contains("relative to pg13"), "{title}");
    // `--base` takes the --server shorthand of a column named after it (postgres-15).
    let out = dbsweep()
        .args(["report", "--full", "--base", "postgres:15"])
        .arg(&dir)
        .output()
        .unwrap();
    let other = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(relative_table(&other).0.contains("relative to postgres-15"));
    let versions: Vec<&str> = version.split_whitespace().collect();
    assert_eq!(versions[0], "version");
    assert_eq!(versions.len(), 4, "{version}");
    assert!(versions.iter().any(|v| v.starts_with("13.")), "{version}");
    // Columns as in the report: find pg13's and check that every ratio in it is 1.00.
    let header = report[report.find(&title).unwrap()..]
        .lines()
        .nth(2)
        .unwrap();
    let cols: Vec<&str> = header.split_whitespace().skip(1).collect();
    let at = cols.iter().position(|c| *c == "pg13").unwrap();
    let rows: Vec<Vec<&str>> = report[report.find(&title).unwrap()..]
        .lines()
        .skip(4)
        .take_while(|l| !l.is_empty() && !l.starts_with('('))
        .filter(|l| !l.starts_with("--"))
        .map(|l| l.split_whitespace().rev().take(3).collect::<Vec<_>>())
        .collect();
    assert!(!rows.is_empty() && !base.is_empty());
    for r in &rows {
        assert_eq!(r[2 - at], "1.00", "{header}\n{report}");
    }
    // `--base` picks another column by its target name.
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .args(["--base", "pg17"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("relative to pg17"));
}

#[test]
fn mariadb_10_11_and_11_4_in_one_plan() {
    let s = Scratch::new();
    let plan = format!(
        "{STEPS}\n[[targets]]\nserver = \"mariadb:11.4\"\n[[targets]]\nserver = \"mariadb:10.11\"\n"
    );
    let dir = sweep(&s, &plan);
    assert_versions(
        &dir,
        &[
            ("mariadb-10_11", "10.11.", Some("/usr")),
            (
                "mariadb-11_4",
                "11.4.",
                Some("/opt/dbsweep/builds/mariadb-11.4.5"),
            ),
        ],
    );
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .output()
        .unwrap();
    let (title, _, _) = relative_table(&String::from_utf8_lossy(&out.stdout));
    assert!(title.contains("relative to mariadb-10_11"), "{title}");
}

#[test]
fn a_setting_one_version_refuses_fails_only_its_cell() {
    let s = Scratch::new();
    // vacuum_defer_cleanup_age went away in PostgreSQL 16.
    let plan = r#"
clients = [1]
table_size = 1000
read_time = 1
[[targets]]
server = "postgres:15"
[[targets]]
server = "postgres:17"
[configs.old]
settings = { vacuum_defer_cleanup_age = 0 }
[[steps]]
load = true
[[steps]]
workload = "oltp_point_select"
class = "read"
"#;
    let file = s.path("plan.toml");
    std::fs::write(&file, plan).unwrap();
    let out = s.path("out");
    let run = dbsweep()
        .arg("sweep")
        .arg(&file)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "a failed cell fails the sweep");
    let recs = records(&out);
    for (name, r) in &recs {
        if r["target"] == "postgres-17" {
            assert_eq!(r["status"], "failed", "{name}");
            let e = r["error"].as_str().unwrap();
            assert!(
                e.contains("setting vacuum_defer_cleanup_age")
                    && e.contains("unrecognized configuration parameter"),
                "{name}: {e}"
            );
        } else {
            assert_eq!(r["status"], "ok", "{name}: {}", r["error"]);
        }
    }
    assert_eq!(recs.len(), 4);
}

#[test]
fn servers_lists_every_build_and_a_missing_one_exits_2_before_anything_starts() {
    let out = dbsweep().arg("servers").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success());
    for (kind, v, short) in [
        ("postgres", "13.", "postgres:13"),
        ("postgres", "15.", "postgres:15"),
        ("postgres", "17.", "postgres:17"),
        ("postgres", "18.", "postgres:18"),
        ("mariadb", "10.11.", "mariadb:10.11"),
        ("mariadb", "11.4.", "mariadb:11.4"),
        ("mariadb", "11.8.", "mariadb:11.8"),
        ("mysql", "9.7.", "mysql:9.7"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(kind) && l.contains(v) && l.contains(short)),
            "{kind} {v}:\n{text}"
        );
    }
    let s = Scratch::new();
    let empty = s.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let before = std::fs::read_dir(std::env::temp_dir()).unwrap().count();
    for (args, says) in [
        (
            vec!["run", "oltp_point_select", "--server", "postgres:99"],
            "--server postgres:99: no such build".to_string(),
        ),
        (
            vec!["sweep", "quick", "--server", "postgres:99", "--dry-run"],
            "postgres:99: no such build".to_string(),
        ),
        (
            vec![
                "run",
                "oltp_point_select",
                "--server",
                "postgres",
                "--server-basedir",
                empty.to_str().unwrap(),
            ],
            format!("{}: no bin/postgres and bin/initdb in it", empty.display()),
        ),
    ] {
        let out = dbsweep().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    // Nothing was started: no new managed server directory.
    assert!(std::fs::read_dir(std::env::temp_dir()).unwrap().count() <= before);
}

#[test]
fn debians_newest_builds_run_a_step_and_record_where_they_came_from() {
    for (server, version, package) in [
        ("postgres:17", "17.", "postgresql-17"),
        ("postgres:18", "18.", "postgresql-18"),
        ("mariadb:11.8", "11.8.", "mariadb-server-core"),
        ("mysql:9.7", "9.7.", "mysql-server-core"),
    ] {
        let s = Scratch::new();
        let out = s.path("r.json");
        dbsweep()
            .args(["run", "oltp_point_select", "--server", server, "--prepare"])
            .args([
                "--table-size",
                "500",
                "--time",
                "1",
                "--report-interval",
                "0",
            ])
            .arg("--output")
            .arg(&out)
            .assert()
            .success();
        let r = read_json(&out);
        let v = r["server"]["version"].as_str().unwrap_or_default();
        assert!(v.contains(version), "{server}: {v}");
        let p = r["server"]["provenance"].as_str().unwrap_or_default();
        assert!(
            p.starts_with("Debian ") && p.contains(package),
            "{server}: {p}"
        );
        assert!(u(&r, "/events") > 0, "{server}");
    }
}

/// A TCP proxy in front of the server of `url` for one connection: the URL to connect to
/// instead, and the number of MySQL packets the server has sent through it so far (its byte
/// stream cut at each packet's 4-byte header).
fn packet_counting_proxy(url: &str) -> (String, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let packets = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = packets.clone();
    let (mut header, mut body_left) = (Vec::new(), 0usize);
    let url = crate::util::tcp_proxy(
        url,
        |_| {},
        move |bytes| {
            for &b in bytes {
                if body_left > 0 {
                    body_left -= 1;
                } else {
                    header.push(b);
                    if header.len() < 4 {
                        continue;
                    }
                    body_left = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
                    header.clear();
                }
                if body_left == 0 {
                    counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
        },
    );
    (url, packets)
}

/// A managed server of `kind` from the build in /opt/dbsweep/builds/`basedir` (None: the
/// system's).
fn start_build(
    kind: dbsweep::server::ServerKind,
    basedir: Option<&str>,
) -> dbsweep::server::ManagedServer {
    use dbsweep::server::{ManagedServer, ServerSpec, builds::Build};
    let build =
        basedir.map(|d| Build::at(&Path::new("/opt/dbsweep/builds").join(d), Some(kind)).unwrap());
    ManagedServer::start(&ServerSpec {
        build,
        ..ServerSpec::new(kind)
    })
    .unwrap_or_else(|e| panic!("{basedir:?}: {e}"))
}

#[test]
fn mysql_replies_are_read_as_each_server_version_ends_them() {
    use dbsweep::db::{OpenOptions, Param, TextRow};
    use dbsweep::server::ServerKind;
    use std::sync::atomic::Ordering;
    // Packets per prepared point select's reply: the column count, its definition unless
    // MariaDB's cached metadata leaves it out (10.6+), the row, and the OK ending the set (no
    // EOF packets: CLIENT_DEPRECATE_EOF). Before both, five.
    for (kind, basedir, per_select) in [
        (ServerKind::Mariadb, None, 3),
        (ServerKind::Mariadb, Some("mariadb-11.4.5"), 3),
        (ServerKind::Mariadb, Some("mariadb-11.8"), 3),
        (ServerKind::Mysql, Some("mysql-9.7"), 4),
    ] {
        let server = start_build(kind, basedir);
        let (url, packets) = packet_counting_proxy(&server.url);
        let o = OpenOptions {
            create: false,
            text_statements: false,
            pipeline: false,
            timeouts: Default::default(),
        };
        let mut conn = dbsweep::db::open(&url, o).unwrap().connect().unwrap();
        conn.batch("CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))")
            .unwrap();
        conn.batch("INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
            .unwrap();
        conn.batch(
            "CREATE PROCEDURE two_sets() BEGIN SELECT id, c FROM t ORDER BY id; SELECT count(*) AS n FROM t; END",
        )
        .unwrap();
        // Two result sets and the call's own OK: every row, each set's names, and the
        // connection still in step afterwards.
        let mut seen = Vec::new();
        let mut on_row = |row: &dyn TextRow| {
            seen.push(format!(
                "{} {}={}",
                row.result_set(),
                row.name(row.len() - 1).unwrap_or("?"),
                String::from_utf8_lossy(row.get(row.len() - 1).unwrap_or(b"NULL"))
            ));
        };
        let out = conn.simple("CALL two_sets()", &mut on_row).unwrap();
        assert_eq!(
            seen,
            ["0 c=one", "0 c=two", "0 c=three", "1 n=3"],
            "{basedir:?}"
        );
        assert_eq!(out.rows, 4, "{basedir:?}");
        assert_eq!(conn.query_i64("SELECT 7").unwrap(), Some(7), "{basedir:?}");
        // Prepared selects: each reply's rows decoded, and its packets counted.
        let select = conn.prepare("SELECT c FROM t WHERE id = ?").unwrap();
        let mut values = Vec::new();
        conn.query_each(select, &[Param::Int(2)], &mut |row: &dyn TextRow| {
            values.push(String::from_utf8_lossy(row.get(0).unwrap_or_default()).into_owned())
        })
        .unwrap();
        let before = packets.load(Ordering::SeqCst);
        for id in 1..=30 {
            let rows = conn
                .query_each(
                    select,
                    &[Param::Int(id % 3 + 1)],
                    &mut |row: &dyn TextRow| {
                        values.push(
                            String::from_utf8_lossy(row.get(0).unwrap_or_default()).into_owned(),
                        )
                    },
                )
                .unwrap();
            assert_eq!(rows, 1);
        }
        // The last reply has come whole before the next command's: one more round trip.
        assert_eq!(conn.query_i64("SELECT 1").unwrap(), Some(1));
        let text_select = 4; // count, definition, row, the OK (metadata is cached for prepared only)
        let got = packets.load(Ordering::SeqCst) - before;
        assert_eq!(
            got,
            30 * per_select + text_select,
            "{basedir:?}: packets for 30 prepared selects and a text one"
        );
        assert_eq!(values.len(), 31);
        assert_eq!(&values[..4], ["two", "two", "three", "one"], "{basedir:?}");
    }
}

/// The rows of prepared statement `stmt` with `id`, each value as text ("NULL" for NULL).
fn prepared_rows(
    conn: &mut dyn dbsweep::db::Conn,
    stmt: dbsweep::db::StmtId,
    id: i64,
) -> Vec<Vec<String>> {
    use dbsweep::db::{Param, TextRow};
    let mut rows = Vec::new();
    conn.query_each(stmt, &[Param::Int(id)], &mut |row: &dyn TextRow| {
        rows.push(
            (0..row.len())
                .map(|i| {
                    row.get(i)
                        .map_or("NULL".into(), |v| String::from_utf8_lossy(v).into())
                })
                .collect(),
        )
    })
    .unwrap_or_else(|e| panic!("prepared select: {e}"));
    rows
}

/// A prepared statement's binary rows are decoded by the columns as the server describes them:
/// unsigned integers over the signed range keep their value, and after the table is altered
/// between two executions of the same statement the new columns are decoded as what they
/// now are, on this execution (which carries them) and the next (MariaDB's cached metadata:
/// the server sends none while they stay as it last sent them).
#[test]
fn prepared_rows_follow_unsigned_and_altered_columns_on_each_version() {
    use dbsweep::db::{OpenOptions, TextRow};
    use dbsweep::server::ServerKind;
    for (kind, basedir) in [
        (ServerKind::Mariadb, None),
        (ServerKind::Mariadb, Some("mariadb-11.4.5")),
        (ServerKind::Mariadb, Some("mariadb-11.8")),
        (ServerKind::Mysql, Some("mysql-9.7")),
    ] {
        let server = start_build(kind, basedir);
        let kind = (kind, basedir);
        let o = OpenOptions {
            create: false,
            text_statements: false,
            pipeline: false,
            timeouts: Default::default(),
        };
        let mut conn = dbsweep::db::open(&server.url, o)
            .unwrap()
            .connect()
            .unwrap();
        conn.batch(
            "CREATE TABLE u (id INT PRIMARY KEY, a TINYINT UNSIGNED, b SMALLINT UNSIGNED, \
             c INT UNSIGNED, d BIGINT UNSIGNED, e MEDIUMINT UNSIGNED, g INT)",
        )
        .unwrap();
        conn.batch(
            "INSERT INTO u VALUES (1, 255, 65535, 4294967295, 18446744073709551615, 16777215, -7), \
             (2, 1, 2, 3, 4, 5, 6)",
        )
        .unwrap();
        let select = conn.prepare("SELECT * FROM u WHERE id = ?").unwrap();
        let max = [
            "1",
            "255",
            "65535",
            "4294967295",
            "18446744073709551615",
            "16777215",
            "-7",
        ];
        assert_eq!(prepared_rows(conn.as_mut(), select, 1), [max], "{kind:?}");
        assert_eq!(
            prepared_rows(conn.as_mut(), select, 2),
            [["2", "1", "2", "3", "4", "5", "6"]],
            "{kind:?}"
        );
        conn.batch("ALTER TABLE u MODIFY c VARCHAR(20), ADD f VARCHAR(10) DEFAULT 'new'")
            .unwrap();
        conn.batch("UPDATE u SET c = 'text' WHERE id = 1").unwrap();
        let altered = [
            "1",
            "255",
            "65535",
            "text",
            "18446744073709551615",
            "16777215",
            "-7",
            "new",
        ];
        for _ in 0..2 {
            assert_eq!(
                prepared_rows(conn.as_mut(), select, 1),
                [altered],
                "{kind:?}"
            );
        }
        assert_eq!(
            prepared_rows(conn.as_mut(), select, 2),
            [["2", "1", "2", "3", "4", "5", "6", "new"]],
            "{kind:?}"
        );
        // Every kind of value reads the same from a prepared statement as from a text query:
        // time values with their fraction as the column declares it, and none where it has none.
        conn.batch(
            "CREATE TABLE tm (id INT PRIMARY KEY, a DATETIME(6), b TIME(3), c TIMESTAMP(2) NULL,              d DATE, e DECIMAL(10,3), f DOUBLE, g YEAR, h DATETIME, i TIME, j TINYINT, k BIGINT)",
        )
        .unwrap();
        conn.batch(
            "INSERT INTO tm VALUES              (1, '2024-02-29 13:14:15.123456', '-01:02:03.5', '2024-01-01 00:00:00.10',               '2024-03-01', -12.5, 2.25, 2024, '2024-01-01 01:02:03', '838:59:59', -128,               -9223372036854775808),              (2, '2024-02-29 13:14:15', '00:00:00', NULL, NULL, 0, 0, NULL, NULL, '-00:00:01',               127, 9223372036854775807)",
        )
        .unwrap();
        let mut text = Vec::new();
        conn.simple("SELECT * FROM tm ORDER BY id", &mut |row: &dyn TextRow| {
            text.push(
                (0..row.len())
                    .map(|i| {
                        row.get(i)
                            .map_or("NULL".into(), |v| String::from_utf8_lossy(v).into())
                    })
                    .collect::<Vec<String>>(),
            )
        })
        .unwrap();
        assert_eq!(text.len(), 2, "{kind:?}");
        let select = conn.prepare("SELECT * FROM tm WHERE id = ?").unwrap();
        for (id, want) in [1, 2].into_iter().zip(&text) {
            assert_eq!(
                &prepared_rows(conn.as_mut(), select, id)[0],
                want,
                "{kind:?}"
            );
        }
        // Floating point as the server writes it: positional or with an exponent by where its
        // digits lie, FLOAT to six digits.
        let values = [
            ("1e20", "1.1"),
            ("-1.5e-7", "1e20"),
            ("1e15", "3.4e38"),
            ("3e14", "1e-7"),
            ("9.99e14", "1e15"),
            ("1.5e15", "1e14"),
            ("1e16", "123456789"),
            ("2.5e-15", "1e-5"),
            ("1e-15", "1.25e-5"),
            ("1e-16", "0.000123456789"),
            ("1.5e-16", "16777217"),
            ("1.2345678901234567e20", "3.4028234e38"),
            ("1.2345678901234567e16", "1234567"),
            ("1234567890123456.7", "1.0000001"),
            ("1.2345678901234567e-14", "1e-14"),
            ("1.7976931348623157e308", "2e-38"),
            ("1e-300", "-1.5e7"),
            ("0.30000000000000004", "0"),
            ("99999999999999999", "1e-15"),
            ("0", "1.5e-16"),
        ];
        conn.batch("CREATE TABLE fl (id INT PRIMARY KEY, d DOUBLE, f FLOAT)")
            .unwrap();
        let rows: Vec<String> = (1..)
            .zip(values)
            .map(|(id, (d, f))| format!("({id}, {d}, {f})"))
            .collect();
        conn.batch(&format!("INSERT INTO fl VALUES {}", rows.join(", ")))
            .unwrap();
        let mut text = Vec::new();
        conn.simple(
            "SELECT d, f FROM fl ORDER BY id",
            &mut |row: &dyn TextRow| {
                text.push([0, 1].map(|i| String::from_utf8_lossy(row.get(i).unwrap()).into_owned()))
            },
        )
        .unwrap();
        assert_eq!(text.len(), values.len(), "{kind:?}");
        let select = conn.prepare("SELECT d, f FROM fl WHERE id = ?").unwrap();
        for (id, want) in (1..).zip(&text) {
            assert_eq!(
                prepared_rows(conn.as_mut(), select, id)[0],
                want,
                "{kind:?}: row {id} {:?}",
                values[id as usize - 1]
            );
        }
    }
}
