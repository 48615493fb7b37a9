//! Managed servers themselves: their settings, data directories, passwords, sysbench and TPC-C
//! on them, and sweeps of them. A missing server binary fails these tests; `scripts/test`
//! installs them.

use std::process::{Command, Stdio};

use dbsweep::server::{ManagedServer, ServerKind};
use predicates::prelude::*;

use crate::servers::{on, run_json};
use crate::util::{
    Scratch, assert_valid_results, dbsweep, lax_commits, read_json, start, start_with,
    sysbench_connection, u,
};

per_server!(
    managed_server_with_settings_prepares_and_cleans_up,
    |kind| {
        let s = Scratch::new();
        let setting = if kind == ServerKind::Postgres {
            "shared_buffers=64MB"
        } else {
            "innodb_buffer_pool_size=64M"
        };
        let name = if kind == ServerKind::Postgres {
            "postgres"
        } else {
            "mariadb"
        };
        let out = s.path("m.json");
        let output = dbsweep()
            .args([
                "run",
                "oltp_read_only",
                "--server",
                name,
                "--server-set",
                setting,
                "--table-size",
                "500",
                "--events",
                "2000",
                "--time",
                "0",
                "--report-interval",
                "0",
            ])
            .arg("--output")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let r = read_json(&out);
        assert_eq!(
            u(&r, "/prepare/rows"),
            500,
            "a fresh managed server is prepared first"
        );
        assert_eq!(u(&r, "/events"), 2000);
        let hw = &r["hw"]["cpu_us_per_op"];
        assert!(
            hw["server"].as_f64().unwrap() > 0.0,
            "the server's processes are sampled: {hw}"
        );
        assert!(r["hw"]["server_rss_kb"].as_u64().unwrap() > 0);
        let datadir = r["server"]["datadir"].as_str().unwrap().to_string();
        assert!(
            !std::path::Path::new(&datadir).exists(),
            "the data directory is removed"
        );
        let settings = &r["target"]["settings"];
        if kind == ServerKind::Postgres {
            assert_eq!(
                settings["shared_buffers"], "8192",
                "64MB in 8kB pages: {settings}"
            );
        } else {
            assert_eq!(settings["innodb_buffer_pool_size"], "67108864");
        }
    }
);

#[test]
fn passwords_never_appear_in_output() {
    dbsweep()
        .args([
            "run",
            "oltp_read_only",
            "--target",
            "postgres://bob:s3cret@127.0.0.1:1/db",
            "--time",
            "1",
        ])
        .assert()
        .failure()
        .stderr(predicates::str::contains("s3cret").not());
}

#[test]
fn a_kept_datadir_is_reused_with_its_tables() {
    let s = Scratch::new();
    let dir = s.path("pgdata");
    let dirs = dir.to_str().unwrap();
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--server",
            "postgres",
            "--server-datadir",
            dirs,
            "--keep",
            "--table-size",
            "300",
        ])
        .assert()
        .success();
    let out = s.path("k.json");
    dbsweep()
        .args([
            "run",
            "oltp_point_select",
            "--server",
            "postgres",
            "--server-datadir",
            dirs,
            "--keep",
            "--table-size",
            "300",
            "--events",
            "10",
            "--time",
            "0",
            "--report-interval",
            "0",
        ])
        .arg("--output")
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    assert_eq!(
        r["prepare"],
        serde_json::Value::Null,
        "the kept tables are reused, not loaded again"
    );
    assert_eq!(r["server"]["kept"], true);
    assert!(dir.join("data").exists());
}

