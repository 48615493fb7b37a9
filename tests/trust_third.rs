//! Regression tests of the third hostile pass (issue "Trust, third pass"): kept data
//! directories, outputs over a run's own inputs, files beside a results file that are not
//! dbsweep's, names that steer the terminal, names too long to pad. Each failed on the code
//! before its fix.

use std::path::Path;

use base64::Engine;
use serde_json::Value;

use dbsweep::server::ServerKind;

use crate::util::{Scratch, dbsweep, mock_results, read_json};

/// A mock run of 200 events written to `path`.
fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// The one error line of a refused command, which exited `code`.
fn refused(out: &std::process::Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
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
fn names_from_a_results_file_never_steer_the_terminal_nor_break_the_tables() {
    let s = Scratch::new();
    let path = s.path("r.json");
    let mut r = mock_results(&path);
    r["workload"] = "oltp\u{1b}]0;owned\u{7}\u{1b}[2J".into();
    write_json(&path, &r);
    let out = dbsweep()
        .args(["report", "--color", "always"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("oltp\\x1b]0;owned\\x07\\x1b[2J"), "{text}");
    assert!(!text.contains("\u{7}") && !text.contains("\u{1b}]0") && !text.contains("\u{1b}[2J"));
    // A name too long to pad a column to (past a format width's 65,535).
    r["workload"] = "w".repeat(70_000).into();
    write_json(&path, &r);
    for format in ["text", "markdown"] {
        let out = dbsweep()
            .args(["report", "--format", format])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{format}: {stderr}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(&"w".repeat(70_000)));
    }
    // Error messages escape too: a file name that would clear the screen.
    let bad = s.path("x\u{1b}[2J.json");
    std::fs::write(&bad, "not json").unwrap();
    let out = dbsweep().arg("report").arg(&bad).output().unwrap();
    let err = refused(&out, 2);
    assert!(
        err.contains("x\\x1b[2J.json") && !err.contains('\u{1b}'),
        "{err}"
    );
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

#[test]
fn a_background_role_that_dies_fails_the_run_and_says_which() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
        .assert()
        .success();
    s.cmd(&["prepare", "ibench_insert", "--table-size", "1000"])
        .assert()
        .success();
    let out = s.path("r.json");
    let mut cmd = crate::util::dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args(["run", "oltp_point_select", "--target", &s.target()])
        .args([
            "--table-size",
            "1000",
            "--time",
            "60",
            "--report-interval",
            "1",
        ])
        .args(["--role", "ibench_insert,rate=50"])
        .arg("--output")
        .arg(&out);
    let (mut child, lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    // The role's table goes away under it: its next insert fails.
    s.sqlite()
        .execute_batch("ALTER TABLE purchases_index RENAME TO gone")
        .unwrap();
    let rest: Vec<String> = lines.collect();
    let status = child.wait().unwrap();
    let stderr = rest.join("\n");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--role ibench_insert") && stderr.contains("failed"),
        "{stderr}"
    );
    assert!(!out.exists(), "no results of a run cut short by its role");
}

#[test]
fn a_run_held_past_its_time_by_another_processs_lock_counts_the_seconds_it_took() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_update_index", "--table-size", "1000"])
        .assert()
        .success();
    let out = s.path("r.json");
    let mut cmd = crate::util::dbsweep_std();
    cmd.current_dir(s.dir.path())
        .args(["run", "oltp_update_index", "--target", &s.target()])
        .args([
            "--table-size",
            "1000",
            "--time",
            "2",
            "--report-interval",
            "1",
        ])
        .arg("--output")
        .arg(&out);
    // This process holds the write lock from before the run until 6 s into it: the run's
    // writer waits for it past the run's 2 s.
    let mut db = s.sqlite();
    let tx = db
        .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)
        .unwrap();
    let held = std::time::Instant::now();
    let (mut child, lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    while held.elapsed() < std::time::Duration::from_secs(6) {
        std::thread::park_timeout(std::time::Duration::from_millis(100));
    }
    tx.commit().unwrap();
    let stderr: Vec<String> = lines.collect();
    assert!(child.wait().unwrap().success(), "{stderr:?}");
    let r = read_json(&out);
    let took = r["time_s"].as_f64().unwrap();
    assert!(
        took > 4.0,
        "time_s {took}: the divisor is --time, not the time taken"
    );
    let events = r["events"].as_f64().unwrap();
    assert!((r["tps"].as_f64().unwrap() - events / took).abs() < 1e-6 * events.max(1.0));
    assert!(
        stderr.iter().any(|l| l.contains("after --time 2")),
        "{stderr:?}"
    );
}

