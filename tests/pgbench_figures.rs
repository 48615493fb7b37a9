//! The pgbench link's figures mean what pgbench's mean, each checked against the real pgbench
//! 15 on the same managed server: a run whose sessions die ends as pgbench ends it, "latency
//! average" is pgbench's, a transaction retried counts whether it failed at last or not, the
//! results file is named away from stdout, and `--help` lists pgbench's options.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use dbsweep::server::ServerKind;

use crate::util::{Scratch, dbsweep, start};

const PGBENCH: &str = "/usr/lib/postgresql/15/bin/pgbench";

/// The dbsweep binary under pgbench's name, a link in `s`, and the real pgbench.
fn tools(s: &Scratch) -> [std::path::PathBuf; 2] {
    let link = s.path("pgbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &link).unwrap();
    [PGBENCH.into(), link]
}

/// `bin` with `args` on the managed server at `port`, run in `dir`: exit code, stdout, stderr.
fn run(
    bin: &std::path::Path,
    dir: &std::path::Path,
    port: u16,
    args: &[&str],
) -> (i32, String, String) {
    run_env(bin, dir, port, args, &[])
}

/// `run` with environment variables set.
fn run_env(
    bin: &std::path::Path,
    dir: &std::path::Path,
    port: u16,
    args: &[&str],
    env: &[(&str, &std::path::Path)],
) -> (i32, String, String) {
    let out = Command::new(bin)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "sbtest"])
        .args(args)
        .arg("sbtest")
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn figure(out: &str, re: &str) -> f64 {
    let re = regex::Regex::new(re).unwrap();
    re.captures(out)
        .unwrap_or_else(|| panic!("no {re} in\n{out}"))[1]
        .parse()
        .unwrap()
}

fn exec(url: &str, sql: &str) {
    let target = dbsweep::db::open(url, Default::default()).unwrap();
    target.connect().unwrap().batch(sql).unwrap();
}

/// Sessions killed under a running benchmark (as a server that dies kills them): each client
/// aborts with pgbench's line, the others' figures are printed, and the run ends with "Run
/// was aborted" and exit 2, never a throughput and exit 0. A script whose every transaction
/// fails the same way ends with no transaction, where pgbench stops its summary.
#[test]
fn sessions_that_die_mid_run_end_it_as_pgbench_ends_it() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let dir = s.path("");
    let bins = tools(&s);
    run(&bins[0], &dir, server.port, &["-i", "-q", "-s", "1"]);
    let aborted = regex::Regex::new(
        // Its FATAL read as the answer to a statement, or the connection found closed.
        r"(?m)^pgbench: error: client \d (script 0 aborted in command \d+ query 0: FATAL:  terminating connection due to administrator command|aborted in command \d+ \(SQL\) of script 0; perhaps the backend died while processing)$",
    )
    .unwrap();
    for bin in &bins {
        let mut child = Command::new(bin)
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-U",
                "sbtest",
            ])
            .args(["-n", "-c", "2", "-T", "120", "-P", "1", "sbtest"])
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The first progress line says the clients run: then their sessions are ended.
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        while !seen.contains("progress: ") {
            let mut line = String::new();
            assert!(err.read_line(&mut line).unwrap() > 0, "{bin:?}: {seen}");
            seen.push_str(&line);
        }
        exec(
            &server.url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        );
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
        seen.push_str(&rest);
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{bin:?}\n{stdout}\n{seen}");
        assert_eq!(aborted.find_iter(&seen).count(), 2, "{bin:?}\n{seen}");
        assert!(
            seen.trim_end()
                .ends_with("pgbench: error: Run was aborted; the above results are incomplete."),
            "{bin:?}\n{seen}"
        );
        // The figures of the seconds the clients ran: the run ended when its last client
        // did, not at -T's 120 s.
        let processed = figure(
            &stdout,
            r"(?m)^number of transactions actually processed: (\d+)$",
        );
        let tps = figure(&stdout, r"(?m)^tps = (\d+\.\d+) ");
        assert!(processed > 0.0, "{stdout}");
        assert!(
            processed / tps < 60.0,
            "{bin:?}: {processed} / {tps}\n{stdout}"
        );
    }
    // Every transaction fails: no transaction done, and pgbench's summary stops there.
    let zero = s.path("zero.sql");
    std::fs::write(&zero, "SELECT 1/0;\n").unwrap();
    let args = ["-n", "-c", "2", "-t", "5", "-f", zero.to_str().unwrap()];
    let [theirs, mine] = bins.each_ref().map(|b| run(b, &dir, server.port, &args));
    assert_eq!(mine.0, 2, "{}{}", mine.1, mine.2);
    let tail = |o: &str| o.lines().skip(1).map(String::from).collect::<Vec<_>>();
    assert_eq!(tail(&mine.1), tail(&theirs.1), "{}", mine.1);
    assert!(mine.1.trim_end().ends_with("(NaN%)"), "{}", mine.1);
    for (_, _, err) in [&theirs, &mine] {
        assert!(
            err.contains("pgbench: error: client 0 script 0 aborted in command 0 query 0: ERROR:  division by zero"),
            "{err}"
        );
        assert!(err.contains("Run was aborted"), "{err}");
    }
}

