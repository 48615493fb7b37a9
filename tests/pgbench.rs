//! pgbench's workloads against the real pgbench of the installed PostgreSQL, on one managed
//! server: each tool runs on the other's tables, fixed transaction counts add exactly that many
//! history rows, TPC-B's balances agree, and a custom script's \set, \if and variables give
//! the rows pgbench's give.

use std::process::Command;

use dbsweep::server::ServerKind;

use crate::util::{Line, Scratch, start};

const PGBENCH: &str = "/usr/lib/postgresql/15/bin/pgbench";

fn query(url: &str, sql: &str) -> i64 {
    let target = dbsweep::db::open(url, Default::default()).expect("target");
    let mut conn = target.connect().expect("connect");
    conn.query_i64(sql).expect("query").expect("a value")
}

/// The real pgbench on the managed server at `port`, with `args`; its stdout.
fn pgbench(port: u16, args: &[&str]) -> String {
    let out = Command::new(PGBENCH)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "sbtest"])
        .args(args)
        .arg("sbtest")
        .output()
        .expect("pgbench runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "pgbench {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// TPC-B's invariant: every balance total is the sum of the history's deltas.
fn assert_balanced(url: &str) {
    let deltas = query(url, "SELECT COALESCE(SUM(delta), 0) FROM pgbench_history");
    for t in ["accounts", "tellers", "branches"] {
        let col = &t[..1];
        assert_eq!(
            query(
                url,
                &format!("SELECT COALESCE(SUM({col}balance), 0) FROM pgbench_{t}")
            ),
            deltas,
            "{t}"
        );
    }
}

#[test]
fn dbsweep_and_pgbench_run_on_each_others_tables() {
    let server = start(ServerKind::Postgres);
    let url = server.url.clone();
    Line::new(&["prepare", "pgbench_tpcb_like", "--scale", "2"])
        .target(&url)
        .assert()
        .success();
    assert_eq!(
        query(&url, "SELECT count(*) FROM pgbench_accounts"),
        200_000
    );
    assert_eq!(query(&url, "SELECT count(*) FROM pgbench_tellers"), 20);
    assert_eq!(query(&url, "SELECT count(*) FROM pgbench_branches"), 2);
    // pgbench on dbsweep's tables.
    let out = pgbench(server.port, &["-n", "-t", "50", "-c", "2"]);
    assert!(
        out.contains("number of transactions actually processed: 100/100"),
        "{out}"
    );
    assert_eq!(query(&url, "SELECT count(*) FROM pgbench_history"), 100);
    assert_balanced(&url);
    // dbsweep on pgbench's tables (with its foreign keys), in both query modes.
    pgbench(server.port, &["-i", "-s", "1", "--foreign-keys", "-q"]);
    for mode in ["auto", "disable"] {
        Line::new(&[
            "run",
            "pgbench_tpcb_like",
            "--threads",
            "2",
            "--events",
            "200",
            "--time",
            "0",
            "--ps-mode",
            mode,
        ])
        .target(&url)
        .quiet()
        .assert()
        .success();
    }
    assert_eq!(query(&url, "SELECT count(*) FROM pgbench_history"), 400);
    // The scale came from the data: every account drawn is one of scale 1's.
    assert_eq!(
        query(&url, "SELECT max(aid) FROM pgbench_history"),
        query(
            &url,
            "SELECT max(aid) FROM pgbench_history WHERE aid <= 100000"
        )
    );
    assert_balanced(&url);
    // dbsweep's own prepare refuses to drop tables that are there.
    let refused = Line::new(&["prepare", "pgbench_tpcb_like"])
        .target(&url)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(err.contains("already exists"), "{err}");
    Line::new(&["cleanup", "pgbench_select_only"])
        .target(&url)
        .assert()
        .success();
    assert_eq!(
        query(
            &url,
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pgbench%'"
        ),
        0
    );
}

#[test]
fn a_custom_script_gives_the_rows_pgbench_gives() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let url = server.url.clone();
    let script = s.path("custom.sql");
    std::fs::write(
        &script,
        "\\set k2 :k * 2 + greatest(0, -3)\n\
         \\set r random(1, 10)\n\
         \\SET w CASE WHEN :r > 5 THEN 1 ELSE 2 END\n\
         \\if :r > 5\n\
         INSERT INTO pgb_t (v, branch, w) VALUES (:k2 + 1, 1, :w);\n\
         \\elif :r > 0\n\
         INSERT INTO pgb_t (v, branch, w)\n   VALUES (:k2, 2, :w); -- two lines\n\
         \\else\n\
         SELECT 1/0;\n\
         \\endif\n\
         \\sleep 0 ms\n",
    )
    .unwrap();
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    target
        .connect()
        .unwrap()
        .batch("CREATE TABLE pgb_t (v int, branch int, w int)")
        .unwrap();
    let path = script.to_str().unwrap();
    pgbench(server.port, &["-n", "-t", "100", "-D", "k=5", "-f", path]);
    Line::new(&[
        "run", "pgbench", "--script", path, "--define", "k=5", "--events", "100", "--time", "0",
    ])
    .target(&url)
    .quiet()
    .assert()
    .success();
    assert_eq!(query(&url, "SELECT count(*) FROM pgb_t"), 200);
    // Every row is one of the two branches, with its CASE value, and both branches ran.
    assert_eq!(
        query(
            &url,
            "SELECT count(*) FROM pgb_t WHERE (v, branch, w) NOT IN ((11, 1, 1), (10, 2, 2))"
        ),
        0
    );
    assert!(query(&url, "SELECT count(DISTINCT branch) FROM pgb_t") == 2);
    // Weights: three of the custom script to one select-only, within a wide margin.
    Line::new(&["prepare", "pgbench_select_only", "--scale", "1"])
        .target(&url)
        .assert()
        .success();
    Line::new(&[
        "run",
        "pgbench",
        "--script",
        &format!("{path}@3"),
        "--script",
        "builtin:select-only@1",
        "--define",
        "k=5",
        "--events",
        "400",
        "--time",
        "0",
    ])
    .target(&url)
    .quiet()
    .assert()
    .success();
    let custom = query(&url, "SELECT count(*) FROM pgb_t") - 200;
    assert!(
        (240..=360).contains(&custom),
        "{custom} of 400 ran the custom script"
    );
    // A script error names the file and line.
    let bad = s.path("bad.sql");
    std::fs::write(&bad, "SELECT 1;\n\\set x random(1)\n").unwrap();
    let out = Line::new(&["run", "pgbench", "--script", bad.to_str().unwrap()])
        .target(&url)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("bad.sql:2:") && err.contains("unexpected number of arguments (random)"),
        "{err}"
    );
}

/// The dbsweep binary under pgbench's name (a link in `dir`).
fn linked(dir: &std::path::Path) -> std::path::PathBuf {
    let link = dir.join("pgbench");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("dbsweep"), &link).unwrap();
    link
}