/// The real pgbench of the installed PostgreSQL (scripts/test installs it).
const PGBENCH: &str = "/usr/lib/postgresql/15/bin/pgbench";

#[test]
fn pgbench_drop_in_judges_every_value_as_pgbench_does_before_connecting() {
    let s = Scratch::new();
    let empty = s.path("empty.sql");
    std::fs::write(&empty, "").unwrap();
    let cases: &[&[&str]] = &[
        &["-R", "-1"],
        &["-R", "0"],
        &["-R", "abc"],
        &["-P", "-1"],
        &["-P", "abc"],
        &["-c", "0"],
        &["-c", "abc"],
        &["-c", "2147483648"],
        &["-j", "0"],
        &["-T", "-5"],
        &["-t", "0"],
        &["-s", "0"],
        &["-D", "foo"],
        &["-D", "=5"],
        &["-D", "x="],
        &["-D", "1x=3"],
        &["-i", "-I", ""],
        &["-i", "-I", "xyz"],
        &["-i", "-F", "5"],
        &["--random-seed=abc"],
        &["--aggregate-interval=0", "-l"],
    ];
    for args in cases {
        // Nothing listens there: a message about connecting means the value was not judged.
        let theirs = std::process::Command::new(PGBENCH)
            .args(*args)
            .args(["-h", "/nonexistent"])
            .output()
            .expect("pgbench is installed (scripts/test installs it)");
        let mine = dbsweep()
            .arg("pgbench")
            .args(*args)
            .args(["-h", "/nonexistent"])
            .output()
            .unwrap();
        let first = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(first(&mine), first(&theirs), "{args:?}");
        assert_eq!(mine.status.code(), theirs.status.code(), "{args:?}");
    }
    // Failing to connect is an early error: exit 1, as pgbench documents, with or without
    // its builtins and vacuum.
    let script = s.path("one.sql");
    std::fs::write(&script, "SELECT 1;\n").unwrap();
    for args in [vec![], vec!["-n", "-f", script.to_str().unwrap()]] {
        let mine = dbsweep()
            .arg("pgbench")
            .args(&args)
            .args(["-h", "/nonexistent"])
            .output()
            .unwrap();
        let theirs = std::process::Command::new(PGBENCH)
            .args(&args)
            .args(["-h", "/nonexistent"])
            .output()
            .unwrap();
        assert_eq!(theirs.status.code(), Some(1));
        assert_eq!(mine.status.code(), Some(1), "{args:?}");
    }
    // --random-seed takes a negative number as strtoull does: no usage error about it, and
    // pgbench's info line with the seed it made of it.
    let mine = dbsweep()
        .args(["pgbench", "--random-seed=-1", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let theirs = std::process::Command::new(PGBENCH)
        .args(["--random-seed=-1", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&mine.stderr);
    assert!(!err.contains("unexpected argument"), "{err}");
    assert_eq!(
        err.lines().next(),
        String::from_utf8_lossy(&theirs.stderr).lines().next()
    );
    assert_eq!(
        err.lines().next(),
        Some("pgbench: setting random seed to 18446744073709551615")
    );
    // -f - reads the script from standard input.
    let mine = dbsweep()
        .args(["pgbench", "-n", "-f", "-", "-h", "/nonexistent"])
        .write_stdin("")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&mine.stderr).contains("empty command list for script \"-\""),
        "{}",
        String::from_utf8_lossy(&mine.stderr)
    );
}

#[test]
fn pgbench_values_keep_their_text_and_every_command_past_the_256th_is_timed() {
    let s = Scratch::new();
    s.sqlite().execute_batch("VACUUM").unwrap();
    let out = s.path("shell.out");
    let script = s.path("t.sql");
    let mut text = format!(
        "SELECT '1.50' AS g \\gset\n\\shell echo :x :y :g > {}\n",
        out.display()
    );
    for _ in 0..300 {
        text.push_str("SELECT 1;\n");
    }
    std::fs::write(&script, text).unwrap();
    let res = s.path("r.json");
    let r = s
        .line(&["run", "pgbench", "--script", script.to_str().unwrap()])
        .args(["--define", "x=007", "--define", "y=1e400"])
        .args(["--events", "3", "--time", "0"])
        .quiet()
        .output(&res)
        .results();
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().trim(),
        "007 1e400 1.50",
        "values are sent as they came"
    );
    // 302 commands, each timed in every one of the 3 transactions.
    let statements = r["statements"].as_array().unwrap();
    assert_eq!(statements.len(), 302);
    for st in statements {
        assert_eq!(st["count"], 3, "{st}");
    }
}