/// sysbench's oltp_read_write on `server`, on 2 tables of 1,000 rows.
pub(crate) fn sysbench(
    kind: ServerKind,
    server: &ManagedServer,
    command: &str,
    extra: &[&str],
) -> String {
    let out = Command::new("sysbench")
        .arg("oltp_read_write")
        .args(sysbench_connection(kind, server))
        .args(["--tables=2", "--table-size=1000"])
        .args(extra)
        .arg(command)
        .output()
        .expect("sysbench is installed (scripts/test installs it)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "sysbench {command} failed:\n{text}");
    text
}

per_server!(tables_are_interchangeable_with_sysbench, |kind| {
    let server = start(kind);
    let s = Scratch::new();
    // sysbench runs on tables dbsweep prepared...
    on(
        &server,
        &[
            "prepare",
            "oltp_read_write",
            "--tables",
            "2",
            "--table-size",
            "1000",
        ],
    )
    .assert()
    .success();
    let text = sysbench(kind, &server, "run", &["--events=200", "--time=0"]);
    assert!(
        text.contains("transactions:                        200"),
        "{text}"
    );
    assert!(
        text.contains("ignored errors:                      0"),
        "{text}"
    );
    on(&server, &["cleanup", "oltp_read_write", "--tables", "2"])
        .assert()
        .success();
    // ...and dbsweep on tables sysbench prepared.
    sysbench(kind, &server, "prepare", &[]);
    let r = run_json(
        &server,
        &s,
        &[
            "run",
            "oltp_read_write",
            "--tables",
            "2",
            "--table-size",
            "1000",
            "--events",
            "200",
            "--time",
            "0",
        ],
    );
    assert_eq!(
        (
            u(&r, "/queries/read"),
            u(&r, "/queries/write"),
            u(&r, "/queries/other")
        ),
        (2800, 800, 400)
    );
    let r = run_json(
        &server,
        &s,
        &[
            "run",
            "oltp_insert",
            "--tables",
            "2",
            "--table-size",
            "1000",
            "--events",
            "50",
            "--time",
            "0",
        ],
    );
    assert_eq!(
        u(&r, "/queries/write"),
        50,
        "auto-increment continues after sysbench's rows"
    );
    sysbench(kind, &server, "cleanup", &[]);
});

#[test]
#[ignore = "needs root, which hands the server to another user (scripts/test runs it as root)"]
fn a_datadir_the_server_user_cannot_reach_is_refused() {
    crate::util::assert_root();
    let s = Scratch::new();
    let private = s.path("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(
        &private,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let dir = private.join("pg");
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--server",
            "postgres",
            "--server-datadir",
            dir.to_str().unwrap(),
        ])
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("cannot enter").and(predicates::str::contains("private")),
        );
}

per_server!(tpcc_prepare_check_cleanup_with_two_warehouses, |kind| {
    let server = start_with(kind, lax_commits(kind));
    let t = server.url.clone();
    let tpcc = crate::tpcc::tpcc;
    let out = tpcc(&t, "prepare", &["--warehouses", "2", "--threads", "2"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        stdout.lines().filter(|l| l.ends_with(" pass")).count(),
        12,
        "{stdout}"
    );
    // Count through dbsweep's own connection to the server.
    let target = dbsweep::db::open(
        &t,
        dbsweep::db::OpenOptions {
            create: false,
            text_statements: true,
            pipeline: false,
            timeouts: Default::default(),
        },
    )
    .unwrap();
    let mut conn = target.connect().unwrap();
    crate::tpcc::assert_cardinalities(2, &mut |sql| conn.query_i64(sql).unwrap().unwrap());
    // Money survives the trip: the sums the checks compare are exact decimals.
    let ytd = conn
        .query_text("SELECT SUM(w_ytd) FROM warehouse")
        .unwrap()
        .unwrap();
    assert_eq!(ytd.parse::<f64>().unwrap(), 600_000.0);
    drop(conn);
    tpcc(&t, "prepare", &["--warehouses", "2"]).assert().code(2);
    tpcc(&t, "check", &["--warehouses", "2"]).assert().success();
    // A 6-second run of 4 clients (some 2,000 New-Orders or more: the 1% that roll back are there), then every condition but 11 holds.
    let s = Scratch::new();
    let r = crate::tpcc::run_and_check(&t, 2, &s);
    let mut conn = target.connect().unwrap();
    crate::tpcc::assert_orders_grew(2, &r, &mut |sql| conn.query_i64(sql).unwrap().unwrap());
    drop(conn);
    tpcc(&t, "cleanup", &[]).assert().success();
    let mut conn = target.connect().unwrap();
    assert!(!conn.table_exists("order_line").unwrap());
    // One warehouse: all four clients share it.
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    let r = crate::tpcc::run_and_check(&t, 1, &s);
    crate::tpcc::assert_orders_grew(1, &r, &mut |sql| conn.query_i64(sql).unwrap().unwrap());
    crate::tpcc::run_fifty_fifty(&t, 1, &s);
});

per_server!(killed_tpcc_connections_leave_the_data_consistent, |kind| {
    let server = start(kind);
    let t = server.url.clone();
    let tpcc = crate::tpcc::tpcc;
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    let s = Scratch::new();
    let out = s.path("r.json");
    let (mut child, lines) = crate::util::spawn_measuring(
        crate::util::dbsweep_std()
            .args([
                "tpcc",
                "run",
                "--target",
                &t,
                "--threads",
                "4",
                "--time",
                "6",
            ])
            .arg("--output")
            .arg(&out)
            .stdout(Stdio::piped()),
        "[ 1s ]",
    );
    // Cut every client's connection, mid-transaction for most of them.
    let target = dbsweep::db::open(
        &t,
        dbsweep::db::OpenOptions {
            create: false,
            text_statements: true,
            pipeline: false,
            timeouts: Default::default(),
        },
    )
    .unwrap();
    let mut conn = target.connect().unwrap();
    let killed = if kind == ServerKind::Postgres {
        conn.query_rows(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
            1,
        )
        .unwrap()
        .len()
    } else {
        let ids = conn
            .query_rows(
                "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND db = DATABASE()",
                1,
            )
            .unwrap();
        for id in &ids {
            let _ = conn.batch(&format!("KILL {}", id[0].as_deref().unwrap()));
        }
        ids.len()
    };
    // The four clients', and the counters probe's.
    assert!(killed >= 4, "{killed} connections");
    drop(conn);
    let stderr: Vec<String> = lines.collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr:?}");
    let r = read_json(&out);
    assert!(u(&r, "/reconnects") >= 4, "{}", r["reconnects"]);
    assert!(u(&r, "/events") > 0);
    let out = tpcc(&t, "check", &["--after-run"]).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(
        stdout.lines().filter(|l| l.ends_with(" pass")).count(),
        11,
        "{stdout}"
    );
});