/// A scratch directory holding a `pgbench` link to dbsweep, and a managed PostgreSQL.
fn pg_with_link() -> (
    Scratch,
    dbsweep::server::ManagedServer,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let dir = s.path("");
    let link = linked(&dir);
    (s, server, dir, link)
}

/// The figures pgbench users grep, by the same expressions for either tool.
fn figures(stdout: &str) -> std::collections::BTreeMap<&'static str, String> {
    let patterns = [
        ("type", r"(?m)^transaction type: (.+)$"),
        ("scale", r"(?m)^scaling factor: (\d+)$"),
        ("mode", r"(?m)^query mode: (\w+)$"),
        ("clients", r"(?m)^number of clients: (\d+)$"),
        (
            "processed",
            r"(?m)^number of transactions actually processed: (\d+/\d+)$",
        ),
        (
            "failed",
            r"(?m)^number of failed transactions: (\d+) \(\d+\.\d{3}%\)$",
        ),
        ("latency", r"(?m)^latency average = (\d+\.\d{3}) ms$"),
        (
            "connect",
            r"(?m)^initial connection time = (\d+\.\d{3}) ms$",
        ),
        (
            "tps",
            r"(?m)^tps = (\d+\.\d{6}) \(without initial connection time\)$",
        ),
    ];
    patterns
        .iter()
        .map(|(k, p)| {
            let re = regex::Regex::new(p).unwrap();
            let v = re
                .captures(stdout)
                .unwrap_or_else(|| panic!("no {k} ({p}) in\n{stdout}"))[1]
                .to_string();
            (*k, v)
        })
        .collect()
}

#[test]
fn through_a_pgbench_link_the_command_line_and_output_are_pgbenchs() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let url = server.url.clone();
    let ours = linked(&s.path(""));
    let port = server.port.to_string();
    let conn = ["-h", "127.0.0.1", "-p", port.as_str(), "-U", "sbtest"];
    // -i through the link: pgbench's tables, its steps on stderr.
    let init = Command::new(&ours)
        .args(conn)
        .args(["-i", "-s", "2", "sbtest"])
        .current_dir(s.path(""))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&init.stderr);
    assert!(init.status.success(), "{err}");
    for step in [
        "dropping old tables...",
        "creating tables...",
        "vacuuming...",
        "creating primary keys...",
    ] {
        assert!(err.lines().any(|l| l == step), "{step} not in\n{err}");
    }
    assert_eq!(query(&url, "SELECT count(*) FROM pgbench_branches"), 2);
    // The same run by both, read by the same expressions.
    let args = ["-c", "2", "-j", "2", "-t", "20", "-P", "1"];
    let theirs = pgbench(server.port, &args);
    // The results file only where DBSWEEP_RESULTS_DIR asks; nothing in the working directory.
    let results_dir = s.path("results");
    std::fs::create_dir(&results_dir).unwrap();
    let mine = Command::new(&ours)
        .args(conn)
        .args(args)
        .arg("sbtest")
        .env("DBSWEEP_RESULTS_DIR", &results_dir)
        .current_dir(s.path(""))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&mine.stdout).to_string();
    assert!(
        mine.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&mine.stderr)
    );
    let (a, b) = (figures(&theirs), figures(&out));
    for k in ["type", "scale", "mode", "clients", "processed", "failed"] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert_eq!(b["processed"], "40/40");
    // pgbench truncated the history first (no -n), and each transaction added a row.
    assert_eq!(query(&url, "SELECT count(*) FROM pgbench_history"), 40);
    let progress = regex::Regex::new(
        r"^progress: \d+\.\d s, \d+\.\d tps, lat \d+\.\d{3} ms stddev \d+\.\d{3}, \d+ failed$",
    )
    .unwrap();
    let stderr = String::from_utf8_lossy(&mine.stderr);
    assert!(
        stderr
            .lines()
            .filter(|l| l.starts_with("progress:"))
            .all(|l| progress.is_match(l)),
        "{stderr}"
    );
    // Nothing added to stdout, whose last line stays pgbench's ("tps = ..."), nor to stderr;
    // the results file is in the directory asked. (The version line is pgbench's first line
    // too: "pgbench (15.18 ...)", "pgbench (dbsweep ...)".)
    assert!(
        theirs.starts_with("pgbench (") && out.starts_with("pgbench (dbsweep "),
        "{out}"
    );
    let added: Vec<&str> = out
        .lines()
        .skip(1)
        .filter(|l| {
            !theirs
                .lines()
                .any(|t| t.split([':', '=']).next() == l.split([':', '=']).next())
        })
        .collect();
    assert!(added.is_empty(), "{added:?}");
    assert!(out.lines().last().unwrap().starts_with("tps = "), "{out}");
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("progress:") || l == "starting vacuum...end."),
        "{stderr}"
    );
    let files: Vec<_> = std::fs::read_dir(&results_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.starts_with("dbsweep-pgbench-") && name.ends_with(".json"),
        "{name}"
    );
    let r = crate::util::read_json(&files[0]);
    assert_eq!(r["events"], 40);
    // Without it: no file anywhere in the working directory, an empty stderr (-P and the
    // vacuum not asked for).
    let quiet = Command::new(&ours)
        .args(conn)
        .args(["-n", "-c", "2", "-j", "4", "-t", "5", "sbtest"])
        .env_remove("DBSWEEP_RESULTS_DIR")
        .current_dir(s.path(""))
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    // -j above -c: pgbench lowers the threads without a word.
    assert!(
        String::from_utf8_lossy(&quiet.stdout).contains("number of threads: 2\n"),
        "{}",
        String::from_utf8_lossy(&quiet.stdout)
    );
    let left: Vec<_> = std::fs::read_dir(s.path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".json") || n.ends_with(".db"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A bad option: pgbench's exit code and lines (getopt's complaint, pgbench's hint).
    let bad = Command::new(&ours).arg("--nosuch").output().unwrap();
    let real = Command::new(PGBENCH).arg("--nosuch").output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(real.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    let want = String::from_utf8_lossy(&real.stderr).replacen(PGBENCH, "pgbench", 1);
    assert_eq!(err, want);
}

/// Runs `args` through the pgbench link in `dir` on `port`; its stdout.
fn ours(dir: &std::path::Path, link: &std::path::Path, port: u16, args: &[&str]) -> String {
    let out = Command::new(link)
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "sbtest"])
        .args(args)
        .arg("sbtest")
        .current_dir(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The lines of a summary that match `re`, with every number in them blanked.
fn shape(stdout: &str, re: &str) -> Vec<String> {
    let re = regex::Regex::new(re).unwrap();
    let num = regex::Regex::new(r"\d+\.\d+").unwrap();
    stdout
        .lines()
        .filter(|l| re.is_match(l))
        .map(|l| num.replace_all(l, "N").into_owned())
        .collect()
}

#[test]
fn t_counts_per_client_gset_and_per_command_reports_as_pgbenchs() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let url = server.url.clone();
    let link = linked(&s.path(""));
    let dir = s.path("");
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    target
        .connect()
        .unwrap()
        .batch(
            "CREATE TABLE pgb_c (tool int, client int, seven int, m int, last int);\
             CREATE TABLE pgb_w (tool int)",
        )
        .unwrap();
    // Client 0 is slow: -t still runs 5 transactions on each client, not 10 in all.
    let script = s.path("t.sql");
    std::fs::write(
        &script,
        "\\if :client_id = 0\n\
         \\sleep 20 ms\n\
         \\endif\n\
         SELECT 7 AS seven, 40 + :client_id AS n \\gset p_\n\
         \\set m :p_n * 2\n\
         SELECT x AS last FROM generate_series(1, 3) x;\n\
         \\aset\n\
         INSERT INTO :tbl VALUES (:tool, :client_id, :p_seven, :m, :last);\n",
    )
    .unwrap();
    let f = script.to_str().unwrap();
    let args = |tool: &'static str| {
        vec![
            "-n",
            "-c",
            "2",
            "-j",
            "2",
            "-t",
            "5",
            "-r",
            "-D",
            "tbl=pgb_c",
            "-D",
            tool,
            "-f",
            f,
        ]
    };
    let theirs = pgbench(server.port, &args("tool=1"));
    let mine = ours(&dir, &link, server.port, &args("tool=2"));
    for tool in [1, 2] {
        for client in [0, 1] {
            assert_eq!(
                query(
                    &url,
                    &format!(
                        "SELECT count(*) FROM pgb_c WHERE tool = {tool} AND client = {client} \
                         AND seven = 7 AND m = 2 * (40 + {client}) AND last = 3"
                    )
                ),
                5,
                "tool {tool} client {client}"
            );
        }
    }
    // -r: each command's line, the same lines for both tools.
    let per_command = r"^\s+\d+\.\d{3}\s+\d+\s+\S";
    let (a, b) = (shape(&theirs, per_command), shape(&mine, per_command));
    assert_eq!(a.len(), 7, "{theirs}");
    assert_eq!(a, b, "{mine}");
    assert!(mine.contains("statement latencies in milliseconds and failures:"));
    // The slow client's \sleep is in its command's latency: over 20 ms / 2 on average.
    let sleep = regex::Regex::new(r"(?m)^\s+(\d+\.\d{3})\s+\d+\s+\\sleep 20 ms$").unwrap();
    let ms: f64 = sleep.captures(&mine).expect("the sleep's line")[1]
        .parse()
        .unwrap();
    assert!(ms >= 9.0, "{ms} ms\n{mine}");
    // Several scripts, weighted: pgbench's sections, line for line.
    let one = s.path("one.sql");
    std::fs::write(&one, "INSERT INTO pgb_w VALUES (:tool);\n").unwrap();
    let (one, two) = (
        format!("{}@3", one.to_str().unwrap()),
        format!("{}@1", one.to_str().unwrap()),
    );
    let args = |tool: &'static str| {
        vec![
            "-n",
            "-t",
            "40",
            "-D",
            tool,
            "-f",
            one.as_str(),
            "-f",
            two.as_str(),
        ]
    };
    let theirs = pgbench(server.port, &args("tool=1"));
    let mine = ours(&dir, &link, server.port, &args("tool=2"));
    let sections = r"^(SQL script \d|transaction type| - weight| - number of failed| - latency)";
    let (a, b) = (shape(&theirs, sections), shape(&mine, sections));
    assert_eq!(a.len(), 11, "{theirs}");
    assert_eq!(a, b, "{mine}");
    let counts = regex::Regex::new(r"(?m)^ - (\d+) transactions \(").unwrap();
    let n: u64 = counts
        .captures_iter(&mine)
        .map(|c| c[1].parse::<u64>().unwrap())
        .sum();
    assert_eq!(n, 40, "{mine}");
    assert_eq!(query(&url, "SELECT count(*) FROM pgb_w WHERE tool = 2"), 40);
}

