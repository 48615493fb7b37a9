//! Data safety (the second hostile pass): tables dbsweep did not make, links in a data
//! directory it was given, outputs that would overwrite their own inputs, a second sweep on a
//! running one's directory, passwords with reserved characters, privileges a user lacks. Each
//! one failed on the code before its fix.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use dbsweep::server::ServerKind;

use crate::util::HANG;
use crate::util::mock_results;
use crate::util::refused;
use crate::util::write_json;
use crate::util::{Scratch, dbsweep, root_of, start};
use base64::Engine;

/// A connection to `url` through dbsweep's own client, for set-up and checks.
fn connect(url: &str) -> Box<dyn dbsweep::db::Conn> {
    let o = dbsweep::db::OpenOptions {
        create: false,
        text_statements: true,
        pipeline: false,
        timeouts: Default::default(),
    };
    dbsweep::db::open(url, o).unwrap().connect().unwrap()
}

/// Exit `code` with one error line that holds every one of `what`.
fn assert_refused(out: &std::process::Output, code: i32, what: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    for w in what {
        assert!(stderr.contains(w), "expected {w:?} in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors = stderr.lines().filter(|l| l.contains("error")).count();
    assert_eq!(errors, 1, "one error line: {stderr}");
}

per_server!(
    cleanup_drops_nothing_unless_every_sbtest_table_has_its_types_and_is_a_plain_table,
    |kind| {
        let server = start(kind);
        let url = server.url.clone();
        let prepare = [
            "prepare",
            "oltp_point_select",
            "--tables",
            "2",
            "--table-size",
            "50",
        ];
        dbsweep()
            .args(prepare)
            .args(["--target", &url])
            .timeout(HANG)
            .assert()
            .success();
        let mut c = connect(&url);
        // sbtest2: the right column names with other types (a user's own table); sbtest3 a
        // view; sbtest4 partitioned, with sbtest's exact columns.
        let (text, partitioned) = if kind == ServerKind::Postgres {
            (
                "CREATE TABLE sbtest2 (id integer, k integer, c text, pad text)",
                "CREATE TABLE sbtest4 (id integer, k integer, c char(120), pad char(60)) \
                 PARTITION BY RANGE (id); \
                 CREATE TABLE sbtest4_p1 PARTITION OF sbtest4 FOR VALUES FROM (0) TO (1000)",
            )
        } else {
            (
                "CREATE TABLE sbtest2 (id integer, k integer, c varchar(120), pad varchar(60))",
                "CREATE TABLE sbtest4 (id integer, k integer, c char(120), pad char(60), \
                 PRIMARY KEY (id)) PARTITION BY HASH (id) PARTITIONS 2",
            )
        };
        c.batch("DROP TABLE sbtest2").unwrap();
        c.batch(text).unwrap();
        c.batch("INSERT INTO sbtest2 VALUES (1, 1, 'mine', 'mine')")
            .unwrap();
        c.batch("CREATE VIEW sbtest3 AS SELECT * FROM sbtest1")
            .unwrap();
        for sql in partitioned.split("; ") {
            c.batch(sql).unwrap();
        }
        c.batch("INSERT INTO sbtest4 VALUES (7, 7, 'mine', 'mine')")
            .unwrap();
        for (tables, what) in [
            ("2", vec!["sbtest2(", "other columns or types"]),
            ("3", vec!["sbtest3(", "is a view"]),
            (
                "4",
                vec!["sbtest4(", "partitioned table", "sbtest3(", "sbtest2("],
            ),
        ] {
            for args in [
                vec!["cleanup", "oltp_point_select", "--tables", tables],
                vec![
                    "prepare",
                    "oltp_point_select",
                    "--tables",
                    tables,
                    "--table-size",
                    "50",
                    "--force",
                ],
            ] {
                let out = dbsweep()
                    .args(&args)
                    .args(["--target", &url])
                    .timeout(HANG)
                    .output()
                    .unwrap();
                assert_refused(&out, 2, &what);
                // Nothing was dropped: sbtest1 (dbsweep's own) was checked with the others
                // before any drop, and the user's rows are all there.
                assert_eq!(
                    c.query_i64("SELECT count(*) FROM sbtest1").unwrap(),
                    Some(50),
                    "{args:?}"
                );
                for t in ["sbtest2", "sbtest4"] {
                    let sql = format!("SELECT count(*) FROM {t} WHERE c = 'mine'");
                    assert_eq!(c.query_i64(&sql).unwrap(), Some(1), "{t} after {args:?}");
                }
            }
        }
        // dbsweep's own tables still go.
        c.batch("DROP VIEW sbtest3").unwrap();
        dbsweep()
            .args(["cleanup", "oltp_point_select", "--tables", "1"])
            .args(["--target", &url])
            .timeout(HANG)
            .assert()
            .success();
        assert!(!c.table_exists("sbtest1").unwrap());
    }
);

#[test]
fn tpcc_cleanup_leaves_a_table_with_tpcc_names_and_other_types() {
    let s = Scratch::new();
    {
        let db = s.sqlite();
        // The columns of dbsweep's warehouse, with w_ytd as text.
        db.execute_batch(
            "CREATE TABLE warehouse (w_id INTEGER, w_name VARCHAR(10), w_street_1 VARCHAR(20), \
             w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), \
             w_tax NUMERIC, w_ytd TEXT); INSERT INTO warehouse (w_id, w_ytd) VALUES (1, 'mine');",
        )
        .unwrap();
    }
    let out = dbsweep()
        .args(["tpcc", "cleanup", "--target", &s.target()])
        .timeout(HANG)
        .output()
        .unwrap();
    assert_refused(
        &out,
        2,
        &["warehouse(", "w_ytd text", "other columns or types"],
    );
    let kept: String = s
        .sqlite()
        .query_row("SELECT w_ytd FROM warehouse", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, "mine");
}

/// Owner (uid) of `path` itself, not of what a link points to.
fn owner(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().uid()
}

#[test]
#[ignore = "needs root, which hands the data directory to the server's user (scripts/test runs it as root)"]
fn a_datadir_with_links_out_of_it_is_refused_and_forced_gives_nothing_outside_away() {
    crate::util::assert_root();
    let s = Scratch::enterable();
    let victim_dir = s.path("others");
    std::fs::create_dir(&victim_dir).unwrap();
    let victim = victim_dir.join("their-file");
    std::fs::write(&victim, "theirs").unwrap();
    let dir = s.path("pg");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("to-a-file")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("up")).unwrap();
    // server.crt through a link would overwrite the victim with a certificate.
    std::os::unix::fs::symlink(&victim, dir.join("server.log")).unwrap();
    let prepare = |extra: &[&str]| {
        dbsweep()
            .args(["prepare", "oltp_point_select", "--table-size", "10"])
            .args([
                "--server",
                "postgres",
                "--server-datadir",
                dir.to_str().unwrap(),
            ])
            .args(extra)
            .timeout(HANG)
            .output()
            .unwrap()
    };
    // Not empty and not dbsweep's: refused, nothing changed.
    assert_refused(
        &prepare(&[]),
        2,
        &["--server-datadir", "did not make", "--server-datadir-force"],
    );
    assert_eq!(owner(&victim), 0);
    // Forced: the links' targets keep their owner and content; the server refuses to log
    // through a link, so the start fails, and still nothing outside changed.
    let out = prepare(&["--server-datadir-force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(owner(&victim), 0, "{stderr}");
    assert_eq!(owner(&victim_dir), 0, "{stderr}");
    assert_eq!(owner(s.dir.path()), 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "theirs");
    // Without the log link, a forced start runs and still gives nothing outside away.
    std::fs::remove_file(dir.join("server.log")).unwrap();
    let out = prepare(&["--server-datadir-force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(owner(&victim), 0);
    assert_eq!(owner(&victim_dir), 0);
    assert_eq!(owner(s.dir.path()), 0);
    assert_ne!(
        owner(&dir.join("data")),
        0,
        "the data itself went to the server's user"
    );
    // Now the directory is dbsweep's (marked): reused without --server-datadir-force.
    let again = prepare(&["--force"]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn outputs_that_are_their_own_inputs_are_refused_and_the_input_kept() {
    let s = Scratch::new();
    let r = s.path("r.json");
    s.cmd(&[
        "run",
        "oltp_point_select",
        "--prepare",
        "--table-size",
        "100",
        "--events",
        "200",
        "--time",
        "0",
        "--report-interval",
        "0",
    ])
    .arg("--output")
    .arg(&r)
    .timeout(HANG)
    .assert()
    .success();
    let original = std::fs::read(&r).unwrap();
    // Another spelling of the same file, and a hard link to it.
    let other_spelling = s.dir.path().join(".").join("r.json");
    let linked = s.path("linked.json");
    std::fs::hard_link(&r, &linked).unwrap();
    let rs = r.to_str().unwrap();
    for (args, out) in [
        (vec!["hdr", rs], &r),
        (vec!["merge", rs, rs], &other_spelling),
        (vec!["report", "--full", rs], &linked),
    ] {
        let o = dbsweep()
            .args(&args)
            .arg("--output")
            .arg(out)
            .timeout(HANG)
            .output()
            .unwrap();
        assert_refused(&o, 2, &["--output", "is the input"]);
        assert_eq!(std::fs::read(&r).unwrap(), original, "{args:?}");
    }
    // A sweep directory's files: report DIR --output DIR/plan.toml.
    let sweep = s.path("sw");
    std::fs::create_dir_all(sweep.join("steps")).unwrap();
    std::fs::write(sweep.join("plan.toml"), "name = \"x\"\n").unwrap();
    let o = dbsweep()
        .args(["report", "--full", rs, "--output"])
        .arg(sweep.join("plan.toml"))
        .timeout(HANG)
        .output()
        .unwrap();
    assert_refused(&o, 2, &["--output", "sweep directory"]);
    assert_eq!(
        std::fs::read_to_string(sweep.join("plan.toml")).unwrap(),
        "name = \"x\"\n"
    );
}

#[test]
fn a_second_sweep_on_a_running_sweeps_directory_is_refused() {
    let s = Scratch::new();
    let plan = crate::sweep::write_plan(
        &s,
        "name = \"t\"\nclients = [1]\ntable_size = 500\nread_time = 600\n\
         [[steps]]\nload = true\n\
         [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    );
    let dir = s.path("sweep");
    let (child, lines) = crate::util::spawn_measuring(
        crate::util::dbsweep_std()
            .arg("sweep")
            .arg(&plan)
            .arg("--output")
            .arg(&dir)
            .stdout(std::process::Stdio::piped()),
        "[sqlite.default.c1 point] [ 1s ]",
    );
    let running = format!("another dbsweep (pid {})", child.id());
    let resume = dbsweep()
        .args(["sweep", "--read-time", "0.5", "--resume"])
        .arg(&dir)
        .timeout(HANG)
        .output()
        .unwrap();
    assert_refused(&resume, 2, &["--resume", &running]);
    let again = dbsweep()
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .timeout(HANG)
        .output()
        .unwrap();
    assert_refused(&again, 2, &["--output", &running]);
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let rest: Vec<String> = lines.collect();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{rest:?}");
    // The lock went with the process: the resume runs and finishes the interrupted step.
    dbsweep()
        .args(["sweep", "--read-time", "0.5", "--resume"])
        .arg(&dir)
        .timeout(HANG)
        .assert()
        .success();
    let point = crate::util::read_json(&dir.join("steps/sqlite.default.c1/02-point.json"));
    assert_eq!(point["status"], "ok");
}

#[test]
fn passwords_with_reserved_characters_connect_as_written_and_never_print() {
    let server = start(ServerKind::Mariadb);
    let password = "p?w@d:/x#y%zz&q r";
    let mut root = root_of(&server);
    root.batch(&format!("CREATE USER 'odd'@'%' IDENTIFIED BY '{password}'"))
        .unwrap();
    root.batch("GRANT ALL ON *.* TO 'odd'@'%'").unwrap();
    let s = Scratch::new();
    let sysbench = s.path("sysbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &sysbench).unwrap();
    let port = server.port.to_string();
    let by_url = |pw: &str| {
        dbsweep()
            .args([
                "prepare",
                "oltp_point_select",
                "--table-size",
                "10",
                "--force",
            ])
            .arg("--target")
            .arg(format!("mysql://odd:{pw}@127.0.0.1:{port}/sbtest"))
            .timeout(HANG)
            .output()
            .unwrap()
    };
    let by_options = |pw: &str| {
        std::process::Command::new(&sysbench)
            .args([
                "oltp_point_select",
                "--db-driver=mysql",
                "--mysql-host=127.0.0.1",
            ])
            .arg(format!("--mysql-port={port}"))
            .args(["--mysql-user=odd", "--mysql-db=sbtest", "--table-size=10"])
            .arg(format!("--mysql-password={pw}"))
            .arg("prepare")
            .output()
            .unwrap()
    };
    let encoded = "p%3Fw%40d%3A%2Fx%23y%25zz%26q%20r";
    let cleanup = || {
        dbsweep()
            .args(["cleanup", "oltp_point_select", "--target"])
            .arg(format!("mysql://odd:{encoded}@127.0.0.1:{port}/sbtest"))
            .timeout(HANG)
            .assert()
            .success();
    };
    for how in ["a URL written as is", "sysbench's options"] {
        let out = if how.starts_with("a URL") {
            by_url(password)
        } else {
            by_options(password)
        };
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(0), "{how}: {all}");
        // The same password percent-encoded is the same password.
        cleanup();
    }
    // A wrong password fails (the right one was really checked), and no part of it prints.
    for (how, out) in [
        ("a URL", by_url("Zq?Xv@Kj:Wm/Yt#Rb&Hn Pd")),
        ("sysbench's options", by_options("Zq?Xv@Kj:Wm/Yt#Rb&Hn Pd")),
    ] {
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_ne!(out.status.code(), Some(0), "{how}: {all}");
        for part in ["Zq", "Xv", "Kj", "Wm", "Yt", "Rb", "Hn", "Pd"] {
            assert!(!all.contains(part), "{how}: {part:?} printed: {all}");
        }
    }
}

#[test]
fn a_client_host_that_ssh_would_read_as_an_option_or_with_a_password_is_refused() {
    let s = Scratch::new();
    for (host, what) in [
        ("ssh://-oProxyCommand", "starting with '-'"),
        ("ssh://-l@h1", "starting with '-'"),
        ("ssh://u:s3?cr@t@h1", "takes no password"),
    ] {
        let plan = format!(
            "name = \"t\"\nclient_hosts = [\"{host}\"]\n[[targets]]\nurl = \"mock://\"\n\
             [[steps]]\nname = \"p\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n"
        );
        let out = crate::util::dry_run(&s, &plan);
        assert_refused(&out, 2, &["client_hosts", what]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("s3") && !stderr.contains("cr@t"),
            "{stderr}"
        );
    }
}

/// A mock run of 500 events written to `path`, as client host `id`.
fn mock_part(path: &Path, id: &str) {
    dbsweep()
        .args([
            "run",
            "oltp_point_select",
            "--target",
            "mock://",
            "--events",
            "500",
        ])
        .args([
            "--time",
            "0",
            "--report-interval",
            "0",
            "--client-id",
            id,
            "--output",
        ])
        .arg(path)
        .timeout(HANG)
        .assert()
        .success();
}

#[test]
fn merge_refuses_a_part_given_twice_and_counts_that_overflow() {
    let s = Scratch::new();
    let (a, b) = (s.path("a.json"), s.path("b.json"));
    mock_part(&a, "h1");
    mock_part(&b, "h2");
    let copy = s.path("copy.json");
    std::fs::copy(&a, &copy).unwrap();
    let merge = |inputs: &[&Path]| {
        dbsweep()
            .arg("merge")
            .args(inputs)
            .arg("--output")
            .arg(s.path("m.json"))
            .timeout(HANG)
            .output()
            .unwrap()
    };
    for twice in [[&a, &a], [&a, &copy]] {
        let out = merge(&[twice[0], twice[1], &b]);
        assert_refused(
            &out,
            2,
            &["the same run as", "give each client host's file once"],
        );
        assert!(!s.path("m.json").exists());
    }
    // Counts near 2^64 in each part: the merged count would wrap.
    for (path, id) in [(&a, "h1"), (&b, "h2")] {
        let mut r = crate::util::read_json(path);
        r["queries"]["total"] = serde_json::json!(u64::MAX - 10);
        r["client_id"] = id.into();
        std::fs::write(path, r.to_string()).unwrap();
    }
    let out = merge(&[&a, &b]);
    assert_refused(&out, 2, &["queries", "add up past"]);
    assert!(!s.path("m.json").exists());
}

#[test]
fn a_step_name_too_long_for_a_file_name_is_refused_by_the_plan_check() {
    let s = Scratch::new();
    let name = "x".repeat(260);
    let plan = format!(
        "name = \"t\"\n[[steps]]\nload = true\n[[steps]]\nname = \"{name}\"\n\
         workload = \"oltp_point_select\"\nclass = \"read\"\n"
    );
    let out = crate::util::dry_run(&s, &plan);
    assert_refused(&out, 2, &["p.toml:4", "260 characters long"]);
}

/// The pid of the process whose command line mentions `text` (a managed server's directory).
fn pid_mentioning(text: &str) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|p| {
        let pid: i32 = p.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(p.path().join("cmdline")).ok()?;
        (String::from_utf8_lossy(&cmdline).contains(text) && pid as u32 != std::process::id())
            .then_some(pid)
    })
}

/// The first file under `dir` whose name is `name`.
fn find_file(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    crate::util::files_under(dir)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
}

#[test]
fn a_server_that_dies_in_a_load_fails_its_cell_and_resume_runs_it_again() {
    let s = Scratch::enterable();
    let servers = s.path("servers");
    std::fs::create_dir(&servers).unwrap();
    let plan = crate::sweep::write_plan(
        &s,
        &format!(
            "name = \"die\"\nclients = [1]\ntable_size = 1000000\nread_time = 0.5\nwrite_time = 0.5\n\
             [[targets]]\nserver = \"mariadb\"\ndatadir_in = {servers:?}\n\
             [[steps]]\nload = true\n\
             [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n\
             [[steps]]\nname = \"update\"\nworkload = \"oltp_update_index\"\nclass = \"write\"\n"
        ),
    );
    let dir = s.path("sweep");
    let sweep = crate::util::dbsweep_std()
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The load has begun once sbtest1's file exists; then the server is killed under it.
    let deadline = std::time::Instant::now() + HANG;
    let table = loop {
        if let Some(f) = find_file(&servers, "sbtest1.ibd") {
            break f;
        }
        assert!(std::time::Instant::now() < deadline, "the load never began");
        std::thread::yield_now();
    };
    let server_dir = table
        .ancestors()
        .nth(3)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let pid = pid_mentioning(&server_dir).expect("the managed server's process");
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let out = sweep.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cell = dir.join("steps/mariadb.default.c1");
    let load = crate::util::read_json(&cell.join("01-load.json"));
    assert_eq!(load["status"], "failed");
    assert_eq!(load["rerun"], true, "{load}");
    assert!(
        load["error"]
            .as_str()
            .unwrap()
            .contains("the managed server exited"),
        "{load}"
    );
    for later in ["02-point.json", "03-update.json"] {
        let r = crate::util::read_json(&cell.join(later));
        assert_eq!(r["status"], "failed", "{later}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .starts_with("not run: the cell's server failed"),
            "{r}"
        );
        assert!(r["results"].is_null(), "{later} ran against a dead server");
    }
    // --resume runs the whole cell again on a fresh server.
    let resumed = dbsweep()
        .args(["sweep", "--resume"])
        .arg(&dir)
        .timeout(HANG * 3)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(
        stdout.contains("3 step(s) done, 0 failed, 0 kept from before"),
        "{stdout}"
    );
    for step in ["01-load.json", "02-point.json", "03-update.json"] {
        let r = crate::util::read_json(&cell.join(step));
        assert_eq!(r["status"], "ok", "{step}: {r}");
        assert!(r["rerun"].is_null(), "{step}");
    }
}

#[test]
fn settings_that_move_where_a_managed_server_listens_are_refused_before_it_starts() {
    for setting in [
        "port=3399",
        "skip-networking=1",
        "listen_addresses=*",
        "socket=/tmp/x",
    ] {
        let out = dbsweep()
            .args([
                "run",
                "oltp_point_select",
                "--server",
                "mariadb",
                "--server-set",
                setting,
            ])
            .timeout(HANG)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{setting}: {stderr}");
        assert!(
            stderr.contains("is dbsweep's to set"),
            "{setting}: {stderr}"
        );
    }
}

#[test]
fn a_plan_asking_mysql_for_its_removed_query_cache_is_refused_with_what_replaced_it() {
    let s = Scratch::new();
    let out = dbsweep()
        .args(["sweep", "query-cache", "--server", "mysql:9.7", "--dry-run"])
        .current_dir(s.dir.path())
        .timeout(HANG)
        .output()
        .unwrap();
    assert_refused(
        &out,
        2,
        &["query_cache", "MySQL 8.0 removed the query cache"],
    );
}

#[test]
fn a_user_without_privilege_to_read_a_table_is_told_so_and_nothing_is_dropped() {
    let server = start(ServerKind::Mariadb);
    dbsweep()
        .args(["prepare", "oltp_point_select", "--table-size", "10"])
        .args(["--target", &server.url])
        .timeout(HANG)
        .assert()
        .success();
    // A user that may drop sbtest1 but read none of its columns: its definition is hidden.
    let mut root = root_of(&server);
    root.batch("CREATE USER 'dropper'@'%'").unwrap();
    root.batch("GRANT DROP ON sbtest.sbtest1 TO 'dropper'@'%'")
        .unwrap();
    let url = format!("mysql://dropper@127.0.0.1:{}/sbtest", server.port);
    let out = dbsweep()
        .args(["cleanup", "oltp_point_select", "--target", &url])
        .timeout(HANG)
        .output()
        .unwrap();
    assert_refused(&out, 2, &["sbtest1", "no privilege to read its definition"]);
    let n = root
        .query_text("SELECT count(*) FROM sbtest.sbtest1")
        .unwrap();
    assert_eq!(n.as_deref(), Some("10"));
}

/// A second prepare of a workload whose tables are there refuses, naming the command that
/// removes them, and drops nothing; with --force it drops and reloads them. One rule, one
/// place (workload::tables::refuse_or_drop) for LinkBench, the Insert Benchmark and pgbench.
#[test]
fn a_second_prepare_refuses_naming_its_cleanup_and_force_reloads() {
    let s = Scratch::new();
    let url = format!("sqlite://{}", s.path("again.db").display());
    for (workload, extra, table, cleanup) in [
        (
            "linkbench_synthetic",
            &["--nodes", "200"][..],
            "nodetable",
            "dbsweep cleanup linkbench",
        ),
        (
            "ibench_insert",
            &["--table-size", "200"][..],
            "purchases_index",
            "dbsweep cleanup ibench_insert",
        ),
        (
            "pgbench_tpcb_like",
            &[][..],
            "pgbench_accounts",
            "dbsweep cleanup pgbench_tpcb_like",
        ),
    ] {
        let prepare = |force: bool| {
            let mut c = dbsweep();
            c.args(["prepare", workload, "--target", &url]).args(extra);
            if force {
                c.arg("--force");
            }
            c.timeout(HANG).output().unwrap()
        };
        assert!(
            prepare(false).status.success(),
            "{workload}: the first prepare"
        );
        let rows = |c: &mut Box<dyn dbsweep::db::Conn>| {
            c.query_i64(&format!("SELECT COUNT(*) FROM {table}"))
                .unwrap()
                .unwrap()
        };
        let before = rows(&mut connect(&url));
        let again = prepare(false);
        assert_refused(
            &again,
            2,
            &[
                &format!("table {table} already exists"),
                &format!("run `{cleanup}` first"),
                "--force",
            ],
        );
        assert_eq!(
            rows(&mut connect(&url)),
            before,
            "{workload}: nothing dropped"
        );
        assert!(
            prepare(true).status.success(),
            "{workload}: --force reloads"
        );
        assert_eq!(
            rows(&mut connect(&url)),
            before,
            "{workload}: reloaded whole"
        );
    }
}

#[test]
fn a_run_never_writes_its_results_over_a_file_that_is_not_a_results_file() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "100"])
        .assert()
        .success();
    let db_before = std::fs::read(s.db()).unwrap();
    let script = s.path("mine.lua");
    std::fs::write(&script, "function event() end\n").unwrap();
    let config = s.path("sysbench.conf");
    std::fs::write(&config, "threads=2\n").unwrap();
    // The database being measured, a script, a config file: refused before anything runs.
    for victim in [s.db(), script.clone(), config.clone()] {
        let before = std::fs::read(&victim).unwrap();
        let out = s
            .line(&["run", "oltp_point_select", "--table-size", "100"])
            .args(["--time", "1", "--report-interval", "0"])
            .output(&victim)
            .command()
            .output()
            .unwrap();
        let err = refused(&out, 2);
        assert!(
            err.contains("is not a dbsweep results file"),
            "{}: {err}",
            victim.display()
        );
        assert_eq!(std::fs::read(&victim).unwrap(), before);
    }
    assert_eq!(std::fs::read(s.db()).unwrap(), db_before);
    // A link at the output name is not written through, nor replaced.
    let link = s.path("r.json");
    std::os::unix::fs::symlink(&config, &link).unwrap();
    let out = dbsweep()
        .args(["run", "oltp_point_select", "--target", "mock://"])
        .args(["--events", "10", "--time", "0", "--report-interval", "0"])
        .arg("--output")
        .arg(&link)
        .output()
        .unwrap();
    assert!(refused(&out, 2).contains("symbolic link"));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "threads=2\n");
    // A results file is replaced as before, and an empty file is taken.
    let res = s.path("res.json");
    mock_results(&res);
    mock_results(&res);
    let empty = s.path("empty.json");
    std::fs::write(&empty, "").unwrap();
    mock_results(&empty);
    // merge writes results files too.
    let out = dbsweep()
        .args(["merge"])
        .arg(&res)
        .arg("--output")
        .arg(&config)
        .output()
        .unwrap();
    assert!(refused(&out, 2).contains("is not a dbsweep results file"));
}

#[test]
fn a_report_embeds_no_file_that_a_link_beside_the_results_points_to() {
    let s = Scratch::new();
    let secret = s.path("secret.txt");
    std::fs::write(&secret, "<svg>TOPSECRET-7d1f</svg>").unwrap();
    let a = s.path("a.json");
    let b = s.path("b.json");
    for (path, threads) in [(&a, 1), (&b, 2)] {
        let mut r = mock_results(path);
        r["threads"] = threads.into();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        r["profile"] = serde_json::json!({
            "subject": "the server's processes", "hz": 99, "samples": 10, "processes": 1,
            "unknown_share": 0.0, "functions": [],
            "stacks_file": format!("{stem}.stacks.gz"),
            "flame_file": format!("{stem}.flame.svg"),
        });
        write_json(path, &r);
        std::os::unix::fs::symlink(&secret, s.path(&format!("{stem}.flame.svg"))).unwrap();
    }
    // b's stacks: a gzip bomb (zeros that inflate to 200 MiB).
    std::fs::write(s.path("a.stacks.gz"), gzip(b"p;main 5\n")).unwrap();
    let bomb = {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![b'0'; 1 << 20];
        for _ in 0..200 {
            gz.write_all(&zeros).unwrap();
        }
        gz.finish().unwrap()
    };
    std::fs::write(s.path("b.stacks.gz"), bomb).unwrap();
    let html = s.path("r.html");
    dbsweep()
        .args(["report", "--full", "--format", "html"])
        .arg(&a)
        .arg(&b)
        .arg("--output")
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).unwrap();
    let leaked = base64::engine::general_purpose::STANDARD.encode("<svg>TOPSECRET-7d1f</svg>");
    assert!(!page.contains(&leaked) && !page.contains("TOPSECRET"));
    assert!(page.contains("symbolic link"), "the page says why");
    assert!(
        page.contains("inflates past"),
        "the bomb is named, not inflated"
    );
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

#[test]
fn a_directory_kept_with_keep_survives_the_next_managed_start() {
    let s = Scratch::enterable();
    let tmp = s.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    let managed = |keep: bool| {
        let mut cmd = dbsweep();
        cmd.env("TMPDIR", &tmp)
            .args(["prepare", "oltp_point_select", "--server", "postgres"])
            .args(["--table-size", "100"]);
        if keep {
            cmd.arg("--keep");
        }
        cmd.output().unwrap()
    };
    let first = managed(true);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let kept: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("dbsweep-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let second = managed(false);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        kept[0].join("data").is_dir(),
        "the kept directory is gone: {stderr}"
    );
    assert!(!stderr.contains("Removed"), "{stderr}");
    std::fs::remove_dir_all(&kept[0]).unwrap();
}

/// A user's tables named as the Insert Benchmark's, LinkBench's and pgbench's, with other
/// columns: `cleanup` of each workload refuses, names them, and leaves their rows.
fn cleanup_leaves_tables_of_other_shapes(url: &str) {
    let conn = || {
        dbsweep::db::open(url, Default::default())
            .unwrap()
            .connect()
            .unwrap()
    };
    let mine = [
        ("linkbench", "linktable", "id1 BIGINT, note VARCHAR(20)"),
        (
            "ibench_insert",
            "purchases_index",
            "transactionid BIGINT, memo VARCHAR(20)",
        ),
        (
            "pgbench_tpcb_like",
            "pgbench_accounts",
            "aid INT, notes VARCHAR(50)",
        ),
    ];
    let mut c = conn();
    for (_, table, cols) in mine {
        c.batch(&format!("CREATE TABLE {table} ({cols})")).unwrap();
        c.batch(&format!("INSERT INTO {table} VALUES (7, 'mine')"))
            .unwrap();
    }
    for (workload, table, _) in mine {
        let out = dbsweep()
            .args(["cleanup", workload, "--target", url])
            .output()
            .unwrap();
        let err = refused(&out, 2);
        assert!(
            err.contains("not dropping") && err.contains(table),
            "{workload}: {err}"
        );
        assert_eq!(
            conn()
                .query_i64(&format!("SELECT count(*) FROM {table}"))
                .unwrap(),
            Some(1),
            "{workload} dropped {table}"
        );
    }
}

#[test]
fn cleanup_of_every_workload_leaves_a_users_tables_on_sqlite() {
    let s = Scratch::new();
    // dbsweep opens only a database that is there.
    s.sqlite().execute_batch("VACUUM").unwrap();
    cleanup_leaves_tables_of_other_shapes(&s.target());
}

per_server!(cleanup_of_every_workload_leaves_a_users_tables, |kind| {
    let server = crate::util::start(kind);
    cleanup_leaves_tables_of_other_shapes(&server.url);
});

#[test]
fn a_sweep_whose_load_failed_measures_nothing_on_the_tables_that_were_there() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "10000"])
        .assert()
        .success();
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"t\"\nclients = [1]\ntable_size = 1000\nread_time = 0.5\n\
             [[targets]]\nurl = \"{}\"\n\
             [[steps]]\nload = true\n\
             [[steps]]\npause = 0\n\
             [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
            s.target()
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    let out = dbsweep()
        .args(["sweep"])
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let recs = crate::sweep::records(&dir);
    let by_kind = |k: &str| recs.iter().find(|(_, r)| r["kind"] == k).unwrap().1.clone();
    assert_eq!(by_kind("load")["status"], "failed", "{recs:?}");
    let point = by_kind("run");
    assert_eq!(point["status"], "failed");
    assert!(
        point["error"]
            .as_str()
            .unwrap()
            .contains("not run: the load step"),
        "{point}"
    );
    assert!(point["results"].is_null(), "nothing was measured: {point}");
    // The table the user had is untouched: still 10,000 rows.
    let n: i64 = s
        .sqlite()
        .query_row("SELECT count(*) FROM sbtest1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 10_000);
}
