//! Comparisons that are fair or say why not: a sweep whose server targets keep a commit
//! differently (a binary log synced at every commit on one side) warns before its first cell,
//! again in its summary and in the report's warnings; `--server-set` makes them alike, for
//! every kind or one.

use crate::util::{Scratch, dbsweep};

/// Two MariaDB targets, the second with a binary log synced at every commit.
const PLAN: &str = r#"
name = "fair"
clients = [1]
tables = 1
table_size = 200
read_time = 1
write_time = 1
warmup_time = 0.2

[[targets]]
name = "plain"
server = "mariadb"

[[targets]]
name = "binlog"
server = "mariadb"
settings = { log_bin = "ON", sync_binlog = 1 }

[[steps]]
name = "load"
load = true

[[steps]]
name = "point"
workload = "oltp_point_select"
class = "read"
"#;

const WARNING: &str = "warning: the targets do different work per commit: binary log: plain off (log_bin=OFF); binlog on, synced at every commit (sync_binlog=1)";

#[test]
fn a_sweep_with_a_binary_log_on_one_side_warns_before_it_starts_and_in_its_report() {
    let s = Scratch::new();
    let plan = s.path("fair.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let dir = s.path("sweep");
    let out = dbsweep()
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    // Before the first cell's server starts, and again in the summary.
    let warned = stderr.find(WARNING).unwrap_or_else(|| panic!("{stderr}"));
    let first_cell = stderr
        .find("plain.default.c1: ")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(warned < first_cell, "{stderr}");
    assert!(stdout.contains(WARNING), "{stdout}");
    let report = dbsweep().arg("report").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{text}");
    assert!(
        text.contains("the targets do different work per commit"),
        "{text}"
    );
    assert!(text.contains("binlog on, synced at every commit"), "{text}");

    // The same plan with the binary log set on every server: alike, no warning; the kind's
    // form sets it on the kind's targets.
    for sets in [
        ["log_bin=ON", "sync_binlog=1"],
        ["mariadb:log_bin=ON", "mariadb:sync_binlog=1"],
    ] {
        let dir = s.path(&format!("alike-{}", sets[0].len()));
        let out = dbsweep()
            .arg("sweep")
            .arg(&plan)
            .args(["--server-set", sets[0], "--server-set", sets[1]])
            .arg("--output")
            .arg(&dir)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{stdout}{stderr}");
        assert!(!stderr.contains("different work per commit"), "{stderr}");
        let rec = crate::util::read_json(&dir.join("steps/plain.default.c1/02-point.json"));
        assert_eq!(
            rec["results"]["target"]["settings"]["log_bin"], "ON",
            "{rec}"
        );
    }
    // A kind the sweep has no server of, and a sweep with no managed server: refused, naming
    // the option.
    for (args, what) in [
        (
            vec![plan.to_str().unwrap(), "--server-set", "postgres:fsync=off"],
            "of kind postgres",
        ),
        (
            vec!["quick", "--server-set", "fsync=off"],
            "no managed server",
        ),
    ] {
        let out = dbsweep()
            .arg("sweep")
            .args(&args)
            .arg("--dry-run")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--server-set") && err.contains(what), "{err}");
    }
}

/// A process that takes a whole CPU beside a run: the run says the machine was busy, its
/// results file records the others' share and the flag, and its report lists the step
/// among those measured on a busy machine.
#[test]
fn a_cpu_hog_beside_a_run_flags_it() {
    let s = Scratch::new();
    s.line(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    // A shell spinning in a loop: one CPU's worth of another process, killed when done.
    let mut hog = std::process::Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    let file = s.path("busy.json");
    let out = s
        .line(&[
            "run",
            "oltp_point_select",
            "--table-size",
            "1000",
            "--time",
            "2",
        ])
        .args(["--report-interval", "0"])
        .output(&file)
        .command()
        .output()
        .unwrap();
    let _ = hog.kill();
    let _ = hog.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: the machine was busy beside the run (other processes "),
        "{stderr}"
    );
    let r = crate::util::read_json(&file);
    let beside = &r["hw"]["beside"];
    assert_eq!(beside["busy"], true, "{beside}");
    // One CPU of this machine's: its share of all of them, less what the run's own
    // processes left it.
    let cpus = r["hw"]["cpus"].as_f64().unwrap();
    let others = beside["others_pct"].as_f64().unwrap();
    assert!(others > 100.0 / cpus * 0.5, "{beside} on {cpus} CPUs");
    let report = dbsweep().arg("report").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("steps measured on a busy machine: "),
        "{text}"
    );
}