/// The first number a line matching `re` holds, in `stdout`.
fn figure(stdout: &str, re: &str) -> u64 {
    let re = regex::Regex::new(re).unwrap();
    re.captures(stdout)
        .unwrap_or_else(|| panic!("no {re} in\n{stdout}"))[1]
        .parse()
        .unwrap()
}

#[test]
fn latency_limit_counts_late_and_skipped_and_max_tries_fails_or_retries_as_pgbench() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let url = server.url.clone();
    let link = linked(&s.path(""));
    let dir = s.path("");
    // Every transaction sleeps 5 ms: over a 2 ms limit, and at 400/s on one client the
    // schedule falls behind, so that turns are skipped.
    let slow = s.path("slow.sql");
    std::fs::write(&slow, "\\sleep 5 ms\nSELECT 1;\n").unwrap();
    let args = [
        "-n",
        "-c",
        "1",
        "-T",
        "2",
        "-R",
        "400",
        "--latency-limit",
        "2",
        "-f",
        slow.to_str().unwrap(),
    ];
    let theirs = pgbench(server.port, &args);
    let mine = ours(&dir, &link, server.port, &args);
    let lines = r"^(number of transactions skipped|number of transactions above|rate limit schedule lag|latency stddev)";
    let (a, b) = (shape(&theirs, lines), shape(&mine, lines));
    let digits = regex::Regex::new(r"\d+").unwrap();
    let blank = |v: Vec<String>| -> Vec<String> {
        v.iter()
            .map(|l| digits.replace_all(l, "N").into_owned())
            .collect()
    };
    assert_eq!(a.len(), 4, "{theirs}");
    assert_eq!(blank(a), blank(b), "{mine}");
    let processed = figure(
        &mine,
        r"(?m)^number of transactions actually processed: (\d+)",
    );
    let skipped = figure(&mine, r"(?m)^number of transactions skipped: (\d+)");
    let late = figure(&mine, r"(?m)latency limit: (\d+)/");
    assert!(processed > 0 && skipped > 0, "{mine}");
    assert_eq!(
        late, processed,
        "every transaction sleeps past the limit\n{mine}"
    );
    // Skipped turns are turns of the schedule: with the processed ones, about 400/s.
    assert!(
        (600..=1000).contains(&(processed + skipped)),
        "{processed} + {skipped}\n{mine}"
    );
    // Serialization failures: with one try each is a failed transaction (and -t counts it);
    // with more, they are retried.
    let race = race_script(&url, &s, "pgb_s");
    let race = race.as_str();
    let mine = ours(
        &dir,
        &link,
        server.port,
        &["-n", "-c", "4", "-j", "4", "-t", "25", "-f", race],
    );
    let processed = figure(
        &mine,
        r"(?m)^number of transactions actually processed: (\d+)/100$",
    );
    let failed = figure(&mine, r"(?m)^number of failed transactions: (\d+) \(");
    assert!(failed > 0, "{mine}");
    assert_eq!(processed + failed, 100, "{mine}");
    assert_eq!(query(&url, "SELECT v FROM pgb_s"), processed as i64);
    let args = [
        "-n",
        "-c",
        "4",
        "-j",
        "4",
        "-t",
        "25",
        "--max-tries",
        "1000",
        "-f",
        race,
    ];
    let theirs = pgbench(server.port, &args);
    let mine = ours(&dir, &link, server.port, &args);
    let lines = r"^(maximum number of tries|number of transactions retried|total number of retries|number of failed)";
    let (a, b) = (shape(&theirs, lines), shape(&mine, lines));
    assert_eq!(a.len(), 4, "{theirs}");
    assert_eq!(blank(a), blank(b), "{mine}");
    assert!(
        mine.contains("number of transactions actually processed: 100/100"),
        "{mine}"
    );
    let retried = figure(&mine, r"(?m)^number of transactions retried: (\d+) \(");
    assert!(retried > 0, "{mine}");
    assert_eq!(query(&url, "SELECT v FROM pgb_s"), processed as i64 + 200);
}

