//! Hostile servers and stops (the first hostile pass, issue "Trust"): servers that speak garbage
//! or go silent on either protocol, timeouts, Ctrl-C, SIGTERM and SIGHUP; and what else that
//! pass pinned: impossible inputs, other people's tables, passwords. Each test is named after
//! the defect it pins; every one failed (hung, panicked, dropped, leaked) before the fix.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command as StdCommand, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use dbsweep::server::ServerKind;

use crate::util::{
    HANG, Scratch, assert_valid_results, dbsweep, dbsweep_std, dry_run, files_under, read_json,
    spawn_measuring, start, u, wait_bounded,
};

/// A server on a free loopback port that handles each connection with `serve`.
fn fake_server(serve: impl Fn(TcpStream) + Send + Sync + 'static) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let serve = std::sync::Arc::new(serve);
        for conn in listener.incoming().flatten() {
            let serve = serve.clone();
            std::thread::spawn(move || serve(conn));
        }
    });
    port
}

/// Reads a PostgreSQL startup message (length-prefixed, no tag).
fn read_startup(s: &mut TcpStream) -> bool {
    let mut len = [0u8; 4];
    if s.read_exact(&mut len).is_err() {
        return false;
    }
    let mut body = vec![0; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
    s.read_exact(&mut body).is_ok()
}

/// Reads until the peer closes, so that the connection stays open and silent.
fn drain(mut s: TcpStream) {
    let mut buf = [0u8; 4096];
    while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
}

/// `dbsweep run oltp_point_select` against `url`, bounded by [`HANG`].
fn run_against(url: &str, extra: &[&str]) -> std::process::Output {
    dbsweep()
        .args(["run", "oltp_point_select", "--time", "1", "--target", url])
        .args(extra)
        .timeout(HANG)
        .output()
        .unwrap()
}

/// Exit 1, one line of error on stderr containing `what`, never a panic.
fn assert_fails_with(out: &std::process::Output, code: i32, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(stderr.contains(what), "expected {what:?} in: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "one error line: {stderr}");
}

#[test]
fn postgres_message_lengths_0_3_and_4gib_are_protocol_errors_not_panics() {
    for len in [0u32, 3, 0xFFFF_FFFF, (1 << 30) + 100] {
        let port = fake_server(move |mut s| {
            if read_startup(&mut s) {
                let mut msg = vec![b'R'];
                msg.extend_from_slice(&len.to_be_bytes());
                let _ = s.write_all(&msg);
                drain(s);
            }
        });
        let out = run_against(&format!("postgres://u@127.0.0.1:{port}/db"), &[]);
        assert_fails_with(&out, 1, "impossible length");
    }
}

#[test]
fn mysql_empty_greeting_is_a_protocol_error_not_a_panic() {
    let port = fake_server(|mut s| {
        let _ = s.write_all(&[0, 0, 0, 0]);
        drain(s);
    });
    let out = run_against(&format!("mysql://u@127.0.0.1:{port}/db"), &[]);
    assert_fails_with(&out, 1, "an empty greeting");
}

#[test]
fn silent_servers_fail_at_the_connect_timeout_on_both_protocols() {
    let port = fake_server(drain);
    for scheme in ["postgres", "mysql"] {
        let out = run_against(
            &format!("{scheme}://u@127.0.0.1:{port}/db"),
            &["--connect-timeout", "1"],
        );
        assert_fails_with(&out, 1, "--connect-timeout");
    }
}

#[test]
fn a_server_trickling_a_byte_at_a_time_is_bounded_by_the_connect_timeout() {
    // A MySQL greeting that announces 200 bytes and sends one every 100 ms: each read
    // succeeds, so only a deadline over the whole handshake ends it.
    let port = fake_server(|mut s| {
        let _ = s.write_all(&[200, 0, 0, 0, 10]);
        for _ in 0..1000 {
            std::thread::sleep(Duration::from_millis(100));
            if s.write_all(b"x").is_err() {
                return;
            }
        }
    });
    let out = run_against(
        &format!("mysql://u@127.0.0.1:{port}/db"),
        &["--connect-timeout", "1"],
    );
    assert_fails_with(&out, 1, "--connect-timeout");
}

/// A PostgreSQL server that logs anyone in and then never answers a query; `seen` hears of
/// the first query.
fn pg_silent_after_login(seen: mpsc::Sender<()>) -> u16 {
    let seen = std::sync::Mutex::new(seen);
    fake_server(move |mut s| {
        if !read_startup(&mut s) {
            return;
        }
        // AuthenticationOk, ReadyForQuery (idle).
        let _ = s.write_all(&[b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I']);
        let mut tag = [0u8; 1];
        if s.read_exact(&mut tag).is_ok() {
            let _ = seen.lock().unwrap().send(());
        }
        drain(s);
    })
}

#[test]
fn a_server_silent_after_login_is_bounded_by_the_query_timeout() {
    let (tx, _rx) = mpsc::channel();
    let port = pg_silent_after_login(tx);
    let out = run_against(
        &format!("postgres://u@127.0.0.1:{port}/db"),
        &["--query-timeout", "1"],
    );
    assert_fails_with(&out, 1, "--query-timeout");
}

/// A sweep's connections (its check of the server, its steps) carry the command line's
/// bounds: against a server silent after login, `--query-timeout 1` ends the sweep with the
/// bound's error instead of a wait for ever.
#[test]
fn a_sweeps_connections_are_bounded_by_the_command_lines_query_timeout() {
    let (tx, _rx) = mpsc::channel();
    let port = pg_silent_after_login(tx);
    let s = Scratch::new();
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"t\"\nclients = [1]\nread_time = 0.5\n\n[[targets]]\nurl = \
             \"postgres://u@127.0.0.1:{port}/db\"\n\n[[steps]]\nworkload = \
             \"oltp_point_select\"\nclass = \"read\"\n"
        ),
    )
    .unwrap();
    let out = dbsweep()
        .args(["--query-timeout", "1", "sweep", "--fail-fast", "--output"])
        .arg(s.path("out"))
        .arg(&plan)
        .timeout(HANG)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some(), "ended by its bound: {stderr}");
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("--query-timeout"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn ctrl_c_ends_a_wait_on_a_silent_server() {
    let (tx, rx) = mpsc::channel();
    let port = pg_silent_after_login(tx);
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("dbsweep"))
        .args(["run", "oltp_point_select", "--target"])
        .arg(format!("postgres://u@127.0.0.1:{port}/db"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    rx.recv_timeout(HANG).expect("dbsweep sent a query");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = wait_bounded(&mut child);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped while waiting"), "{stderr}");
}

#[test]
fn empty_postgres_error_is_described_not_printed_as_empty_fields() {
    let port = fake_server(|mut s| {
        if read_startup(&mut s) {
            // An ErrorResponse with no fields at all.
            let _ = s.write_all(&[b'E', 0, 0, 0, 5, 0]);
        }
    });
    let out = run_against(&format!("postgres://u@127.0.0.1:{port}/db"), &[]);
    assert_fails_with(&out, 1, "without a message");
    assert!(!String::from_utf8_lossy(&out.stderr).contains(" ()"));
}

#[test]
fn sigterm_and_sighup_stop_a_run_like_ctrl_c() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let s = Scratch::new();
        s.cmd(&["prepare", "oltp_point_select", "--table-size", "1000"])
            .assert()
            .success();
        let out = s.path("r.json");
        let (mut child, lines) = spawn_measuring(
            dbsweep_std()
                .args([
                    "run",
                    "oltp_point_select",
                    "--table-size",
                    "1000",
                    "--time",
                    "600",
                ])
                .args(["--target", &s.target(), "--output"])
                .arg(&out)
                .stdout(Stdio::piped()),
            "[ 1s ]",
        );
        let rest = std::thread::spawn(move || lines.count());
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        assert_eq!(
            wait_bounded(&mut child).code(),
            Some(130),
            "signal {signal}"
        );
        rest.join().unwrap();
        let r = read_json(&out);
        assert_valid_results(&r);
        assert_eq!(r["interrupted"], true);
        let tmp = std::fs::read_dir(s.dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".tmp-")
            })
            .count();
        assert_eq!(tmp, 0, "temporary files left");
    }
}

