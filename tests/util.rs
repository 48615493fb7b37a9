//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use dbsweep::server::{ManagedServer, ServerKind, ServerSpec};
use serde_json::Value;
use tempfile::TempDir;

/// Runs a test body once per server kind.
macro_rules! per_server {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn postgres() {
                ($body)(ServerKind::Postgres)
            }
            #[test]
            fn mariadb() {
                ($body)(ServerKind::Mariadb)
            }
            #[test]
            fn mysql() {
                ($body)(ServerKind::Mysql)
            }
        }
    };
}

/// One test that runs `$body` for each server kind in turn, each under [`machine_cache`]: for
/// the tests that hold it, one test thread waits on the lock instead of three (the others run
/// other tests meanwhile). Every kind runs; the test fails naming each kind that failed.
macro_rules! per_server_in_turn {
    ($name:ident, $body:expr) => {
        #[test]
        fn $name() {
            crate::util::each_server_in_turn($body)
        }
    };
}

/// [`per_server_in_turn!`]'s loop.
pub fn each_server_in_turn(body: impl Fn(dbsweep::server::ServerKind)) {
    use dbsweep::server::ServerKind;
    let mut failed = Vec::new();
    for kind in [ServerKind::Postgres, ServerKind::Mariadb, ServerKind::Mysql] {
        let _cache = machine_cache();
        if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(kind))) {
            failed.push(format!("{kind:?}: {}", first_words(&*e)));
        }
    }
    // Each kind's message again, shortened, last: a log cut to its end still says why.
    assert!(
        failed.is_empty(),
        "failed on {} kinds (each in full above):\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// A panic's message, its first line and at most 400 characters of it.
fn first_words(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("(not a text)");
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(400).collect()
}

/// Held by a test that drops the OS page cache (the whole machine's) or needs a table kept in
/// it, and by one that measures the disk: one such test at a time, so that no test's
/// `drop_caches` empties another's cache, and no probe measures a disk another test fills.
pub fn machine_cache() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn dbsweep() -> Command {
    Command::cargo_bin("dbsweep").expect("binary built")
}

/// The stderr lines of a process started by [`spawn_measuring`], as they come.
pub type StderrLines = std::iter::MapWhile<
    std::io::Lines<std::io::BufReader<std::process::ChildStderr>>,
    fn(std::io::Result<String>) -> Option<String>,
>;

/// Starts `cmd` (a dbsweep run or sweep) with its stderr piped and returns once a stderr line
/// holds `interval` (`"[ 1s ]"`: the first interval line, the run is measuring), with the
/// lines after it. Fails the test if the process ends first.
pub fn spawn_measuring(
    cmd: &mut std::process::Command,
    interval: &str,
) -> (std::process::Child, StderrLines) {
    use std::io::BufRead;
    let mut child = cmd
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("dbsweep starts");
    let stderr = child.stderr.take().expect("stderr piped");
    let mut lines: StderrLines = std::io::BufReader::new(stderr)
        .lines()
        .map_while(Result::ok as fn(_) -> _);
    // The lines before it, to say what the process printed if it ended first.
    let mut before = Vec::new();
    let found = lines.by_ref().any(|l| {
        let hit = l.contains(interval);
        before.push(l);
        hit
    });
    if !found {
        let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
        panic!(
            "no {interval} interval line before the process ended ({status}); stderr: {before:?}"
        );
    }
    (child, lines)
}

/// `dbsweep` as a std command, for [`spawn_measuring`].
pub fn dbsweep_std() -> std::process::Command {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("dbsweep"))
}

/// One dbsweep command line, built from the parts the tests repeat: the target, quiet interval
/// lines, a results file to read back. `results` runs it, asserts success and returns the file.
pub struct Line {
    cmd: Command,
    output: Option<PathBuf>,
}

impl Line {
    /// `dbsweep sweep <options> <plan> --output <dir>`.
    pub fn sweep(options: &[&str], plan: &Path, dir: &Path) -> Line {
        let mut cmd = dbsweep();
        cmd.arg("sweep")
            .args(options)
            .arg(plan)
            .arg("--output")
            .arg(dir);
        Line { cmd, output: None }
    }

    /// `dbsweep <args>`.
    pub fn new(args: &[&str]) -> Line {
        let mut cmd = dbsweep();
        cmd.args(args);
        Line { cmd, output: None }
    }

    pub fn args<I, S>(mut self, args: I) -> Line
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// `--target <url>`.
    pub fn target(mut self, url: &str) -> Line {
        self.cmd.args(["--target", url]);
        self
    }

