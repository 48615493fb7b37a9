//! `dbsweep limits`'s one-line refusals: tmpfs, a read-only directory, a full file system,
//! Ctrl-C; never a file left behind; the day's cache. (Its figures against fio's are a test
//! binary of their own, tests/limits_fio.rs.)

use std::path::Path;
use std::process::Command;

use crate::util::dbsweep;

/// A tmpfs of `mb` MiB mounted on a fresh directory, unmounted when dropped.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn new(mb: u32) -> Tmpfs {
        let d = tempfile::tempdir().unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}M"), "tmpfs"])
            .arg(d.path())
            .status()
            .expect("mount runs");
        assert!(st.success(), "mounting a tmpfs (the tests run as root)");
        Tmpfs(d)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn tmpfs_is_said_in_one_line_and_the_probes_still_run() {
    let t = Tmpfs::new(400);
    let out = dbsweep()
        .args([
            "limits",
            "--size",
            "64M",
            "--seconds",
            "0.3",
            "--depths",
            "1",
            "--writers",
            "2",
        ])
        .arg("--dir")
        .arg(t.0.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("tmpfs keeps its files in memory"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("random read") && stdout.contains("write + fsync"),
        "{stdout}"
    );
    assert!(entries(t.0.path()).is_empty());
}

#[test]
fn a_full_file_system_is_one_line_and_exit_1_with_nothing_left() {
    let t = Tmpfs::new(40);
    let out = dbsweep()
        .args(["limits", "--size", "64M", "--seconds", "0.3"])
        .arg("--dir")
        .arg(t.0.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the file system is full for the probes"),
        "{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("full")).count(),
        1,
        "{err}"
    );
    assert!(entries(t.0.path()).is_empty());
}

#[test]
fn a_read_only_directory_is_one_line_and_touches_nothing() {
    let t = Tmpfs::new(40);
    std::fs::write(t.0.path().join("theirs"), b"kept").unwrap();
    let st = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(t.0.path())
        .status()
        .unwrap();
    assert!(st.success());
    let out = dbsweep()
        .args(["limits", "--seconds", "0.3"])
        .arg("--dir")
        .arg(t.0.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert_eq!(entries(t.0.path()), vec!["theirs".to_string()]);
    assert_eq!(std::fs::read(t.0.path().join("theirs")).unwrap(), b"kept");
}

#[test]
fn ctrl_c_during_a_probe_ends_it_and_leaves_no_file() {
    use std::io::BufRead;
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let mut child = crate::util::dbsweep_std()
        .args([
            "limits",
            "--size",
            "64M",
            "--seconds",
            "600",
            "--depths",
            "1",
        ])
        .arg("--dir")
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // The header is printed before the first probe starts.
    assert!(
        lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.starts_with("probe"))
    );
    // The probe file exists while the probe runs; wait for it (bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while entries(dir.path()).is_empty() {
        assert!(std::time::Instant::now() < deadline, "no probe file");
        std::thread::yield_now();
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn limits_are_kept_for_the_day_and_read_back_with_cached() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        dbsweep()
            .env("XDG_CACHE_HOME", cache.path())
            .args([
                "limits",
                "--size",
                "16M",
                "--seconds",
                "0.2",
                "--only",
                "random-read",
                "--depths",
                "1",
            ])
            .arg("--dir")
            .arg(dir.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let first = run(&[]);
    assert!(first.status.success());
    let again = run(&["--cached"]);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(text.contains("from the cache"), "{text}");
    // The cached figure is the first run's.
    let figure = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("random read"))
            .map(str::to_string)
    };
    assert_eq!(
        figure(&text),
        figure(&String::from_utf8_lossy(&first.stdout))
    );
}

/// `--target` on a managed server: its own data directory and page, its connection probed
/// (on this host), and nothing of the probes left among its files.
fn a_servers_own_place(kind: dbsweep::server::ServerKind, page: u64) {
    let server = crate::util::start(kind);
    let before = entries_deep(&server.dir);
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("l.json");
    dbsweep()
        .args(["limits", "--target", &server.url])
        .args(["--only", "random-read", "--depths", "1", "--size", "16M"])
        .args(["--seconds", "0.5", "--out"])
        .arg(&out)
        .env("XDG_CACHE_HOME", out_dir.path())
        .assert()
        .success();
    let l = crate::util::read_json(&out);
    let datadir = l["dir"].as_str().unwrap();
    assert!(
        std::path::Path::new(datadir).starts_with(&server.dir),
        "{datadir} is not under {}",
        server.dir.display()
    );
    assert_eq!(l["page"], page, "{l}");
    assert_eq!(l["figures"][0]["block"], page, "{l}");
    assert_eq!(l["network"]["local"], true, "{l}");
    assert!(l["network"]["round_trips"].as_u64().unwrap() > 0, "{l}");
    assert_eq!(entries_deep(&server.dir), before, "the probes left a file");
}

/// The probes' files anywhere under `dir` (the server's own files change as it runs; the
/// probes' names are their own), sorted.
fn entries_deep(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            let name = p.display().to_string();
            if name.contains(".dbsweep-limits") {
                out.push(name);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn target_takes_a_postgres_servers_data_directory_and_block() {
    a_servers_own_place(dbsweep::server::ServerKind::Postgres, 8192);
}

#[test]
fn target_takes_a_mariadb_servers_data_directory_and_page() {
    a_servers_own_place(dbsweep::server::ServerKind::Mariadb, 16384);
}

#[test]
fn a_sqlite_sweep_with_limits_reports_each_steps_bound_and_draws_its_ceilings() {
    let s = crate::util::Scratch::new();
    let plan = s.path("plan.toml");
    std::fs::write(
        &plan,
        "name = \"ceilings\"\nclients = [1, 2]\ntable_size = 5000\nread_time = 1\n\
         limits = { size = \"16M\", seconds = 0.3, depths = [1, 4] }\n\
         [[steps]]\nload = true\n\
         [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    )
    .unwrap();
    let dir = s.path("sweep");
    let out = dbsweep()
        .arg("sweep")
        .arg(&plan)
        .arg("--output")
        .arg(&dir)
        .env("XDG_CACHE_HOME", s.path("cache"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = crate::util::read_json(&dir.join("limits.json"));
    // SQLite's files are in the sweep directory, of SQLite's page.
    assert_eq!(kept["sqlite"]["page"], 4096, "{kept}");
    let html = dbsweep()
        .args(["report", "--full", "--format", "html"])
        .arg(&dir)
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&html.stdout);
    // Embedded SQLite's point selects are its client's CPU: that ceiling is on the chart.
    assert!(html.contains("ceiling: CPU"), "no CPU ceiling drawn");
    assert!(html.contains(r#"stroke-dasharray="2,3""#));
    let text = dbsweep().arg("report").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let row = text
        .lines()
        .find(|l| l.contains("point") && l.contains("c2"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("CPU"), "{row}");
}