#[test]
fn huge_durations_and_rates_are_refused_before_anything_is_loaded() {
    for bad in [
        ["--time", "1e300"],
        ["--warmup", "1e300"],
        ["--report-interval", "1e300"],
        ["--reconnect-timeout", "1e300"],
        ["--rate", "1e-300"],
        ["--report-interval", "1e-300"],
        ["--connect-timeout", "1e300"],
        ["--query-timeout=-1", "--time=1"],
    ] {
        let s = Scratch::new();
        let out = s
            .cmd(&[
                "run",
                "oltp_point_select",
                "--prepare",
                "--table-size",
                "100",
            ])
            .args(bad)
            .timeout(HANG)
            .output()
            .unwrap();
        assert_fails_with(&out, 2, bad[0].split('=').next().unwrap());
        assert!(
            !s.db().exists(),
            "{bad:?}: tables were created before the refusal"
        );
    }
}

#[test]
fn plan_pauses_and_times_beyond_a_year_are_refused() {
    let s = Scratch::new();
    for (body, key) in [
        ("[[steps]]\npause = 1e308\n", "pause"),
        (
            "postwrite_pause = 1e300\n[[steps]]\npause = \"postwrite\"\n",
            "postwrite_pause",
        ),
        (
            "read_time = 1e300\n[[steps]]\nworkload = \"oltp_point_select\"\n",
            "read_time",
        ),
    ] {
        let out = dry_run(&s, &format!("name = \"p\"\n{body}"));
        assert_fails_with(&out, 2, key);
    }
}