/// pgbench's "latency average" without -P, -R or -L is the run's time per transaction and
/// client (under -C, its connections' time in it): 1000 * clients / tps. Its "number of
/// transactions retried" counts a transaction that failed after a retry too: with two tries
/// at most, every retried transaction was retried once, so that the count equals the
/// retries.
#[test]
fn latency_average_and_retried_transactions_mean_what_pgbench_means() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let dir = s.path("");
    let bins = tools(&s);
    run(&bins[0], &dir, server.port, &["-i", "-q", "-s", "1"]);
    let args = ["-n", "-C", "-S", "-c", "2", "-t", "100"];
    for bin in &bins {
        let (code, out, err) = run(bin, &dir, server.port, &args);
        assert_eq!(code, 0, "{out}{err}");
        let lat = figure(&out, r"(?m)^latency average = (\d+\.\d+) ms$");
        let tps = figure(
            &out,
            r"(?m)^tps = (\d+\.\d+) \(including reconnection times\)$",
        );
        let want = 1000.0 * 2.0 / tps;
        assert!(
            (lat - want).abs() <= 0.0015 + want * 1e-4,
            "{bin:?}: latency average {lat}, 1000 * clients / tps {want}\n{out}"
        );
        // Nothing dbsweep adds to stdout: its last line is pgbench's.
        assert!(out.lines().last().unwrap().starts_with("tps = "), "{out}");
    }
    exec(
        &server.url,
        "CREATE TABLE race (id int PRIMARY KEY, v int); INSERT INTO race VALUES (1, 0)",
    );
    let race = s.path("race.sql");
    std::fs::write(
        &race,
        "BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT v FROM race WHERE id = 1;\n\
         \\sleep 2 ms\nUPDATE race SET v = v + 1 WHERE id = 1;\nEND;\n",
    )
    .unwrap();
    let args = [
        "-n",
        "-c",
        "4",
        "-j",
        "4",
        "-t",
        "40",
        "--max-tries",
        "2",
        "-f",
        race.to_str().unwrap(),
    ];
    for bin in &bins {
        let (code, out, err) = run(bin, &dir, server.port, &args);
        assert_eq!(code, 0, "{out}{err}");
        let failed = figure(&out, r"(?m)^number of failed transactions: (\d+) ");
        let retried = figure(&out, r"(?m)^number of transactions retried: (\d+) ");
        let retries = figure(&out, r"(?m)^total number of retries: (\d+)$");
        assert!(
            failed > 0.0,
            "{bin:?}: no transaction failed its two tries\n{out}"
        );
        assert_eq!(retried, retries, "{bin:?}\n{out}");
    }
}