#[test]
fn connect_per_transaction_opens_a_connection_for_each_as_pgbench() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let url = server.url.clone();
    let link = linked(&s.path(""));
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    target
        .connect()
        .unwrap()
        .batch("CREATE TABLE pgb_p (tool int, pid int, n int)")
        .unwrap();
    // A variable lives as long as its client, across connections: 1 to 10 on each.
    let script = s.path("pid.sql");
    std::fs::write(
        &script,
        "\\set n :n + 1\nINSERT INTO pgb_p VALUES (:tool, pg_backend_pid(), :n);\n",
    )
    .unwrap();
    let f = script.to_str().unwrap();
    let args = |tool: &'static str| {
        [
            "-n", "-C", "-c", "2", "-j", "2", "-t", "10", "-D", "n=0", "-D", tool, "-f", f,
        ]
    };
    let theirs = pgbench(server.port, &args("tool=1"));
    let mine = ours(&s.path(""), &link, server.port, &args("tool=2"));
    // Every transaction on a connection of its own: 20 backends each.
    for tool in [1, 2] {
        assert_eq!(
            query(
                &url,
                &format!("SELECT count(DISTINCT pid) FROM pgb_p WHERE tool = {tool}")
            ),
            20,
            "tool {tool}"
        );
        assert_eq!(
            query(
                &url,
                &format!("SELECT count(DISTINCT n) * 100 + max(n) FROM pgb_p WHERE tool = {tool}")
            ),
            1010,
            "tool {tool}"
        );
    }
    let lines = r"^(average connection time|tps = .*reconnection|initial connection)";
    let (a, b) = (shape(&theirs, lines), shape(&mine, lines));
    assert_eq!(a.len(), 2, "{theirs}");
    assert_eq!(a, b, "{mine}");
}

/// The lines of every file in `dir` whose name starts with `prefix`, by file name (the pid
/// replaced by PID).
fn logs(dir: &std::path::Path, prefix: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let pid = regex::Regex::new(r"\.\d+").unwrap();
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(prefix).then(|| {
                let text = std::fs::read_to_string(e.path()).unwrap();
                (
                    pid.replacen(&name, 1, ".PID").into_owned(),
                    text.lines().map(String::from).collect(),
                )
            })
        })
        .collect()
}

#[test]
fn transaction_logs_are_written_in_pgbenchs_files_and_columns() {
    let s = Scratch::new();
    let server = start(ServerKind::Postgres);
    let link = linked(&s.path(""));
    let (theirs_dir, mine_dir) = (s.path("theirs"), s.path("mine"));
    std::fs::create_dir(&theirs_dir).unwrap();
    std::fs::create_dir(&mine_dir).unwrap();
    let script = s.path("one.sql");
    std::fs::write(&script, "\\set x random(1, 10)\nSELECT :x;\n").unwrap();
    let f = script.to_str().unwrap().to_string();
    let port = server.port.to_string();
    let both = |args: &[&str]| {
        let mut out = Vec::new();
        for (prog, dir) in [
            (std::path::PathBuf::from(PGBENCH), &theirs_dir),
            (link.clone(), &mine_dir),
        ] {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                std::fs::remove_file(e.path()).unwrap();
            }
            // The link's results file beside its logs, where DBSWEEP_RESULTS_DIR asks.
            let o = Command::new(prog)
                .args(["-h", "127.0.0.1", "-p", &port, "-U", "sbtest"])
                .args(args)
                .arg("sbtest")
                .env("DBSWEEP_RESULTS_DIR", dir)
                .current_dir(dir)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            out.push(logs(
                dir,
                if args.contains(&"--log-prefix") {
                    "tx"
                } else {
                    "pgbench_log"
                },
            ));
        }
        (out.remove(0), out.remove(0))
    };
    let columns = |files: &std::collections::BTreeMap<String, Vec<String>>| {
        files
            .iter()
            .map(|(name, lines)| {
                let widths: std::collections::BTreeSet<usize> =
                    lines.iter().map(|l| l.split(' ').count()).collect();
                (name.clone(), lines.len(), widths)
            })
            .collect::<Vec<_>>()
    };
    // A line per transaction, a file per job, each client's lines in its job's file.
    let (a, b) = both(&["-n", "-l", "-c", "2", "-j", "2", "-t", "10", "-f", &f]);
    assert_eq!(a.len(), 2, "{a:?}");
    assert_eq!(columns(&a), columns(&b));
    for (name, client) in [("pgbench_log.PID", "0"), ("pgbench_log.PID.1", "1")] {
        assert!(
            b[name].iter().all(|l| l.split(' ').next() == Some(client)),
            "{b:?}"
        );
    }
    // Under -R with --max-tries 2, the lag and retries columns; a prefix of one's own.
    let (a, b) = both(&[
        "-n",
        "-l",
        "--log-prefix",
        "tx",
        "-R",
        "500",
        "--max-tries",
        "2",
        "-t",
        "20",
        "-f",
        &f,
    ]);
    assert_eq!(columns(&a), columns(&b));
    // Aggregated by the second: as many columns, transactions adding up.
    let (a, b) = both(&["-n", "-l", "--aggregate-interval", "1", "-T", "2", "-f", &f]);
    let widths = |m: &std::collections::BTreeMap<String, Vec<String>>| {
        columns(m).into_iter().map(|c| c.2).collect::<Vec<_>>()
    };
    assert_eq!(widths(&a), widths(&b), "{a:?}\n{b:?}");
    let total: u64 = b
        .values()
        .flatten()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    let results: Vec<_> = std::fs::read_dir(&mine_dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .collect();
    assert_eq!(results.len(), 1);
    let r = crate::util::read_json(&results[0].path());
    assert_eq!(total, r["events"].as_u64().unwrap());
    // Options pgbench refuses together, refused alike.
    let out = Command::new(&link)
        .args(["--sampling-rate", "0.5", "-t", "1", "sbtest"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("allowed only when logging transactions (-l)")
    );
}

/// A table `table` of one row on `url`, and a script (its path) whose transactions read the row
/// and update it in REPEATABLE READ: concurrent clients fail with serialization failures.
fn race_script(url: &str, s: &Scratch, table: &str) -> String {
    let target = dbsweep::db::open(url, Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    conn.batch(&format!(
        "CREATE TABLE {table} (id int PRIMARY KEY, v int); INSERT INTO {table} VALUES (1, 0)"
    ))
    .unwrap();
    let race = s.path(&format!("{table}.sql"));
    std::fs::write(
        &race,
        format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ;\n\
             SELECT v FROM {table} WHERE id = 1;\n\
             \\sleep 2 ms\n\
             UPDATE {table} SET v = v + 1 WHERE id = 1;\n\
             END;\n"
        ),
    )
    .unwrap();
    race.to_str().unwrap().to_string()
}

/// Both tools' stdout and stderr for `args` on `port`, run in `dir` (ours through `link`).
fn both_outputs(
    dir: &std::path::Path,
    link: &std::path::Path,
    port: u16,
    args: &[&str],
) -> [(String, String); 2] {
    [std::path::Path::new(PGBENCH), link].map(|bin| {
        let out = Command::new(bin)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "sbtest"])
            .args(args)
            .arg("sbtest")
            .current_dir(dir)
            .output()
            .unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        );
        assert!(out.status.success(), "{bin:?} {args:?}: {o}{e}");
        (o, e)
    })
}