    /// `--report-interval 0`: no interval lines.
    pub fn quiet(mut self) -> Line {
        self.cmd.args(["--report-interval", "0"]);
        self
    }

    /// `--output <path>`, read back by `results`.
    pub fn output(mut self, path: &Path) -> Line {
        self.cmd.arg("--output").arg(path);
        self.output = Some(path.to_path_buf());
        self
    }

    /// Runs in `dir`.
    pub fn in_dir(mut self, dir: &Path) -> Line {
        self.cmd.current_dir(dir);
        self
    }

    /// The command, for assertions of its own.
    pub fn command(self) -> Command {
        self.cmd
    }

    pub fn assert(mut self) -> assert_cmd::assert::Assert {
        self.cmd.assert()
    }

    /// Runs it, asserts success, and returns the results file given to `output`.
    pub fn results(mut self) -> Value {
        let out = self.output.clone().expect("results() needs output()");
        self.cmd.assert().success();
        read_json(&out)
    }
}

/// A managed server of `kind` with its default settings. A missing server binary fails the
/// test (`scripts/test` installs them).
pub fn start(kind: ServerKind) -> ManagedServer {
    start_with(kind, &[])
}

/// Settings that write commits to the OS rather than flush them, for tests whose checks do not
/// depend on durability: on a busy 2-core machine the flush per commit (two on MySQL with its
/// binary log) makes them wait on the disk for nothing they check. A killed server still loses
/// nothing on MariaDB and MySQL; PostgreSQL may lose its last commits, so no test that crashes
/// its server uses them.
pub fn lax_commits(kind: ServerKind) -> &'static [(&'static str, &'static str)] {
    match kind {
        ServerKind::Postgres => &[("synchronous_commit", "off")],
        _ => &[
            ("innodb_flush_log_at_trx_commit", "2"),
            ("sync_binlog", "0"),
        ],
    }
}

pub fn start_with(kind: ServerKind, settings: &[(&str, &str)]) -> ManagedServer {
    let settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let spec = ServerSpec {
        settings,
        ..ServerSpec::new(kind)
    };
    ManagedServer::start(&spec)
        .unwrap_or_else(|e| panic!("starting a managed {kind:?} server: {e}"))
}

/// A managed server of `kind` with TLS on and required of TCP connections; its URL connects
/// with verify-ca against the CA made for it (`ca.pem` in its directory).
pub fn start_tls(kind: ServerKind) -> ManagedServer {
    let spec = ServerSpec {
        tls: true,
        ..ServerSpec::new(kind)
    };
    ManagedServer::start(&spec)
        .unwrap_or_else(|e| panic!("starting a managed {kind:?} server with TLS: {e}"))
}

/// A root connection to a managed MariaDB or MySQL over its Unix socket, for test set-up:
/// dbsweep's own client (one statement a call).
pub fn root_of(server: &ManagedServer) -> Box<dyn dbsweep::db::Conn> {
    let socket = server.dir.join("mysqld.sock");
    let url = format!("mysql://root@localhost/?socket={}", socket.display());
    dbsweep::db::mysql::MysqlTarget::from_url(&url, true, Default::default())
        .unwrap()
        .connect_bounded(std::time::Duration::from_secs(30))
        .unwrap()
}

/// sysbench 1.0.20's options to reach `server` over loopback TCP as user and database sbtest.
pub fn sysbench_connection(kind: ServerKind, server: &ManagedServer) -> Vec<String> {
    let (driver, p) = if kind == ServerKind::Postgres {
        ("pgsql", "pgsql")
    } else {
        ("mysql", "mysql")
    };
    vec![
        format!("--db-driver={driver}"),
        format!("--{p}-host=127.0.0.1"),
        format!("--{p}-port={}", server.port),
        format!("--{p}-user=sbtest"),
        format!("--{p}-db=sbtest"),
    ]
}

/// A scratch directory with a SQLite database path in it.
pub struct Scratch {
    pub dir: TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// One that a managed server's unprivileged user may enter (mode 755), for data directories.
    pub fn enterable() -> Scratch {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new();
        std::fs::set_permissions(s.dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod scratch directory");
        s
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn db(&self) -> PathBuf {
        self.path("bench.db")
    }

    pub fn target(&self) -> String {
        format!("sqlite://{}", self.db().display())
    }

    /// `dbsweep <args> --target <this db>`, run in the scratch directory.
    pub fn cmd(&self, args: &[&str]) -> Command {
        self.line(args).command()
    }

    /// The same as a [`Line`].
    pub fn line(&self, args: &[&str]) -> Line {
        Line::new(args)
            .in_dir(self.dir.path())
            .target(&self.target())
    }

    pub fn sqlite(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.db()).expect("open test db")
    }
}

/// Reads a results file as JSON.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("results are JSON")
}