#[test]
fn hdr_refuses_impossible_durations_in_a_results_file() {
    let s = Scratch::new();
    s.cmd(&["prepare", "oltp_point_select", "--table-size", "100"])
        .assert()
        .success();
    let good = s.path("r.json");
    s.cmd(&[
        "run",
        "oltp_point_select",
        "--table-size",
        "100",
        "--time",
        "0.3",
    ])
    .args(["--report-interval", "0", "--output"])
    .arg(&good)
    .assert()
    .success();
    let r = read_json(&good);
    for (key, value) in [
        ("warmup_s", serde_json::json!(-1.0)),
        ("time_s", serde_json::json!(-5.0)),
        ("time_s", serde_json::json!(1e300)),
        ("started_at", serde_json::json!(u64::MAX)),
    ] {
        let mut bad = r.clone();
        bad[key] = value;
        let path = s.path("bad.json");
        std::fs::write(&path, bad.to_string()).unwrap();
        let out = dbsweep()
            .arg("hdr")
            .arg(&path)
            .timeout(HANG)
            .output()
            .unwrap();
        assert_fails_with(&out, 2, key);
    }
}

#[test]
fn unsupported_url_parameters_missing_hosts_and_port_0_are_usage_errors() {
    for (url, what) in [
        (
            "postgres://u@127.0.0.1/db?sslmode=sometimes",
            "sslmode=sometimes",
        ),
        (
            "postgres://u@127.0.0.1/db?application_name=x",
            "application_name",
        ),
        (
            "mysql://u@127.0.0.1/db?ssl-mode=SOMETIMES",
            "ssl-mode=SOMETIMES",
        ),
        ("mysql://u@127.0.0.1/db?compress=true", "compress"),
        ("postgres://", "no host"),
        ("postgres://u@127.0.0.1:0/db", "port 0"),
        ("mysql://u@127.0.0.1:0/db", "port 0"),
    ] {
        let out = run_against(url, &[]);
        assert_fails_with(&out, 2, what);
    }
}

