//! Managed servers when things fail: their processes die with a killed dbsweep, a full disk or
//! an unwritable tmpdir, Ctrl-C during their first load; and a script's top-level error.

use std::io::{BufRead, BufReader};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::util::{HANG, files_under, wait_bounded};
use crate::util::{Scratch, dbsweep, read_json, spawn_measuring};

/// Waits, bounded, until none of `pids` is alive.
fn wait_gone(pids: &[u32]) -> bool {
    let give_up = Instant::now() + HANG;
    while Instant::now() < give_up {
        let alive = pids.iter().any(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
            })
        });
        if !alive {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The managed directories in `dir`.
fn managed_dirs(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("dbsweep-")
        })
        .collect()
}

#[test]
fn managed_servers_die_with_a_killed_dbsweep_and_the_next_start_removes_their_directories() {
    let tmp = Scratch::enterable();
    let run = |time: &str| {
        let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("dbsweep"));
        c.env("TMPDIR", tmp.dir.path())
            .args([
                "run",
                "oltp_point_select",
                "--server",
                "postgres",
                "--prepare",
            ])
            .args(["--table-size", "1000", "--time", time]);
        c
    };
    let (mut child, lines) = spawn_measuring(run("600").stdout(Stdio::null()), "[ 1s ]");
    let rest = std::thread::spawn(move || lines.count());
    let server = dbsweep::server::process_tree(child.id());
    assert!(
        server.len() > 1,
        "the managed server's processes: {server:?}"
    );
    let stale = managed_dirs(tmp.dir.path());
    assert_eq!(stale.len(), 1);
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    rest.join().unwrap();
    let server: Vec<u32> = server.into_iter().filter(|p| *p != child.id()).collect();
    assert!(
        wait_gone(&server),
        "the managed server outlived dbsweep: {server:?}"
    );
    assert!(
        stale[0].exists(),
        "the killed dbsweep could not have removed it"
    );
    let out = run("0.3").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("its dbsweep ended without removing it"));
    assert!(
        managed_dirs(tmp.dir.path()).is_empty(),
        "left: {:?}",
        managed_dirs(tmp.dir.path())
    );
}

#[test]
fn a_tmpdir_the_server_user_cannot_write_does_not_stop_a_managed_mariadb() {
    // Enterable by everyone, writable by root alone.
    let tmp = Scratch::enterable();
    let out = dbsweep()
        .env("TMPDIR", tmp.dir.path())
        .args([
            "run",
            "oltp_point_select",
            "--server",
            "mariadb",
            "--prepare",
        ])
        .args(["--table-size", "100", "--time", "0.3"])
        .timeout(HANG)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(managed_dirs(tmp.dir.path()).is_empty());
}

/// A tmpfs of `size` at `dir`, unmounted when dropped (root only, as CI runs).
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(dir: std::path::PathBuf, size: &str) -> SmallDisk {
        std::fs::create_dir_all(&dir).unwrap();
        let ok = StdCommand::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mounting a small tmpfs needs root (CI runs as root)");
        SmallDisk(dir)
    }

    fn grow(&self, size: &str) {
        let ok = StdCommand::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_keeps_its_cause_leaves_no_temporary_file_and_resume_runs_the_step_again() {
    let s = Scratch::new();
    let disk = SmallDisk::mount(s.path("disk"), "256k");
    let plan = s.path("full.toml");
    std::fs::write(
        &plan,
        "name = \"full\"\nclients = [1]\ntable_size = 20000\nread_time = 0.3\n\
         [[steps]]\nload = true\n\
         [[steps]]\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    )
    .unwrap();
    let dir = disk.0.join("sweep");
    let out = dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--output"])
        .arg(&dir)
        .timeout(HANG)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("sweep full:"), "the summary: {stdout}");
    let files = files_under(&dir);
    let tmp: Vec<_> = files
        .iter()
        .filter(|p| p.to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(tmp.is_empty(), "temporary files left: {tmp:?}");
    let records: String = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        format!("{stderr}{records}").contains("disk is full"),
        "the database's own cause is kept: {stderr}"
    );
    disk.grow("64m");
    let resumed = dbsweep()
        .arg("sweep")
        .arg("--resume")
        .arg(&dir)
        .timeout(HANG)
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let load = read_json(&dir.join("steps/sqlite.default.c1/01-load.json"));
    assert_eq!(load["status"], "ok");
}

#[test]
fn lua_top_level_errors_are_one_line_file_line_message() {
    let s = Scratch::new();
    let script = s.path("bad.lua");
    std::fs::write(&script, "local x = nil\nprint(x.y)\n").unwrap();
    let out = dbsweep()
        .current_dir(s.dir.path())
        .args(["run", script.to_str().unwrap()])
        .timeout(HANG)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "dbsweep: error: {}:2: attempt to index local 'x' (a nil value)",
            script.display()
        )
    );
}

#[test]
fn ctrl_c_during_a_managed_servers_first_load_exits_130_without_cleanup_advice() {
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("dbsweep"))
        .args([
            "run",
            "oltp_point_select",
            "--server",
            "postgres",
            "--prepare",
        ])
        .args(["--table-size", "3000000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok);
    assert!(lines.any(|l| l.starts_with("Inserting")), "no load began");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let rest: Vec<String> = lines.collect();
    assert_eq!(wait_bounded(&mut child).code(), Some(130), "{rest:?}");
    let text = rest.join("\n");
    assert!(!text.contains("dbsweep cleanup"), "{text}");
    assert!(text.contains("throwaway server"), "{text}");
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