/// Runs `cmd` with `--output` in the scratch dir, asserts success, returns the results.
pub fn run_results(s: &Scratch, args: &[&str]) -> Value {
    s.line(args)
        .output(&s.path("results.json"))
        .quiet()
        .results()
}

pub fn u(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{pointer} missing in {v}"))
}

/// Each client's events of a results file (`thread_events`), in client order.
pub fn per_client(r: &Value) -> Vec<u64> {
    r["thread_events"]
        .as_array()
        .unwrap_or_else(|| panic!("no thread_events in {r}"))
        .iter()
        .map(|e| e.as_u64().expect("a client's events are a count"))
        .collect()
}

pub fn f(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} missing"))
}

/// Validates `instance` against the repository's results schema; panics with every error.
pub fn assert_valid_results(instance: &Value) {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/results.schema.json");
    let schema = read_json(&schema_path);
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "results do not match the schema:\n{}",
        errors.join("\n")
    );
}

/// A TCP proxy in front of the server of `url` for one connection: the URL to connect to
/// instead. `to_server` and `to_client` see each chunk of bytes as it passes, before it is
/// forwarded.
pub fn tcp_proxy(
    url: &str,
    mut to_server: impl FnMut(&[u8]) + Send + 'static,
    mut to_client: impl FnMut(&[u8]) + Send + 'static,
) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let host = url.split('@').nth(1).unwrap().split('/').next().unwrap();
    let upstream = host.to_string();
    fn pump(
        mut from: std::net::TcpStream,
        mut to: std::net::TcpStream,
        mut look: impl FnMut(&[u8]),
    ) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    look(&buf[..n]);
                    if to.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Both);
    }
    std::thread::spawn(move || {
        let (client, _) = listener.accept().unwrap();
        let server = std::net::TcpStream::connect(&upstream).unwrap();
        let (client_back, server_back) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        std::thread::spawn(move || pump(server, client_back, move |b| to_client(b)));
        pump(client, server_back, move |b| to_server(b));
    });
    url.replace(host, &format!("127.0.0.1:{port}"))
}

/// An HTTP server on loopback answering every GET with `answer(base, path)`; its base URL.
pub fn serve(answer: impl Fn(&str, &str) -> Vec<u8> + Send + 'static) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let at = base.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            use std::io::{Read, Write};
            let Ok(mut conn) = conn else { return };
            let mut req = [0u8; 4096];
            let n = conn.read(&mut req).unwrap_or(0);
            let line = String::from_utf8_lossy(&req[..n]).to_string();
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let body = answer(&at, &path);
            let _ = conn.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
            );
            let _ = conn.write_all(&body);
        }
    });
    base
}

/// A mock run's results file at `path` (200 events), as JSON.
pub fn mock_results(path: &Path) -> Value {
    dbsweep()
        .args(["run", "oltp_point_select", "--target", "mock://"])
        .args(["--events", "200", "--time", "0", "--report-interval", "0"])
        .arg("--output")
        .arg(path)
        .assert()
        .success();
    read_json(path)
}

/// What is in directory `dir` (names, sorted; none when it is not there).
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Fails a test that needs root when it runs as another user (such tests are `#[ignore]`d,
/// and scripts/test runs them as root).
pub fn assert_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test needs root: run it as root (scripts/test does, with --include-ignored)"
    );
}

/// The most any of these commands may take before the test calls it a hang.
pub const HANG: std::time::Duration = std::time::Duration::from_secs(60);

/// `dbsweep sweep PLAN --dry-run` on a plan of `text`, bounded by [`HANG`].
pub fn dry_run(s: &Scratch, text: &str) -> std::process::Output {
    let path = s.path("p.toml");
    std::fs::write(&path, text).unwrap();
    dbsweep()
        .current_dir(s.dir.path())
        .args(["sweep", path.to_str().unwrap(), "--dry-run"])
        .timeout(HANG)
        .output()
        .unwrap()
}

/// Every file below `dir`.
pub fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files
}

/// Waits for `child` up to [`HANG`]; kills it and fails the test if it does not end.
pub fn wait_bounded(child: &mut std::process::Child) -> std::process::ExitStatus {
    let give_up = std::time::Instant::now() + HANG;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > give_up {
            let _ = child.kill();
            panic!("dbsweep did not end within {HANG:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `v` written to `path` as pretty JSON.
pub fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// The one error line of a refused command, which exited `code`.
pub fn refused(out: &std::process::Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}