/// `--help` lists pgbench's options, group by group, in pgbench's order.
#[test]
fn help_lists_pgbenchs_options_in_its_groups() {
    let s = Scratch::new();
    let bins = tools(&s);
    let listing = |bin: &std::path::Path| -> Vec<(String, Vec<String>)> {
        let out = Command::new(bin).arg("--help").output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let option = regex::Regex::new(r"^  (?:-., )?(--[a-z-]+)").unwrap();
        let mut groups: Vec<(String, Vec<String>)> = Vec::new();
        for line in text.lines() {
            if let Some(title) = line.strip_suffix(':')
                && !line.starts_with(' ')
                && title != "Usage"
            {
                groups.push((title.to_string(), Vec::new()));
            } else if let Some(c) = option.captures(line)
                && let Some(g) = groups.last_mut()
            {
                g.1.push(c[1].to_string());
            }
        }
        groups
    };
    let theirs = listing(&bins[0]);
    assert_eq!(theirs.len(), 4, "{theirs:?}");
    assert_eq!(listing(&bins[1]), theirs);
}

/// pgbench's own options live in the pgbench personality: `dbsweep run --help` lists dbsweep's
/// options only, and a dbsweep run refuses pgbench's (its transaction log, its error lines,
/// `-i`'s table options), which `dbsweep pgbench` still takes.
#[test]
fn pgbenchs_own_options_are_the_personalitys_not_dbsweep_runs() {
    let out = dbsweep().args(["run", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--rows-per-commit"), "{help}");
    for pgbench_only in [
        "--partitions",
        "--partition-method",
        "--tablespace",
        "--index-tablespace",
        "--init-steps",
        "--fillfactor",
        "--unlogged-tables",
        "--foreign-keys",
        "--txn-log",
        "--verbose-errors",
        "--failures-detailed",
    ] {
        assert!(!help.contains(pgbench_only), "{pgbench_only} in:\n{help}");
        let refused = dbsweep()
            .args(["run", "pgbench_tpcb_like", pgbench_only, "x"])
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(2), "{pgbench_only}");
    }
    let help = dbsweep().args(["pgbench", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for pgbench_option in [
        "--partitions",
        "--tablespace",
        "--failures-detailed",
        "--log",
    ] {
        assert!(
            help.contains(pgbench_option),
            "{pgbench_option} in:\n{help}"
        );
    }
}

/// A pgbench run's report leads with transactions a second and the transactions' latency
/// percentiles, the tps pgbench's summary printed.
#[test]
fn a_pgbench_runs_report_leads_with_tps_and_latency_percentiles() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let dir = s.path("");
    let bins = tools(&s);
    run(&bins[0], &dir, server.port, &["-i", "-q", "-s", "1"]);
    // The results file where DBSWEEP_RESULTS_DIR asks.
    let (code, out, err) = run_env(
        &bins[1],
        &dir,
        server.port,
        &["-n", "-c", "2", "-T", "2"],
        &[("DBSWEEP_RESULTS_DIR", &dir)],
    );
    assert_eq!(code, 0, "{out}{err}");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("dbsweep-pgbench-"))
        .unwrap_or_else(|| panic!("no results file: {err}"));
    let report = crate::util::dbsweep()
        .arg("report")
        .arg(file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.starts_with("pgbench: transactions a second and their latency\n"),
        "{text}"
    );
    let header = text.lines().nth(2).unwrap();
    for col in ["tps", "p50", "p95", "p99", "max"] {
        assert!(header.contains(col), "{header}");
    }
    let row = text.lines().nth(3).unwrap();
    let tps: f64 = row.split_whitespace().nth(2).unwrap().parse().unwrap();
    let printed = figure(&out, r"(?m)^tps = (\d+\.\d+) ");
    assert!((tps - printed).abs() <= 1.0, "{row} against {printed}");
}