#[test]
fn server_with_target_is_refused_instead_of_ignoring_the_target() {
    let out = dbsweep()
        .args(["run", "oltp_point_select", "--server", "postgres"])
        .args(["--target", "postgres://u@127.0.0.1/db"])
        .timeout(HANG)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--target"));
}

#[test]
fn plan_names_with_paths_and_repeated_measured_step_names_are_refused() {
    let s = Scratch::new();
    let step = "[[steps]]\nworkload = \"oltp_point_select\"\nclass = \"read\"\n";
    for (plan, what) in [
        (format!("name = \"../../x\"\n{step}"), "name"),
        (format!("name = \"p\"\n{step}{step}"), "two measured steps"),
    ] {
        assert_fails_with(&dry_run(&s, &plan), 2, what);
    }
}

#[test]
fn cleanup_and_prepare_force_leave_a_users_own_sbtest_table() {
    let s = Scratch::new();
    s.cmd(&[
        "prepare",
        "oltp_point_select",
        "--tables",
        "3",
        "--table-size",
        "100",
    ])
    .assert()
    .success();
    {
        let db = s.sqlite();
        db.execute_batch("DROP TABLE sbtest3; CREATE TABLE sbtest3(my_data text); INSERT INTO sbtest3 VALUES ('mine');")
            .unwrap();
    }
    for args in [
        vec!["cleanup", "oltp_point_select", "--tables", "3"],
        vec![
            "prepare",
            "oltp_point_select",
            "--tables",
            "3",
            "--table-size",
            "100",
            "--force",
        ],
    ] {
        let out = s.cmd(&args).timeout(HANG).output().unwrap();
        assert_fails_with(&out, 2, "sbtest3(my_data text)");
        let kept: String = s
            .sqlite()
            .query_row("SELECT my_data FROM sbtest3", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, "mine", "{args:?}");
    }
}