#[test]
fn failures_detailed_and_verbose_errors_say_what_pgbench_says() {
    let (s, server, dir, link) = pg_with_link();
    let race = race_script(&server.url, &s, "pgb_f");
    let race = race.as_str();
    let verbose = regex::Regex::new(
        r"^pgbench: client \d+ (got an error in command 3 \(SQL\) of script 0; ERROR:  could not serialize access due to concurrent update|ends the failed transaction \(try \d+/\d+\)|repeats the transaction after the error \(try \d+/\d+\))$",
    )
    .unwrap();
    let digits = regex::Regex::new(r"\d+").unwrap();
    let summary = r"^(maximum number of tries|number of (failed|serialization|deadlock|transactions retried)|total number of retries|statement latencies)";
    for tries in ["1", "3"] {
        let args = [
            "-n",
            "-c",
            "2",
            "-j",
            "2",
            "-t",
            "20",
            "-r",
            "--failures-detailed",
            "--verbose-errors",
            "--max-tries",
            tries,
            "-f",
            race,
        ];
        let [(theirs, their_err), (mine, my_err)] = both_outputs(&dir, &link, server.port, &args);
        let blank = |t: &str| -> Vec<String> {
            shape(t, summary)
                .iter()
                .map(|l| digits.replace_all(l, "N").into_owned())
                .collect()
        };
        assert_eq!(blank(&mine), blank(&theirs), "{mine}\n---\n{theirs}");
        let failed = figure(&mine, r"(?m)^number of failed transactions: (\d+) \(");
        let serialization = figure(&mine, r"(?m)^number of serialization failures: (\d+) \(");
        assert!(failed > 0, "{mine}");
        assert_eq!(serialization, failed, "{mine}");
        assert!(
            mine.contains("number of deadlock failures: 0 (0.000%)"),
            "{mine}"
        );
        // -r: the UPDATE's failures (and retries) are the run's.
        let update = mine
            .lines()
            .find(|l| l.ends_with("UPDATE pgb_f SET v = v + 1 WHERE id = 1;"))
            .unwrap_or_else(|| panic!("{mine}"));
        let cols: Vec<u64> = update
            .split_whitespace()
            .skip(1)
            .map_while(|w| w.parse().ok())
            .collect();
        assert_eq!(cols[0], failed, "{update}");
        let retries = if tries == "1" {
            0
        } else {
            figure(&mine, r"(?m)^total number of retries: (\d+)")
        };
        if tries != "1" {
            assert_eq!(cols[1], retries, "{update}");
        }
        // --verbose-errors: pgbench's lines, an error line for every failed or repeated try.
        for (who, err) in [("pgbench", &their_err), ("dbsweep", &my_err)] {
            let lines: Vec<&str> = err
                .lines()
                .filter(|l| l.starts_with("pgbench: client"))
                .collect();
            assert!(!lines.is_empty(), "{who}: {err}");
            for l in &lines {
                assert!(verbose.is_match(l), "{who}: {l}");
            }
        }
        let count = |what: &str| my_err.lines().filter(|l| l.contains(what)).count() as u64;
        assert_eq!(count("ends the failed transaction"), failed, "{my_err}");
        assert_eq!(count("repeats the transaction"), retries, "{my_err}");
        assert_eq!(
            count("got an error in command 3"),
            failed + retries,
            "{my_err}"
        );
    }
    // -l: a failed transaction's time is its error's name.
    let log = s.path("log");
    std::fs::create_dir_all(&log).unwrap();
    let args = [
        "-n",
        "-c",
        "2",
        "-j",
        "2",
        "-t",
        "20",
        "-l",
        "--failures-detailed",
        "-f",
        race,
    ];
    let mine = ours(&log, &link, server.port, &args);
    let failed = figure(&mine, r"(?m)^number of failed transactions: (\d+) \(");
    let named: usize = logs(&log, "pgbench_log")
        .values()
        .flatten()
        .filter(|l| l.split(' ').nth(2) == Some("serialization"))
        .count();
    assert_eq!(named as u64, failed, "{mine}");
}

