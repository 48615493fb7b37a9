//! `dbsweep sweep`: plans, step records, resume, failures, Ctrl-C, on embedded SQLite (the
//! managed servers' sweeps are in `servers.rs`).

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::util::Line;
use crate::util::{Scratch, assert_valid_results, dbsweep, f, read_json, u};

/// Every step record of a sweep directory, by `cell/file`, in order.
pub fn records(dir: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for cell in std::fs::read_dir(dir.join("steps")).expect("steps directory") {
        let cell = cell.unwrap().path();
        for step in std::fs::read_dir(&cell).unwrap() {
            let step = step.unwrap().path();
            // Profiles' stacks and flame graphs sit beside their records.
            if step.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let name = format!(
                "{}/{}",
                cell.file_name().unwrap().to_string_lossy(),
                step.file_name().unwrap().to_string_lossy()
            );
            out.push((name, read_json(&step)));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// What CI checks of every sweep: each workload step has throughput, latency and hardware
/// figures; each load has rows/s; nothing failed. `server` says whether a server's share of
/// CPU must exist (not for embedded SQLite).
pub fn assert_complete(dir: &Path, expected_steps: usize, server: bool) {
    assert!(dir.join("plan.toml").is_file());
    let env = read_json(&dir.join("environment.json"));
    assert!(u(&env, "/cpus") >= 1 && u(&env, "/memory_kb") > 0, "{env}");
    assert!(env["kernel"].as_str().is_some_and(|k| !k.is_empty()));
    let recs = records(dir);
    assert_eq!(
        recs.len(),
        expected_steps,
        "{:?}",
        recs.iter().map(|r| &r.0).collect::<Vec<_>>()
    );
    for (name, r) in &recs {
        assert_eq!(r["status"], "ok", "{name}: {}", r["error"]);
        match r["kind"].as_str().unwrap() {
            "run" => {
                let res = &r["results"];
                assert_valid_results(res);
                assert!(f(res, "/tps") > 0.0 && f(res, "/qps") > 0.0, "{name}");
                assert!(f(res, "/latency_ms/p99") > 0.0, "{name}");
                assert!(
                    f(res, "/latency_ms/max") >= f(res, "/latency_ms/p50"),
                    "{name}"
                );
                for k in ["cpu_per_o", "cs_per_o", "r_per_o", "rkb_per_o", "wkb_per_o"] {
                    assert!(
                        res["hw"][k].is_number(),
                        "{name}: hw.{k} is {}",
                        res["hw"][k]
                    );
                }
                // The client may use no measurable CPU in a short step of few events (a scan).
                assert!(f(res, "/hw/cpu_us_per_op/client") >= 0.0, "{name}");
                assert!(f(res, "/hw/cpu_us_per_op/machine") > 0.0, "{name}");
                assert_eq!(
                    res["hw"]["cpu_us_per_op"]["server"].is_number(),
                    server,
                    "{name}: {}",
                    res["hw"]
                );
                // The server's context switches, CPU split and IO bytes exist with a server.
                let hw = &res["hw"];
                assert_eq!(hw["server_cs_per_o"].is_number(), server, "{name}: {hw}");
                assert_eq!(hw["cpu_pct"]["server_user"].is_number(), server, "{name}");
                assert_eq!(
                    hw["proc_io_kb"]["server_write"].is_number(),
                    server,
                    "{name}"
                );
                assert!(hw["proc_io_kb"]["client_write"].is_number(), "{name}");
                assert!(f(hw, "/cpu_pct/machine_user") > 0.0, "{name}");
                let stats = &res["server_stats"];
                assert!(stats["hit_rate"].is_number(), "{name}: {stats}");
                let hit = stats["hit_rate"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&hit), "{name}: {hit}");
            }
            "load" => {
                assert!(f(r, "/load/rows_per_s") > 0.0, "{name}");
                assert!(
                    r["load_hw"]["cpu_us_per_op"]["client"].is_number(),
                    "{name}"
                );
            }
            "pause" => {
                assert!(
                    !r["pause"]["actions"].as_array().unwrap().is_empty(),
                    "{name}"
                );
            }
            other => panic!("{name}: kind {other}"),
        }
    }
}

#[test]
fn quick_plan_on_sqlite_records_every_step() {
    let s = Scratch::new();
    let dir = s.path("sweep");
    let out = dbsweep()
        .current_dir(s.dir.path())
        .args(["sweep", "--read-time", "1", "--write-time", "1"])
        .args(["--table-size", "5000", "--output"])
        .arg(&dir)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("12 step(s) done, 0 failed"), "{stdout}");
    // quick: load and five workloads, at 1 and 2 clients.
    assert_complete(&dir, 12, false);
    let recs = records(&dir);
    let cells: Vec<&str> = recs.iter().map(|r| r.1["cell"].as_str().unwrap()).collect();
    assert!(cells.contains(&"sqlite.default.c1") && cells.contains(&"sqlite.default.c2"));
    for (_, r) in recs.iter().filter(|r| r.1["kind"] == "run") {
        assert_eq!(u(&r["results"], "/threads"), u(r, "/clients"));
        let time = f(&r["results"], "/time_s");
        assert!((0.9..3.0).contains(&time), "{time}");
    }
    // A finished cell's SQLite file is removed; the resolved plan is saved.
    assert!(!dir.join("data").exists());
    let plan = std::fs::read_to_string(dir.join("plan.toml")).unwrap();
    assert!(
        plan.contains("read_time = 1") && plan.contains("table_size = 5000"),
        "{plan}"
    );
}

pub(crate) fn write_plan(s: &Scratch, text: &str) -> std::path::PathBuf {
    let p = s.path("plan.toml");
    std::fs::write(&p, text).unwrap();
    p
}

const SMALL_PLAN: &str = r#"
name = "t"
clients = [1]
table_size = 2000
read_time = 0.5
write_time = 0.5

[[steps]]
load = true

[[steps]]
name = "point"
workload = "oltp_point_select"
class = "read"

[[steps]]
name = "update"
workload = "oltp_update_index"
class = "write"

[[steps]]
name = "insert"
workload = "oltp_insert"
class = "write"
"#;

#[test]
fn resume_runs_only_missing_and_interrupted_steps() {
    let s = Scratch::new();
    let plan = write_plan(&s, SMALL_PLAN);
    let dir = s.path("sweep");
    Line::sweep(&[], &plan, &dir).assert().success();
    let cell = dir.join("steps/sqlite.default.c1");
    let kept: Vec<Vec<u8>> = ["01-load.json", "02-point.json"]
        .iter()
        .map(|n| std::fs::read(cell.join(n)).unwrap())
        .collect();
    // Step 3 lost, step 4 interrupted: both run again, the others stay as they are.
    std::fs::remove_file(cell.join("03-update.json")).unwrap();
    let mut insert = read_json(&cell.join("04-insert.json"));
    insert["status"] = "interrupted".into();
    std::fs::write(cell.join("04-insert.json"), insert.to_string()).unwrap();

    let out = dbsweep()
        .args(["sweep", "--resume"])
        .arg(&dir)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("2 step(s) done, 0 failed, 2 kept from before"),
        "{stdout}"
    );
    for (name, bytes) in ["01-load.json", "02-point.json"].iter().zip(kept) {
        assert_eq!(
            std::fs::read(cell.join(name)).unwrap(),
            bytes,
            "{name} was rewritten"
        );
    }
    let update = read_json(&cell.join("03-update.json"));
    assert_eq!(update["status"], "ok");
    // The cell's file was gone with the finished cell: the tables were loaded again.
    let notes = update["notes"].to_string();
    assert!(notes.contains("loaded again"), "{notes}");
    assert_eq!(read_json(&cell.join("04-insert.json"))["status"], "ok");

    // Resuming a finished sweep runs nothing; changing its cells is refused.
    let out = dbsweep()
        .args(["sweep", "--resume"])
        .arg(&dir)
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("0 step(s) done"));
    dbsweep()
        .args(["sweep", "--clients", "4", "--resume"])
        .arg(&dir)
        .assert()
        .code(2);
}