#[test]
fn tpcc_cleanup_leaves_a_users_own_orders_and_customer() {
    let s = Scratch::new();
    {
        let db = s.sqlite();
        db.execute_batch(
            "CREATE TABLE orders(order_ref text, amount numeric); INSERT INTO orders VALUES ('A-1', 9.5);
             CREATE TABLE customer(name text); INSERT INTO customer VALUES ('Ada');",
        )
        .unwrap();
    }
    let out = s.cmd(&["tpcc", "cleanup"]).timeout(HANG).output().unwrap();
    assert_fails_with(&out, 2, "orders(amount decimal, order_ref text)");
    let n: i64 = s
        .sqlite()
        .query_row(
            "SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM customer)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 2);
}

#[test]
fn missing_database_shows_the_servers_own_message() {
    let server = start(ServerKind::Postgres);
    let url = format!("postgres://sbtest@127.0.0.1:{}/nosuchdb", server.port);
    let out = run_against(&url, &[]);
    assert_fails_with(&out, 1, "\"nosuchdb\" does not exist");
}

#[test]
fn a_mysql_url_at_a_postgres_port_does_not_hang() {
    let server = start(ServerKind::Postgres);
    let url = format!("mysql://sbtest@127.0.0.1:{}/sbtest", server.port);
    let out = run_against(&url, &["--connect-timeout", "2"]);
    assert_fails_with(&out, 1, "is this one?");
}

/// Starts `dbsweep run` with `args` and returns it, once the first interval line shows it
/// measuring, with a thread that keeps reading its stderr (a closed pipe would end it).
fn start_measuring(args: &[&str]) -> (Child, std::thread::JoinHandle<Vec<String>>) {
    let (child, lines) = spawn_measuring(dbsweep_std().args(args).stdout(Stdio::piped()), "[ 1s ]");
    (child, std::thread::spawn(move || lines.collect()))
}

/// Loads 1,000 rows into `server` and starts a measuring point-select run on it with `extra`
/// options, writing its results to the returned path (in the returned scratch directory).
fn measuring_on(
    server: &dbsweep::server::ManagedServer,
    extra: &[&str],
) -> (
    Child,
    std::thread::JoinHandle<Vec<String>>,
    Scratch,
    std::path::PathBuf,
) {
    let s = Scratch::new();
    let common = [
        "oltp_point_select",
        "--table-size",
        "1000",
        "--target",
        &server.url,
    ];
    dbsweep().arg("prepare").args(common).assert().success();
    let out = s.path("r.json");
    let mut args = vec!["run"];
    args.extend(common);
    args.extend(extra);
    args.extend(["--output", out.to_str().unwrap()]);
    let (child, lines) = start_measuring(&args);
    (child, lines, s, out)
}

#[test]
fn ctrl_c_saves_a_run_whose_server_stopped_answering() {
    let server = start(ServerKind::Postgres);
    let (mut child, lines, _s, out) = measuring_on(&server, &["--time", "600"]);
    let pids = server.pids();
    for p in &pids {
        // SAFETY: kill(2) on the test's own server processes.
        unsafe { libc::kill(*p as libc::pid_t, libc::SIGSTOP) };
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = wait_bounded(&mut child);
    for p in &pids {
        // SAFETY: as above.
        unsafe { libc::kill(*p as libc::pid_t, libc::SIGCONT) };
    }
    assert_eq!(status.code(), Some(130), "{:?}", lines.join().unwrap());
    let r = read_json(&out);
    assert_valid_results(&r);
    assert_eq!(r["interrupted"], true);
    assert!(u(&r, "/events") > 0);
}

#[test]
fn an_outage_ends_at_the_deadline_and_counts_the_events_it_lost() {
    let mut server = start(ServerKind::Postgres);
    let (mut child, lines, _s, out) = measuring_on(
        &server,
        &[
            "--threads",
            "2",
            "--time",
            "4",
            "--reconnect-timeout",
            "3600",
        ],
    );
    server.kill();
    let status = wait_bounded(&mut child);
    assert_eq!(status.code(), Some(0), "{:?}", lines.join().unwrap());
    let r = read_json(&out);
    assert_valid_results(&r);
    // Both clients were waiting to reconnect when the run's time was up.
    assert_eq!(u(&r, "/errors/connection_lost"), 2);
    assert!(r["time_s"].as_f64().unwrap() <= 4.0);
    assert!(u(&r, "/events") > 0);
}

#[test]
fn passwords_in_any_url_form_appear_in_no_output_or_file() {
    let server = start(ServerKind::Postgres);
    let secret = "hunter2secret";
    let url = format!(
        "postgres://sbtest@127.0.0.1:{}/sbtest?password={secret}",
        server.port
    );
    let s = Scratch::new();
    let out = s.path("r.json");
    let run = dbsweep()
        .args([
            "run",
            "oltp_point_select",
            "--prepare",
            "--table-size",
            "100",
        ])
        .args(["--time", "0.5", "--target", &url, "--output"])
        .arg(&out)
        .timeout(HANG)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let plan = s.path("p.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"pw\"\nclients = [1]\ntable_size = 100\nread_time = 0.5\n\
             [[targets]]\nurl = \"{url}\"\n[[steps]]\nload = true\n\
             [[steps]]\nworkload = \"oltp_point_select\"\nclass = \"read\"\n"
        ),
    )
    .unwrap();
    let dir = s.path("sweep");
    let sweep = dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--force", "--output"])
        .arg(&dir)
        .timeout(HANG)
        .output()
        .unwrap();
    assert!(
        sweep.status.success(),
        "{}",
        String::from_utf8_lossy(&sweep.stderr)
    );
    let mut printed = vec![run.stdout, run.stderr, sweep.stdout, sweep.stderr];
    for format in ["text", "markdown", "csv", "json", "html"] {
        let report = dbsweep()
            .args(["report", "--full"])
            .arg(&dir)
            .args(["--format", format])
            .output()
            .unwrap();
        assert!(report.status.success(), "{format}");
        printed.push(report.stdout);
    }
    for text in &printed {
        assert!(!String::from_utf8_lossy(text).contains(secret));
    }
    let mut files = files_under(&dir);
    files.push(out);
    assert!(files.len() >= 4, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.contains(secret), "{} holds the password", f.display());
    }
}