/// Each partition of pgbench_accounts with its bounds, in order of name.
fn partitions(url: &str) -> Vec<Vec<Option<String>>> {
    let target = dbsweep::db::open(url, Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    conn.query_rows(
        "SELECT c.relname::text, pg_get_expr(c.relpartbound, c.oid), c.reloptions::text \
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = 'pgbench_accounts'::regclass ORDER BY c.relname",
        3,
    )
    .unwrap()
}

#[test]
fn partitioned_accounts_are_made_and_named_as_pgbench_does() {
    let (_s, server, dir, link) = pg_with_link();
    let url = server.url.clone();
    let port = server.port.to_string();
    let init = |bin: &std::path::Path, extra: &[&str]| {
        let out = Command::new(bin)
            .args(["-h", "127.0.0.1", "-p", &port, "-U", "sbtest"])
            .args(["-i", "-q", "-s", "2", "-F", "90"])
            .args(extra)
            .arg("sbtest")
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{bin:?} {extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    for method in ["range", "hash"] {
        let extra = ["--partitions", "3", "--partition-method", method];
        init(std::path::Path::new(PGBENCH), &extra);
        let theirs = partitions(&url);
        assert_eq!(theirs.len(), 3, "{theirs:?}");
        let said = init(&link, &extra);
        assert!(said.contains("creating 3 partitions..."), "{said}");
        assert_eq!(partitions(&url), theirs, "{method}");
        assert_eq!(
            query(&url, "SELECT count(*) FROM pgbench_accounts"),
            200_000
        );
        // Both tools name the partitioning in their summary, and run on it.
        let args = ["-n", "-b", "simple-update", "-c", "2", "-t", "20"];
        let lines = r"^(partition method|partitions|number of transactions actually)";
        let theirs = shape(&pgbench(server.port, &args), lines);
        assert_eq!(
            theirs,
            [
                format!("partition method: {method}"),
                "partitions: 3".to_string(),
                "number of transactions actually processed: 40/40".to_string()
            ]
        );
        assert_eq!(shape(&ours(&dir, &link, server.port, &args), lines), theirs);
    }
    // A method without partitions: pgbench's line and exit code.
    let bad = Command::new(&link)
        .args(["-i", "--partition-method", "hash", "sbtest"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--partition-method requires greater than zero --partitions"),
        "{err}"
    );
}

/// A transaction still sleeping when -T ends finishes its sleep and counts, as in pgbench:
/// every counted one slept its whole time.
#[test]
fn a_sleep_at_the_end_of_the_run_finishes_as_in_pgbench() {
    let (s, server, dir, link) = pg_with_link();
    let sleepy = s.path("sleepy.sql");
    std::fs::write(&sleepy, "\\sleep 300 ms\nSELECT 1;\n").unwrap();
    let args = ["-n", "-c", "1", "-T", "1", "-f", sleepy.to_str().unwrap()];
    let theirs = pgbench(server.port, &args);
    let mine = ours(&dir, &link, server.port, &args);
    let processed = r"(?m)^number of transactions actually processed: (\d+)";
    // 0, 0.3, 0.6, and 0.9 s, the last one ending past -T (on a loaded machine each takes a
    // little longer, and three fit).
    for out in [&theirs, &mine] {
        assert!((3..=4).contains(&figure(out, processed)), "{out}");
    }
    let avg = regex::Regex::new(r"(?m)^latency average = ([\d.]+) ms")
        .unwrap()
        .captures(&mine)
        .and_then(|c| c[1].parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{mine}"));
    assert!(avg >= 300.0, "{mine}");
    // The last transaction, still sleeping at -T's end, counted: the transactions' time is
    // past the second, and so is the run's (tps below the count over 1 s).
    let n = figure(&mine, processed) as f64;
    assert!(n * avg >= 1000.0, "{mine}");
    let tps: f64 = regex::Regex::new(r"(?m)^tps = ([\d.]+) ")
        .unwrap()
        .captures(&mine)
        .and_then(|c| c[1].parse().ok())
        .unwrap_or_else(|| panic!("{mine}"));
    assert!(tps < n, "{mine}");
}

/// `--show-script` and `-b list` print pgbench's text on stderr and exit 0, with no server.
#[test]
fn show_script_and_the_builtin_list_print_what_pgbench_prints() {
    let s = Scratch::new();
    let link = linked(&s.path(""));
    let cases: [&[&str]; 4] = [
        &["--show-script=tpcb"],
        &["--show-script", "select"],
        &["--show-script=simple-update", "-c", "2"],
        &["-b", "list"],
    ];
    for args in cases {
        let [theirs, mine] = [std::path::Path::new(PGBENCH), &link]
            .map(|bin| Command::new(bin).args(args).output().unwrap());
        assert_eq!(theirs.status.code(), Some(0), "{args:?}");
        assert_eq!(mine.status.code(), Some(0), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&mine.stderr),
            String::from_utf8_lossy(&theirs.stderr),
            "{args:?}"
        );
        assert_eq!(mine.stdout, theirs.stdout, "{args:?}");
    }
    // An ambiguous name: an error and exit 1 from both.
    for bin in [std::path::Path::new(PGBENCH), &link] {
        let out = Command::new(bin).arg("--show-script=s").output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{bin:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("ambiguous"));
    }
}

/// `-P`'s lines as pgbench prints them: the one at -T's end when it falls on a tick, Unix
/// times under --progress-timestamp, and lag, skipped, retried and retries where pgbench adds
/// them.
#[test]
fn progress_lines_are_pgbenchs_to_the_last_one() {
    let (_s, server, dir, link) = pg_with_link();
    pgbench(server.port, &["-i", "-q", "-s", "1"]);
    let line = regex::Regex::new(
        r"^progress: ([\d.]+) s, \d+\.\d tps, lat \d+\.\d{3} ms stddev \d+\.\d{3}, \d+ failed(, lag \d+\.\d{3} ms)?(, \d+ skipped)?(, \d+ retried, \d+ retries)?$",
    )
    .unwrap();
    let progress = |stderr: &str| -> Vec<(f64, String)> {
        stderr
            .lines()
            .filter(|l| l.starts_with("progress:"))
            .map(|l| {
                let c = line.captures(l).unwrap_or_else(|| panic!("{l}"));
                let extras = (2..=4)
                    .map(|i| c.get(i).map_or("", |m| m.as_str()))
                    .collect::<Vec<_>>()
                    .join("");
                let blank = regex::Regex::new(r"\d+(\.\d+)?").unwrap();
                (
                    c[1].parse().unwrap(),
                    blank.replace_all(&extras, "N").into(),
                )
            })
            .collect()
    };
    let epoch = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    // Closed loop, -T on a tick: a line at each second, the last at -T.
    let args = ["-n", "-S", "-c", "2", "-P", "1", "-T", "2"];
    for (_, err) in both_outputs(&dir, &link, server.port, &args) {
        let times: Vec<f64> = progress(&err).into_iter().map(|(t, _)| t).collect();
        assert_eq!(times, [1.0, 2.0], "{err}");
    }
    // Unix times, within the run.
    let args = ["-n", "-S", "-P", "1", "-T", "2", "--progress-timestamp"];
    let before = epoch();
    let [(_, theirs), (_, mine)] = both_outputs(&dir, &link, server.port, &args);
    let after = epoch();
    for err in [&theirs, &mine] {
        let lines = progress(err);
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines.iter().all(|(t, _)| *t > before && *t < after),
            "{before} {after} {err}"
        );
    }
    // Paced, with a latency limit and retries: the same extra fields in both.
    let args = [
        "-n",
        "-S",
        "-P",
        "1",
        "-T",
        "2",
        "-R",
        "200",
        "-L",
        "50",
        "--max-tries",
        "2",
    ];
    let [(_, theirs), (_, mine)] = both_outputs(&dir, &link, server.port, &args);
    let fields = |err: &str| -> Vec<String> { progress(err).into_iter().map(|(_, f)| f).collect() };
    assert_eq!(
        fields(&theirs).first().map(String::as_str),
        Some(", lag N ms, N skipped, N retried, N retries"),
        "{theirs}"
    );
    assert_eq!(fields(&mine).first(), fields(&theirs).first(), "{mine}");
}

/// `--tablespace` and `--index-tablespace` put the tables and their primary keys where
/// pgbench puts them.
#[test]
fn tablespaces_take_the_tables_and_keys_as_in_pgbench() {
    use std::os::unix::fs::MetadataExt;
    let (_s, server, dir, link) = pg_with_link();
    let url = server.url.clone();
    let owner = std::fs::metadata(&server.dir).unwrap();
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    for (name, sub) in [("t \"s\"", "ts1"), ("ts2", "ts2")] {
        let path = server.dir.join(sub);
        std::fs::create_dir(&path).unwrap();
        std::os::unix::fs::chown(&path, Some(owner.uid()), Some(owner.gid())).unwrap();
        conn.batch(&format!(
            "CREATE TABLESPACE \"{}\" LOCATION '{}'",
            name.replace('"', "\"\""),
            path.display()
        ))
        .unwrap();
    }
    let placed = |conn: &mut Box<dyn dbsweep::db::Conn>| {
        conn.query_rows(
            "SELECT tablename::text, tablespace::text FROM pg_tables WHERE tablename LIKE 'pgbench%' \
             UNION ALL SELECT indexname::text, tablespace::text FROM pg_indexes WHERE tablename LIKE 'pgbench%' \
             ORDER BY 1",
            2,
        )
        .unwrap()
    };
    let args = [
        "-i",
        "-q",
        "--tablespace",
        "t \"s\"",
        "--index-tablespace=ts2",
        "--partitions",
        "2",
    ];
    pgbench(server.port, &args);
    let theirs = placed(&mut conn);
    assert_eq!(theirs.len(), 11, "{theirs:?}");
    assert!(
        theirs
            .iter()
            .any(|r| r[0].as_deref() == Some("pgbench_tellers_pkey")
                && r[1].as_deref() == Some("ts2")),
        "{theirs:?}"
    );
    ours(&dir, &link, server.port, &args);
    assert_eq!(placed(&mut conn), theirs);
}

/// `\setshell` / `\shell`, `\;` compound commands with `\gset` (the last statement's row) and
/// `\aset` (every statement's), and pipelines: the rows and files pgbench's give.
#[test]
fn shell_compound_statements_and_pipelines_run_as_in_pgbench() {
    let (s, server, dir, link) = pg_with_link();
    let url = server.url.clone();
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    let mut conn = target.connect().unwrap();
    conn.batch("CREATE TABLE shelled (tool int, y int, b int, c int, d int, e int)")
        .unwrap();
    conn.batch("CREATE TABLE piped (tool int, n int)").unwrap();
    let shell = s.path("shell.sql");
    std::fs::write(
        &shell,
        "\\set x 5\n\
         \\setshell y echo :x\n\
         \\shell echo said :y ::lit >> :out\n\
         \\setshell z printf '  42  '\n\
         SELECT 1 AS a \\; SELECT :z + 1 AS b, 3 AS c \\gset\n\
         SELECT 10 AS d \\; SELECT 20 AS e\n\
         \\aset\n\
         INSERT INTO shelled VALUES (:tool, :y, :b, :c, :d, :e);\n",
    )
    .unwrap();
    let piped = s.path("piped.sql");
    std::fs::write(
        &piped,
        "\\startpipeline\n\
         INSERT INTO piped VALUES (:tool, 1);\n\
         \\set n 2\n\
         INSERT INTO piped VALUES (:tool, :n);\n\
         \\endpipeline\n",
    )
    .unwrap();
    let rows = |conn: &mut Box<dyn dbsweep::db::Conn>, sql: &str, cols| {
        conn.query_rows(sql, cols).unwrap()
    };
    for (tool, bin) in [("1", std::path::Path::new(PGBENCH)), ("2", &link)] {
        let out = dir.join(format!("said.{tool}"));
        let run = |args: &[&str]| {
            Command::new(bin)
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &server.port.to_string(),
                    "-U",
                    "sbtest",
                ])
                .args(["-n", "-D", &format!("tool={tool}")])
                .args(["-D", &format!("out={}", out.display())])
                .args(args)
                .arg("sbtest")
                .current_dir(&dir)
                .output()
                .unwrap()
        };
        let shelled = run(&["-t", "2", "-f", shell.to_str().unwrap()]);
        assert!(shelled.status.success(), "{bin:?}: {shelled:?}");
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "said 5 :lit\nsaid 5 :lit\n",
            "{bin:?}"
        );
        let pipelined = run(&["-t", "3", "-M", "extended", "-f", piped.to_str().unwrap()]);
        assert!(pipelined.status.success(), "{bin:?}: {pipelined:?}");
        // In the simple protocol a pipeline stops the run: exit 2 from both.
        let refused = run(&["-t", "1", "-M", "simple", "-f", piped.to_str().unwrap()]);
        assert_eq!(refused.status.code(), Some(2), "{bin:?}: {refused:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr)
                .contains("cannot use pipeline mode with the simple query protocol"),
            "{refused:?}"
        );
    }
    let per_tool = "SELECT tool::text, count(*)::text, min(y)::text, min(b)::text, min(c)::text, \
                    min(d)::text, min(e)::text FROM shelled GROUP BY tool ORDER BY tool";
    let got = rows(&mut conn, per_tool, 7);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0][1..], got[1][1..]);
    let want: Vec<Option<String>> = ["2", "5", "43", "3", "10", "20"]
        .iter()
        .map(|v| Some(v.to_string()))
        .collect();
    assert_eq!(got[0][1..], want[..]);
    let piped_rows =
        "SELECT tool::text, n::text, count(*)::text FROM piped GROUP BY tool, n ORDER BY 1, 2";
    let got = rows(&mut conn, piped_rows, 3);
    let want: Vec<Vec<Option<String>>> = [
        ["1", "1", "3"],
        ["1", "2", "3"],
        ["2", "1", "3"],
        ["2", "2", "3"],
    ]
    .iter()
    .map(|r| r.iter().map(|v| Some(v.to_string())).collect())
    .collect();
    assert_eq!(got, want);
    // `\syncpipeline` (pgbench 17's): what came before it commits even when what follows
    // fails; without it the pipeline is one transaction and nothing stays.
    for (tool, sync) in [(3, "\\syncpipeline\n"), (4, "")] {
        let f = s.path(&format!("sync{tool}.sql"));
        std::fs::write(
            &f,
            format!(
                "\\startpipeline\nINSERT INTO piped VALUES ({tool}, 1);\n{sync}INSERT INTO piped VALUES ({tool}, 2);\nSELECT 1/0;\n\\endpipeline\n"
            ),
        )
        .unwrap();
        let out = Command::new(&link)
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &server.port.to_string(),
                "-U",
                "sbtest",
            ])
            .args([
                "-n",
                "-t",
                "1",
                "-M",
                "prepared",
                "-f",
                f.to_str().unwrap(),
                "sbtest",
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("division by zero"),
            "{out:?}"
        );
    }
    let kept = rows(
        &mut conn,
        "SELECT tool::text, n::text FROM piped WHERE tool >= 3 ORDER BY 1, 2",
        2,
    );
    assert_eq!(kept, vec![vec![Some("3".into()), Some("1".into())]]);
}