/// The client's peak resident memory of a mock run with `args`, in KB (the step's own
/// high-water mark, from its results file).
fn mock_peak_kb(s: &Scratch, name: &str, args: &[&str]) -> u64 {
    let res = s.path(name);
    dbsweep()
        .args(["run", "--target", "mock://", "--report-interval", "0"])
        .args(args)
        .arg("--output")
        .arg(&res)
        .assert()
        .success();
    read_json(&res)["hw"]["client_peak_rss_kb"]
        .as_u64()
        .expect("the client's peak")
}

#[test]
fn memory_does_not_grow_by_megabytes_with_a_scripts_commands_or_the_clients() {
    // Each command of a script timed apart once held a histogram of 270 KB, twice: a
    // 10,000-command script took 10.5 GB for one transaction. The bench `memory` prints the
    // figures against the targets (100 MB, 150 MB, 300 KB a client thread); here,
    // bounds far above them and far below what the histograms took.
    let s = Scratch::new();
    let script = s.path("long.sql");
    let text: String = (0..10_000).map(|i| format!("SELECT {i};\n")).collect();
    std::fs::write(&script, text).unwrap();
    let long = mock_peak_kb(
        &s,
        "long.json",
        &[
            "pgbench",
            "--script",
            script.to_str().unwrap(),
            "--events",
            "1",
            "--time",
            "0",
            "--statement-times",
            "on",
        ],
    );
    assert!(long < 400 << 10, "a 10,000-command script took {long} KB");
    // 200 clients of oltp_read_write, whose events time 11 kinds of statement each.
    let clients = mock_peak_kb(
        &s,
        "clients.json",
        &[
            "oltp_read_write",
            "--threads",
            "200",
            "--connect-rate",
            "0",
            "--events",
            "20000",
            "--time",
            "0",
        ],
    );
    assert!(clients < 300 << 10, "200 clients took {clients} KB");
}