/// A MySQL packet: 3-byte length, sequence id, payload.
fn my_packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    p.push(seq);
    p.extend_from_slice(payload);
    p
}

/// Reads one MySQL packet's payload and sequence id.
fn my_read(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 4];
    s.read_exact(&mut head).ok()?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
    let mut body = vec![0; len];
    s.read_exact(&mut body).ok()?;
    Some((head[3], body))
}

/// MySQL 9's greeting: protocol 10, caching_sha2_password, no TLS offered.
fn my_greeting() -> Vec<u8> {
    let caps: u32 = 0x200 | 0x8000 | 0x80000 | 0x8 | 0x2000 | 0x20000 | 0x1 | 0x4;
    let mut g = vec![10];
    g.extend_from_slice(b"9.7.4-fake\0");
    g.extend_from_slice(&7u32.to_le_bytes());
    g.extend_from_slice(b"abcdefgh\0");
    g.extend_from_slice(&(caps as u16).to_le_bytes());
    g.push(255);
    g.extend_from_slice(&2u16.to_le_bytes());
    g.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    g.push(21);
    g.extend_from_slice(&[0; 10]);
    g.extend_from_slice(b"ijklmnopqrst\0");
    g.extend_from_slice(b"caching_sha2_password\0");
    g
}

#[test]
fn mysql_full_authentication_with_a_bad_key_or_none_is_an_error_not_a_panic() {
    // After the client's response the server asks for full authentication (0x01 0x04); to
    // the key request (0x02) it answers with what `answer` gives.
    for (answer, says) in [
        (
            b"\x01not a key at all".to_vec(),
            "the server's RSA public key",
        ),
        (
            b"\x01-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n".to_vec(),
            "the server's RSA public key",
        ),
        (b"\x07".to_vec(), "did not send its RSA public key"),
        (Vec::new(), "did not send its RSA public key"),
    ] {
        let port = fake_server(move |mut s| {
            let _ = s.write_all(&my_packet(0, &my_greeting()));
            let Some((seq, _)) = my_read(&mut s) else {
                return;
            };
            let _ = s.write_all(&my_packet(seq + 1, &[0x01, 0x04]));
            if let Some((seq, req)) = my_read(&mut s)
                && req == [0x02]
            {
                let _ = s.write_all(&my_packet(seq + 1, &answer));
            }
            drain(s);
        });
        let out = run_against(
            &format!("mysql://u:pw@127.0.0.1:{port}/db?ssl-mode=DISABLED"),
            &["--connect-timeout", "5"],
        );
        assert_fails_with(&out, 1, says);
        assert!(!String::from_utf8_lossy(&out.stderr).contains(":pw@"));
    }
}

#[test]
fn a_mysql_result_set_with_broken_column_definitions_is_a_protocol_error() {
    // Logged in (OK at once), every query gets a result set of 3 columns whose definitions
    // are cut short: a length-encoded string longer than its packet, then nothing.
    let port = fake_server(|mut s| {
        let _ = s.write_all(&my_packet(0, &my_greeting()));
        let Some((seq, _)) = my_read(&mut s) else {
            return;
        };
        let _ = s.write_all(&my_packet(seq + 1, &[0, 0, 0, 2, 0, 0, 0]));
        while let Some(_query) = my_read(&mut s) {
            let _ = s.write_all(&my_packet(1, &[3]));
            let _ = s.write_all(&my_packet(2, &[3, b'd', b'e', b'f', 0xFC, 0xFF, 0xFF]));
            let _ = s.write_all(&my_packet(3, &[0xFE, 0, 0, 2, 0]));
        }
    });
    let out = run_against(
        &format!("mysql://u@127.0.0.1:{port}/db?ssl-mode=DISABLED"),
        &["--connect-timeout", "5", "--query-timeout", "5"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("error")).count(),
        1,
        "{stderr}"
    );
}