#[test]
fn a_failed_step_is_recorded_and_the_sweep_goes_on_unless_fail_fast() {
    let s = Scratch::new();
    // The first step reads tables that are not loaded yet.
    let text = SMALL_PLAN.replacen(
        "[[steps]]\nload = true\n",
        "[[steps]]\nname = \"early\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n\n[[steps]]\nload = true\n",
        1,
    );
    let plan = write_plan(&s, &text);
    let dir = s.path("sweep");
    Line::sweep(&[], &plan, &dir).assert().code(1);
    let recs = records(&dir);
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[0].1["status"], "failed");
    assert!(
        recs[0].1["error"].as_str().unwrap().contains("sbtest1"),
        "{}",
        recs[0].1["error"]
    );
    assert!(recs[1..].iter().all(|r| r.1["status"] == "ok"));

    let dir = s.path("sweep2");
    Line::sweep(&["--fail-fast"], &plan, &dir).assert().code(1);
    assert_eq!(records(&dir).len(), 1);
}

#[test]
fn invalid_plans_are_refused_with_file_and_line_before_anything_runs() {
    let s = Scratch::new();
    let bad = SMALL_PLAN.replace(
        "class = \"write\"\n\n[[steps]]\nname = \"insert\"",
        "class = \"write\"\noptions = { range_size = -1 }\n\n[[steps]]\nname = \"insert\"",
    );
    let plan = write_plan(&s, &bad);
    let dir = s.path("sweep");
    let out = Line::sweep(&[], &plan, &dir).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let line = bad
        .lines()
        .position(|l| l.contains("name = \"update\""))
        .unwrap(); // the [[steps]] header is the line before: 1-based, that is `line`
    assert!(stderr.contains(&format!("plan.toml:{line}:")), "{stderr}");
    assert!(
        stderr.contains("option range_size: -1 is not a whole number"),
        "{stderr}"
    );
    assert!(!dir.exists(), "a refused plan created its directory");

    // Pipelining is PostgreSQL's: refused for a plan that runs anywhere else, and accepted on a
    // managed PostgreSQL.
    let piped = "class = \"read\"\noptions = { pipeline = true }\n";
    let bad = SMALL_PLAN.replacen("class = \"read\"\n", piped, 1);
    assert_ne!(bad, SMALL_PLAN);
    dbsweep()
        .args(["sweep"])
        .arg(write_plan(&s, &bad))
        .arg("--output")
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("plan.toml:"))
        .stderr(predicates::str::contains(
            "pipeline: only PostgreSQL targets pipeline statements, and target sqlite",
        ));
    assert!(!dir.exists(), "a refused plan created its directory");
    let on_postgres = bad.replacen(
        "[[steps]]",
        "[[targets]]\nserver = \"postgres\"\n\n[[steps]]",
        1,
    );
    dbsweep()
        .args(["sweep", "--dry-run"])
        .arg(write_plan(&s, &on_postgres))
        .assert()
        .success()
        .stdout(predicates::str::contains("--pipeline"));

    dbsweep().args(["sweep", "no-such-plan"]).assert().code(2);
    // A directory holding a sweep is not overwritten.
    let plan = write_plan(&s, SMALL_PLAN);
    Line::sweep(&["--dry-run"], &plan, &dir).assert().success();
    assert!(!dir.exists(), "--dry-run created the directory");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("plan.toml"), "x").unwrap();
    let out = Line::sweep(&[], &plan, &dir).assert().code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("--resume"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.join("plan.toml")).unwrap(), "x");
}