/// Several scripts under --failures-detailed and --max-tries: each script's section splits
/// its failures and retries as pgbench's does, and a retry runs the script that failed (the
/// read-only one never fails, so it is never retried).
#[test]
fn each_scripts_section_splits_its_failures_and_retries_as_pgbench() {
    let (s, server, dir, link) = pg_with_link();
    pgbench(server.port, &["-i", "-q", "-s", "1"]);
    let race = format!("{}@2", race_script(&server.url, &s, "pgb_split"));
    let args = [
        "-n",
        "-c",
        "4",
        "-T",
        "2",
        "--max-tries",
        "3",
        "--failures-detailed",
        "-f",
        &race,
        "-b",
        "select-only@1",
    ];
    let section = r"^( - |SQL script)";
    let [(theirs, _), (mine, _)] = both_outputs(&dir, &link, server.port, &args);
    let digits = regex::Regex::new(r"\d+(\.\d+)?").unwrap();
    let blank = |out: &str| -> Vec<String> {
        shape(out, section)
            .iter()
            .map(|l| digits.replace_all(l, "N").into_owned())
            .collect()
    };
    assert_eq!(blank(&mine), blank(&theirs), "{mine}\n{theirs}");
    let of = |out: &str, script: u64, what: &str| -> u64 {
        let text = out
            .split("SQL script ")
            .nth(script as usize)
            .unwrap_or_else(|| panic!("{out}"));
        figure(text, &format!(r"(?m)^ - {what}: (\d+)"))
    };
    for out in [&theirs, &mine] {
        let failed = of(out, 1, "number of failed transactions");
        assert!(failed > 0, "{out}");
        assert_eq!(of(out, 1, "number of serialization failures"), failed);
        assert!(of(out, 1, "number of transactions retried") > 0, "{out}");
        for what in [
            "number of failed transactions",
            "number of transactions retried",
            "total number of retries",
        ] {
            assert_eq!(of(out, 2, what), 0, "{what}: {out}");
        }
    }
}