/// Issue 18: MariaDB 10.11 accepts `innodb_buffer_pool_instances` and ignores it. The run says
/// so, records what the server has, and the report puts it above every table.
#[test]
fn settings_a_server_ignores_are_read_back_warned_and_reported() {
    let s = Scratch::new();
    let out = s.path("m.json");
    let output = run_with_settings(
        "mariadb",
        &[
            "innodb_buffer_pool_instances=8",
            "innodb-buffer-pool-size=64M",
        ],
        &out,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: setting innodb_buffer_pool_instances = 8 was requested"),
        "{stderr}"
    );
    let r = read_json(&out);
    assert_valid_results(&r);
    let eff = &r["server"]["effective"];
    assert_eq!(
        eff["innodb_buffer_pool_instances"]["applied"], false,
        "{eff}"
    );
    assert!(eff["innodb_buffer_pool_instances"]["effective"].is_null());
    assert_eq!(eff["innodb-buffer-pool-size"]["applied"], true, "{eff}");
    assert_eq!(eff["innodb-buffer-pool-size"]["effective"], "67108864");
    let warnings = r["server"]["setting_warnings"].to_string();
    assert!(
        warnings.contains("server log:") && warnings.contains("innodb-buffer-pool-instances"),
        "the server log's own warning is kept: {warnings}"
    );
    let report = dbsweep()
        .args(["report", "--full"])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success());
    let first = text.lines().next().unwrap_or_default();
    assert_eq!(
        first, "Warning: settings the server did not apply",
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.contains("innodb_buffer_pool_instances"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("(no such variable)"), "{row}");
    assert!(
        !text.contains("innodb-buffer-pool-size"),
        "an applied setting is not listed\n{text}"
    );
}

/// Issue 18: PostgreSQL gives `shared_buffers` in 8kB pages: 32768 of them are the 256MB asked
/// for; a value the server rounds or refuses to take as given is not.
#[test]
fn postgres_settings_are_compared_in_their_units() {
    let s = Scratch::new();
    let out = s.path("p.json");
    let output = run_with_settings(
        "postgres",
        &[
            "shared_buffers=256MB",
            "checkpoint_timeout=5min",
            "synchronous_commit=false",
            // The client library sets its connection's client_encoding: the server's is
            // still the one asked for.
            "client_encoding=LATIN1",
        ],
        &out,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let r = read_json(&out);
    let eff = &r["server"]["effective"];
    assert_eq!(eff["shared_buffers"]["effective"], "32768 8kB", "{eff}");
    assert_eq!(eff["shared_buffers"]["applied"], true, "{eff}");
    assert_eq!(eff["checkpoint_timeout"]["effective"], "300 s", "{eff}");
    assert_eq!(eff["checkpoint_timeout"]["applied"], true, "{eff}");
    assert_eq!(eff["synchronous_commit"]["applied"], true, "{eff}");
    assert_eq!(eff["client_encoding"]["applied"], true, "{eff}");
    assert_eq!(r["server"]["setting_warnings"], serde_json::json!([]));
}

/// Issue 18: a sweep on a running server by URL, with the step options `server_pid` and
/// `data_dir` naming its process and data, samples the server's CPU as a managed one's, and
/// `environment.json` records the server's version.
#[test]
fn a_url_target_with_server_pid_records_the_servers_figures_and_version() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    let plan = s.path("ext.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"ext\"\nclients = [1]\ntable_size = 500\nread_time = 1\n\
             options = {{ server_pid = {}, data_dir = \"{}\" }}\n\n\
             [[targets]]\nname = \"pg\"\nurl = \"{}\"\n\n\
             [[steps]]\nload = true\n\n\
             [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
            server.pid().unwrap(),
            server.dir.join("data").display(),
            server.url
        ),
    )
    .unwrap();
    let dir = s.path("out");
    dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--force", "--output"])
        .arg(&dir)
        .assert()
        .success();
    let step = read_json(&dir.join("steps/pg.default.c1/02-point.json"));
    let hw = &step["results"]["hw"];
    assert!(
        hw["cpu_us_per_op"]["server"].as_f64().unwrap_or(0.0) > 0.0,
        "the server's processes are sampled: {hw}"
    );
    assert!(
        hw["device"].is_string(),
        "the data's device is followed: {hw}"
    );
    let env = read_json(&dir.join("environment.json"));
    let version = env["servers"]["pg"].as_str().unwrap_or_default();
    assert!(
        version.contains("PostgreSQL 15") || version.contains("15."),
        "{env}"
    );
}