#[test]
fn dry_run_prints_the_schedule_and_its_duration() {
    let out = dbsweep()
        .args(["sweep", "small", "--dry-run", "--clients", "1,4"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("sqlite.default.c1") && stdout.contains("sqlite.default.c4"));
    assert!(stdout.contains("points-covered-si.warmup"), "{stdout}");
    // 2 cells x (25 R steps of 600 s + 9 W steps of 900 s + warm-ups, pauses, load): 2 x 6.5 h.
    let total = stdout.lines().last().unwrap();
    assert!(total.starts_with("estimated duration: "), "{total}");
    let hours: u64 = total["estimated duration: ".len()..]
        .split('h')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((12..14).contains(&hours), "{total}");
    // The plan loads the sbtest tables: the header says how many and how big.
    let header = stdout.lines().next().unwrap();
    assert!(header.contains("table(s) of"), "{header}");
    // A TPC-C plan loads none: no word of them.
    let s = Scratch::new();
    let plan = write_plan(
        &s,
        "name = \"tp\"\nclients = [2]\n\n[[steps]]\nname = \"tpcc\"\nworkload = \"tpcc\"\nclass = \"write\"\noptions = { warehouses = 2 }\n",
    );
    let out = dbsweep()
        .args(["sweep", "--dry-run"])
        .arg(&plan)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let header = stdout.lines().next().unwrap();
    assert!(
        header.starts_with("plan tp: ") && !header.contains("table"),
        "{stdout}"
    );
    assert!(stdout.contains("tpcc (W) --warehouses=2"), "{stdout}");
    // A managed server's clients may connect over its Unix socket; a URL names its own.
    let socket = "[[targets]]\nserver = \"postgres\"\nsocket = true\n\n[[steps]]";
    let plan = write_plan(
        &s,
        &std::fs::read_to_string(&plan)
            .unwrap()
            .replacen("[[steps]]", socket, 1),
    );
    dbsweep()
        .args(["sweep", "--dry-run"])
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "a fresh managed Postgres server over its Unix socket, 2 client(s)",
        ));
    let managed = std::fs::read_to_string(&plan).unwrap();
    let bad = managed.replace(
        "server = \"postgres\"",
        "url = \"postgres://x@127.0.0.1/db\"",
    );
    dbsweep()
        .args(["sweep", "--dry-run"])
        .arg(write_plan(&s, &bad))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "socket = true is for a managed server",
        ));
    // Its data directories may go on a disk of the plan's choosing: an existing directory, by
    // an absolute path, and for managed servers only.
    let open = Scratch::enterable();
    let disk = open.path("disk");
    std::fs::create_dir(&disk).unwrap();
    let with_dir = |dir: &str| {
        managed.replace(
            "socket = true",
            &format!("socket = true\ndatadir_in = {dir:?}"),
        )
    };
    let good = with_dir(&disk.display().to_string());
    dbsweep()
        .args(["sweep", "--dry-run"])
        .arg(write_plan(&s, &good))
        .assert()
        .success()
        .stdout(predicates::str::contains(format!(
            "a fresh managed Postgres server in {} over its Unix socket",
            disk.display()
        )));
    // The server's unprivileged user (dbsweep runs it so as root) must be able to enter it.
    let private = s.path("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::create_dir(private.join("disk")).unwrap();
    let only_owner = std::os::unix::fs::PermissionsExt::from_mode(0o700);
    std::fs::set_permissions(&private, only_owner).unwrap();
    let closed = private.join("disk").display().to_string();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cases = vec![
        ("disk", "give an absolute path"),
        ("/no/such/dir", "no such directory"),
    ];
    if root {
        cases.push((&closed, "which cannot enter"));
    }
    for (dir, says) in cases {
        dbsweep()
            .args(["sweep", "--dry-run"])
            .arg(write_plan(&s, &with_dir(dir)))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says))
            .stderr(predicates::str::contains("plan.toml:"));
    }
    let url = good.replace("socket = true\n", "").replace(
        "server = \"postgres\"",
        "url = \"postgres://x@127.0.0.1/db\"",
    );
    dbsweep()
        .args(["sweep", "--dry-run"])
        .arg(write_plan(&s, &url))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "datadir_in is for a managed server",
        ));
}