/// `\gset` and `\aset` on MariaDB: the MySQL client keeps a text result's column names.
#[test]
fn gset_and_aset_take_mariadbs_columns() {
    let s = Scratch::new();
    let server = start(ServerKind::Mariadb);
    let url = server.url.clone();
    let target = dbsweep::db::open(&url, Default::default()).unwrap();
    target
        .connect()
        .unwrap()
        .batch("CREATE TABLE pgb_gs (a int, b int, c int, t varchar(8))")
        .unwrap();
    let script = s.path("gset.sql");
    std::fs::write(
        &script,
        "\\set x random(1, 5)\n\
         SELECT :x * 10 AS a, :x + 1 AS b, 'tbl' AS t \\gset p_\n\
         SELECT 1 AS c UNION ALL SELECT :x AS c\n\
         \\aset\n\
         INSERT INTO pgb_gs VALUES (:p_a, :p_b, :c, ':p_t');\n",
    )
    .unwrap();
    Line::new(&[
        "run",
        "pgbench",
        "--script",
        script.to_str().unwrap(),
        "--events",
        "20",
        "--time",
        "0",
    ])
    .target(&url)
    .quiet()
    .assert()
    .success();
    assert_eq!(query(&url, "SELECT count(*) FROM pgb_gs"), 20);
    // Each row's values all come from the one draw of x (\aset: the last row's c).
    assert_eq!(
        query(
            &url,
            "SELECT count(*) FROM pgb_gs WHERE a = c * 10 AND b = c + 1 AND t = ':p_t'"
        ),
        20
    );
}

/// `-v` vacuums pgbench_accounts too before the run, as pgbench does; without it only the
/// small tables are.
#[test]
fn vacuum_all_vacuums_the_accounts_too() {
    let (_s, server, dir, link) = pg_with_link();
    pgbench(server.port, &["-i", "-q", "-s", "1", "-I", "dtgp"]);
    let vacuumed = |t: &str| {
        query(
            &server.url,
            &format!(
                "SELECT count(*) FROM pg_stat_user_tables WHERE relname = '{t}' AND last_vacuum IS NOT NULL"
            ),
        )
    };
    ours(&dir, &link, server.port, &["-S", "-t", "1"]);
    assert_eq!(vacuumed("pgbench_branches"), 1);
    assert_eq!(vacuumed("pgbench_accounts"), 0);
    let out = Command::new(&link)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
            "-U",
            "sbtest",
        ])
        .args(["-v", "-S", "-t", "1", "sbtest"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("starting vacuum pgbench_accounts...end."),
        "{out:?}"
    );
    assert_eq!(vacuumed("pgbench_accounts"), 1);
}

#[test]
fn the_scale_is_read_from_the_tables_whenever_a_builtin_runs_also_beside_a_file() {
    let (s, server, dir, link) = pg_with_link();
    pgbench(server.port, &["-i", "-s", "2", "-q"]);
    let url = server.url.clone();
    dbsweep::db::open(&url, Default::default())
        .unwrap()
        .connect()
        .unwrap()
        .batch("CREATE TABLE seen_scale (v int)")
        .unwrap();
    let script = s.path("mine.sql");
    std::fs::write(&script, "INSERT INTO seen_scale VALUES (:scale);\n").unwrap();
    let args = [
        "-n",
        "-t",
        "5",
        "-b",
        "select-only",
        "-f",
        script.to_str().unwrap(),
    ];
    let [(theirs, _), (mine, mine_err)] = both_outputs(&dir, &link, server.port, &args);
    assert_eq!(
        figures(&mine).get("scale"),
        figures(&theirs).get("scale"),
        "{mine}{mine_err}"
    );
    assert_eq!(figures(&mine).get("scale").map(String::as_str), Some("2"));
    // Every row either tool inserted saw scale 2.
    assert_eq!(
        query(&url, "SELECT count(*) FROM seen_scale WHERE v <> 2"),
        0
    );
    assert!(query(&url, "SELECT count(*) FROM seen_scale") > 0);
}