#[test]
fn pgbench_scripts_all_of_weight_zero_are_refused() {
    let out = dbsweep()
        .args(["pgbench", "-b", "select-only@0", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let theirs = std::process::Command::new(PGBENCH)
        .args(["-b", "select-only@0", "-h", "/nonexistent"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("total script weight must not be zero"),
        "{err}"
    );
    assert_eq!(out.status.code(), theirs.status.code());
}

#[test]
fn ctrl_c_ends_everything_a_shell_command_of_a_script_started() {
    let s = Scratch::new();
    s.sqlite().execute_batch("VACUUM").unwrap();
    let pidfile = s.path("sleep.pid");
    let script = s.path("t.sql");
    // The shell forks the inner one (`; true` keeps it from exec'ing), which becomes the sleep.
    std::fs::write(
        &script,
        format!(
            "\\shell sh -c 'echo $$ > {}; exec sleep 300'; true\n",
            pidfile.display()
        ),
    )
    .unwrap();
    let mut cmd = crate::util::dbsweep_std();
    cmd.args(["run", "pgbench", "--target", &s.target()])
        .args(["--script", script.to_str().unwrap()])
        .args(["--time", "600", "--report-interval", "1"]);
    let (mut child, _lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("the shell command ran in the first second")
        .trim()
        .parse()
        .unwrap();
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // Gone, or a zombie waiting for its new parent: not sleeping on.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|st| {
            st.rsplit_once(')')
                .map(|(_, r)| r.trim().chars().next().unwrap())
        });
    if state.is_some_and(|c| c != 'Z') {
        // SAFETY: clean up what the code under test left running.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        panic!("the shell's child {pid} outlived Ctrl-C");
    }
}

/// The pids of processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|p| {
            let pid: u32 = p.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(p.path().join("cmdline")).ok()?;
            let stat = std::fs::read_to_string(p.path().join("stat")).ok()?;
            let zombie = stat.rsplit_once(')')?.1.trim().starts_with('Z');
            (!zombie && String::from_utf8_lossy(&cmd).contains(needle)).then_some(pid)
        })
        .collect()
}

#[test]
fn a_managed_mariadb_start_stopped_during_install_db_leaves_nothing_behind() {
    let s = Scratch::enterable();
    let tmp = s.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    let needle = tmp.to_str().unwrap().to_string();
    let mut child = crate::util::dbsweep_std()
        .env("TMPDIR", &tmp)
        .args(["prepare", "oltp_point_select", "--server", "mariadb"])
        .args(["--table-size", "100"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until the system tables are being installed: a process working in the new directory
    // (bounded: install-db takes seconds, this waits at most a minute).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while processes_with(&needle).is_empty() {
        assert!(
            std::time::Instant::now() < until,
            "install-db never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "dbsweep ended before install-db"
        );
        std::thread::park_timeout(std::time::Duration::from_millis(5));
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(0));
    let left = processes_with(&needle);
    for pid in &left {
        // SAFETY: clean up what the code under test left running.
        unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "left running: {left:?}");
    let dirs: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(dirs.is_empty(), "left behind: {dirs:?}");
}

/// The statements of another session still running `needle` on the server at `url`.
fn running_elsewhere(url: &str, kind: ServerKind, needle: &str) -> i64 {
    let sql = match kind {
        ServerKind::Postgres => format!(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' \
             AND pid <> pg_backend_pid() AND query LIKE '%{needle}%'"
        ),
        _ => format!(
            "SELECT count(*) FROM information_schema.processlist WHERE id <> CONNECTION_ID() \
             AND command = 'Query' AND info LIKE '%{needle}%'"
        ),
    };
    dbsweep::db::open(url, Default::default())
        .unwrap()
        .connect()
        .unwrap()
        .query_i64(&sql)
        .unwrap()
        .unwrap_or(0)
}

per_server!(
    ctrl_c_cancels_the_statement_on_the_server,
    |kind: ServerKind| {
        let s = Scratch::new();
        let server = crate::util::start(kind);
        let (sleep, needle) = match kind {
            ServerKind::Postgres => ("SELECT pg_sleep(300);", "pg_sleep(300)"),
            _ => ("SELECT SLEEP(300);", "SLEEP(300)"),
        };
        let script = s.path("long.sql");
        std::fs::write(&script, format!("{sleep}\n")).unwrap();
        let mut cmd = crate::util::dbsweep_std();
        cmd.args(["run", "pgbench", "--target", &server.url])
            .args(["--script", script.to_str().unwrap()])
            .args(["--time", "600", "--report-interval", "1"]);
        let (mut child, _lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
        assert_eq!(running_elsewhere(&server.url, kind, needle), 1);
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        assert_eq!(child.wait().unwrap().code(), Some(130));
        // The server ends the statement on the cancel's arrival: within seconds, not 300.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while running_elsewhere(&server.url, kind, needle) > 0 {
            assert!(
                std::time::Instant::now() < until,
                "the server still runs the statement Ctrl-C stopped"
            );
            std::thread::park_timeout(std::time::Duration::from_millis(50));
        }
    }
);

#[test]
fn ctrl_c_ends_a_script_whose_done_never_returns() {
    let s = Scratch::new();
    s.sqlite().execute_batch("VACUUM").unwrap();
    let script = s.path("forever.lua");
    std::fs::write(
        &script,
        "function event() end\nfunction done()\n  io.stderr:write('in done\\n')\n  local i = 0\n  while true do i = i + 1 end\nend\n",
    )
    .unwrap();
    let mut cmd = crate::util::dbsweep_std();
    cmd.args(["run", script.to_str().unwrap(), "--target", &s.target()])
        .args(["--time", "2", "--report-interval", "1"]);
    let (mut child, mut lines) = crate::util::spawn_measuring(&mut cmd, "[ 1s ]");
    // The run ends at 2 s and enters done(); Ctrl-C comes while it loops.
    assert!(lines.any(|l| l.contains("in done")), "done() never began");
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let stopped = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if stopped.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("done() went on 30 s after Ctrl-C");
        }
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
}