/// 100 point selects on a managed `server` started with `settings`, results to `out`.
fn run_with_settings(
    server: &str,
    settings: &[&str],
    out: &std::path::Path,
) -> std::process::Output {
    let mut c = dbsweep();
    c.args(["run", "oltp_point_select", "--server", server]);
    for set in settings {
        c.args(["--server-set", set]);
    }
    c.args([
        "--table-size",
        "100",
        "--events",
        "100",
        "--time",
        "0",
        "--report-interval",
        "0",
    ])
    .arg("--output")
    .arg(out)
    .output()
    .unwrap()
}

/// Backends that come and go during the step (a new connection every event) and go at its end:
/// the server's CPU counts each once, so it is a real share of the machine's.
#[test]
fn server_cpu_counts_backends_that_come_and_go() {
    let s = Scratch::new();
    let out = s.path("churn.json");
    dbsweep()
        .args([
            "run",
            "oltp_point_select",
            "--server",
            "postgres",
            "--prepare",
        ])
        .args(["--table-size", "1000", "--threads", "2", "--time", "3"])
        .args(["--reconnect", "1", "--report-interval", "0", "--output"])
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    let cpu = &r["hw"]["cpu_us_per_op"];
    let (server, client, machine) = (
        cpu["server"].as_f64().unwrap(),
        cpu["client"].as_f64().unwrap(),
        cpu["machine"].as_f64().unwrap(),
    );
    // A new backend per event costs the server more than the query: most of what the
    // machine spent beyond the client is the server's.
    assert!(server <= machine * 1.05, "{cpu}");
    assert!(server >= (machine - client) * 0.3, "{cpu}");
}

/// A fresh MariaDB and MySQL data directory starts as a copy of the build's system tables,
/// installed by the first fresh server and kept in the cache (complete, or not at all); the
/// second server's directory is that copy (a file planted in it shows through), less MySQL's
/// server UUID, and it serves the run.
#[test]
fn system_tables_are_installed_once_per_build_and_copied() {
    for (kind, name) in [
        (ServerKind::Mariadb, "mariadb"),
        (ServerKind::Mysql, "mysql"),
    ] {
        let s = Scratch::enterable();
        let cache = s.path("cache");
        let start = |datadir: &str| {
            dbsweep()
                .env("XDG_CACHE_HOME", &cache)
                .args(["prepare", "oltp_point_select", "--server", name])
                .args(["--server-datadir", datadir, "--keep", "--table-size", "100"])
                .assert()
                .success();
        };
        let first = s.path("first");
        start(first.to_str().unwrap());
        let slots: Vec<_> = std::fs::read_dir(cache.join("dbsweep/system-tables"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(slots.len(), 1, "{kind:?}: {slots:?}");
        let slot = &slots[0];
        assert!(slot.join("complete").is_file(), "{kind:?}");
        assert!(slot.join("data/mysql").is_dir(), "{kind:?}");
        // The copy was taken before the server's first start: no table of the run in it.
        assert!(!slot.join("data/sbtest").exists(), "{kind:?}");
        std::fs::write(slot.join("data/planted-by-the-test"), b"").unwrap();
        let second = s.path("second");
        start(second.to_str().unwrap());
        let data = second.join("data");
        assert!(
            data.join("planted-by-the-test").exists(),
            "{kind:?}: not the copy"
        );
        assert!(data.join("sbtest").is_dir(), "{kind:?}: the run's tables");
        if kind == ServerKind::Mysql {
            let uuid = |d: &std::path::Path| std::fs::read_to_string(d.join("auto.cnf")).unwrap();
            assert_ne!(
                uuid(&first.join("data")),
                uuid(&data),
                "one server UUID for two servers"
            );
        }
    }
}