#[test]
fn drop_caches_configuration_drops_the_page_cache_before_each_step() {
    let _cache = crate::util::machine_cache();
    let s = Scratch::new();
    let text = format!(
        "{SMALL_PLAN}\n[configs.cold]\ndrop_caches = true\nsettings = {{ cache_size = \"-500\" }}\n"
    );
    let plan = write_plan(&s, &text);
    let dir = s.path("sweep");
    Line::sweep(&[], &plan, &dir).assert().success();
    let recs = records(&dir);
    assert!(recs.iter().all(|r| r.1["cell"] == "sqlite.cold.c1"));
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for (name, r) in &recs {
        let notes = r["notes"].to_string();
        let expect = if root {
            "OS page cache dropped"
        } else {
            "needs root"
        };
        assert!(notes.contains(expect), "{name}: {notes}");
    }
    // The configuration's setting reached SQLite as a PRAGMA.
    let settings = &recs[1].1["results"]["target"]["settings"];
    assert_eq!(settings["cache_size"], "-500", "{settings}");
}

#[test]
fn sigint_stops_a_sweep_and_resume_finishes_it() {
    let s = Scratch::new();
    let plan = write_plan(
        &s,
        &SMALL_PLAN.replace("read_time = 0.5", "read_time = 600"),
    );
    let dir = s.path("sweep");
    let (child, lines) = crate::util::spawn_measuring(
        crate::util::dbsweep_std()
            .arg("sweep")
            .arg(&plan)
            .arg("--output")
            .arg(&dir)
            .stdout(Stdio::piped()),
        "[sqlite.default.c1 point] [ 1s ]",
    );
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let rest: Vec<String> = lines.collect();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{rest:?}");
    assert!(rest.iter().any(|l| l.contains("--resume")), "{rest:?}");
    let recs = records(&dir);
    assert_eq!(recs.len(), 2, "steps after the interrupted one did not run");
    assert_eq!(recs[0].1["status"], "ok");
    assert_eq!(recs[1].1["status"], "interrupted");
    assert_eq!(recs[1].1["results"]["interrupted"], true);
    // The interrupted cell's database stays for the resume, which runs the rest shorter.
    assert!(dir.join("data/sqlite.default.c1.db").exists());
    let out = dbsweep()
        .args(["sweep", "--read-time", "0.5", "--resume"])
        .arg(&dir)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("3 step(s) done, 0 failed, 1 kept from before"),
        "{stdout}"
    );
    let point = read_json(&dir.join("steps/sqlite.default.c1/02-point.json"));
    assert_eq!(point["status"], "ok");
    // The tables were still there: no reload.
    assert!(!point["notes"].to_string().contains("loaded again"));
}