#[test]
fn messages_say_what_is_wrong_in_words() {
    let s = Scratch::new();
    // sysbench's C tests run as sysbench runs them.
    let out = dbsweep()
        .args([
            "sysbench",
            "cpu",
            "--cpu-max-prime=100",
            "--events=5",
            "run",
        ])
        .output()
        .unwrap();
    refused(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains("CPU speed:"));
    // A Lua error whose value is a table: its fields, not an address.
    s.sqlite().execute_batch("VACUUM").unwrap();
    let script = s.path("e.lua");
    std::fs::write(
        &script,
        "function event() error({errcode = 1213, sqlstate = \"40001\"}) end\n",
    )
    .unwrap();
    let out = dbsweep()
        .args(["run", script.to_str().unwrap(), "--target", &s.target()])
        .args(["--time", "1", "--report-interval", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("{errcode = 1213, sqlstate = \"40001\"}") && !err.contains("table: 0x"),
        "{err}"
    );
    // sql-bench's prepare makes the database it says it made.
    let db = s.path("sb.db");
    dbsweep()
        .args(["prepare", "sqlbench_select", "--target"])
        .arg(format!("sqlite://{}", db.display()))
        .assert()
        .success();
    assert!(db.is_file());
    // A URL parameter given twice.
    let out = dbsweep()
        .args(["run", "oltp_point_select", "--target"])
        .arg(format!("{}?lock_wait=fifo&lock_wait=poll", s.target()))
        .args(["--time", "1"])
        .output()
        .unwrap();
    assert!(refused(&out, 2).contains("given twice"));
}

#[test]
fn ctrl_c_ends_pgbench_init_of_many_partitions_at_once() {
    let server = crate::util::start(ServerKind::Postgres);
    let mut cmd = crate::util::dbsweep_std();
    cmd.arg("pgbench")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
            "-U",
            "sbtest",
        ])
        .args(["-i", "-s", "1", "--partitions", "20000", "sbtest"]);
    let (mut child, _lines) = crate::util::spawn_measuring(&mut cmd, "creating 20000 partitions");
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let stopped = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if stopped.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("pgbench -i went on 20 s after Ctrl-C");
        }
        std::thread::park_timeout(std::time::Duration::from_millis(50));
    };
    assert_ne!(status.code(), Some(0));
}
