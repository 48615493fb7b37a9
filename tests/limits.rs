//! `dbsweep limits` against fio (the reference tool, in the same test run, with the same block
//! size, queue depth, direct flag and file size), and its one-line refusals: tmpfs, a
//! read-only directory, a full file system, Ctrl-C; never a file left behind.

use std::path::Path;
use std::process::Command;

use crate::util::dbsweep;

#[path = "../bench/fio.rs"]
mod fio;

fn have_fio() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A file of `mb` MiB written through, as the probe lays its own out.
fn laid_out(dir: &Path, name: &str, mb: u32) -> std::path::PathBuf {
    let p = dir.join(name);
    fio::lay_out(&p, mb);
    p
}

/// dbsweep's rate for one probe.
fn ours(dir: &Path, only: &str, depth: u32, writers: u32, size: &str, seconds: u32) -> f64 {
    let json = dir.join("ours.json");
    let out = dbsweep()
        .args(["limits", "--only", only, "--size", size])
        .arg("--dir")
        .arg(dir)
        .arg("--depths")
        .arg(depth.to_string())
        .arg("--writers")
        .arg(writers.to_string())
        .arg("--seconds")
        .arg(seconds.to_string())
        .arg("--out")
        .arg(&json)
        .output()
        .expect("dbsweep runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let figs = v["figures"].as_array().unwrap();
    // The commit probes give one writer first, then `writers`.
    let f = figs
        .iter()
        .find(|f| f["writers"].as_u64() == Some(u64::from(writers)))
        .unwrap_or(&figs[0]);
    f["iops"].as_f64().unwrap()
}

#[test]
fn each_probe_is_within_a_quarter_of_fios_figure() {
    if !have_fio() {
        panic!("fio is not installed: scripts/machine installs it");
    }
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let data = laid_out(dir.path(), "fio.data", 512);
    let log = laid_out(dir.path(), "fio.log", 64);
    let direct = ["--direct=1", "--ioengine=io_uring"];
    // (probe, depth, writers, fio's file and arguments)
    let cases: Vec<(&str, u32, u32, &Path, Vec<&str>)> = vec![
        (
            "random-read",
            1,
            1,
            &data,
            vec!["--rw=randread", "--bs=16k", "--iodepth=1"],
        ),
        (
            "random-read",
            16,
            1,
            &data,
            vec!["--rw=randread", "--bs=16k", "--iodepth=16"],
        ),
        (
            "random-write",
            16,
            1,
            &data,
            vec!["--rw=randwrite", "--bs=16k", "--iodepth=16"],
        ),
        (
            "sequential-read",
            4,
            1,
            &data,
            vec!["--rw=read", "--bs=1M", "--iodepth=4"],
        ),
        (
            "sequential-write",
            4,
            1,
            &data,
            vec!["--rw=write", "--bs=1M", "--iodepth=4"],
        ),
        (
            "fdatasync",
            1,
            1,
            &log,
            vec!["--rw=write", "--bs=4k", "--ioengine=psync", "--fdatasync=1"],
        ),
        (
            "fdatasync",
            1,
            4,
            &log,
            vec![
                "--rw=write",
                "--bs=4k",
                "--ioengine=psync",
                "--fdatasync=1",
                "--numjobs=4",
                "--size=16M",
                "--offset_increment=16M",
            ],
        ),
        (
            "fsync",
            1,
            1,
            &log,
            vec!["--rw=write", "--bs=4k", "--ioengine=psync", "--fsync=1"],
        ),
    ];
    let mut off = Vec::new();
    for (probe, depth, writers, file, args) in cases {
        let mut args: Vec<&str> = args;
        if !probe.contains("sync") {
            args.extend(direct);
        }
        if !args.iter().any(|a| a.starts_with("--size")) {
            args.push(if *file == *data {
                "--size=512M"
            } else {
                "--size=64M"
            });
        }
        // A shared disk's rate moves between seconds: the pair is measured up to three times,
        // and holds when one measurement of the pair is within the band.
        let mut seen = Vec::new();
        let held = (0..3).any(|_| {
            let theirs = fio::run(file, 2, &args).iops;
            let mine = ours(dir.path(), probe, depth, writers, "512M", 2);
            let r = mine / theirs;
            seen.push(format!("{mine:.0}/{theirs:.0}={r:.2}"));
            (0.8..=1.25).contains(&r)
        });
        if !held {
            off.push(format!("{probe} depth {depth} writers {writers}: {seen:?}"));
        }
    }
    assert!(off.is_empty(), "dbsweep / fio outside 0.8-1.25: {off:#?}");
    // Only fio's files are left: the probe's are gone.
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".dbsweep"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

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
