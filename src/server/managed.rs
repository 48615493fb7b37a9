//! A managed server's life: started with a plan's settings, waited for, stopped, and its process tree found.

use super::{ManagedServer, ServerKind, ServerSpec};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::Error;

/// How long a server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a server may take to shut down before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// The version line of the server binary that `--server kind` would start; an error that
/// names the package to install when there is none.
pub fn binary_version(kind: ServerKind) -> Result<String, Error> {
    match kind {
        ServerKind::Postgres => super::postgres::version(),
        ServerKind::Mariadb | ServerKind::Mysql => super::mariadb::version(kind),
    }
}

/// Servers that this process started, for the second Ctrl-C (which exits at once).
static RUNNING: Mutex<Vec<(u32, Option<PathBuf>)>> = Mutex::new(Vec::new());

/// Kills every managed server still running and removes the directories dbsweep created;
/// called when the process must exit at once.
pub fn kill_all() {
    super::fetch::remove_unfinished();
    let running = RUNNING
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default();
    for (pid, dir) in running {
        // SAFETY: plain kill(2) on a process this program started.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        if let Some(dir) = dir {
            let _ = fs::remove_dir_all(dir);
        }
    }
}

impl ManagedServer {
    /// Starts a server for `spec` and waits until it accepts connections.
    pub fn start(spec: &ServerSpec) -> Result<ManagedServer, Error> {
        let (dir, created_dir) = match &spec.datadir {
            Some(d) => (super::setup::claim_datadir(d, spec.datadir_force)?, false),
            None => {
                let parent = spec.datadir_in.clone().unwrap_or_else(std::env::temp_dir);
                for gone in super::orphans::remove_dead(&parent) {
                    eprintln!(
                        "Removed {}: its dbsweep ended without removing it",
                        gone.display()
                    );
                }
                let prefix =
                    format!("{}{:?}-", super::orphans::DIR_PREFIX, spec.kind).to_lowercase();
                let mut b = tempfile::Builder::new();
                b.prefix(&prefix);
                let d = match &spec.datadir_in {
                    Some(parent) => b.tempdir_in(parent).map_err(|e| {
                        Error::Run(format!(
                            "creating a data directory in {}: {e}",
                            parent.display()
                        ))
                    })?,
                    None => b
                        .tempdir()
                        .map_err(|e| Error::Run(format!("creating a data directory: {e}")))?,
                };
                super::orphans::claim(d.path(), spec.keep)
                    .map_err(|e| Error::Run(format!("writing in {}: {e}", d.path().display())))?;
                (d.keep(), true)
            }
        };
        let mut server = ManagedServer {
            kind: spec.kind,
            log: dir.join("server.log"),
            dir,
            port: 0,
            url: String::new(),
            socket: spec.socket,
            version: String::new(),
            child: None,
            created_dir,
            keep: spec.keep,
            settings: spec.settings.clone(),
            runs_as: None,
            log_from: 0,
            tls: spec.tls,
            tls_required: spec.tls_required,
            effective: BTreeMap::new(),
            setting_warnings: Vec::new(),
            // No build named: the system's server, or the newest build where the system has
            // none of the kind (MySQL).
            build: match &spec.build {
                Some(b) => Some(b.clone()),
                None => super::builds::resolve(spec.kind, None, None)?,
            },
        };
        if in_memory(&server.dir) {
            eprintln!(
                "warning: the managed server's data directory {} is in memory (tmpfs): its IO and \
                 IO-bound configurations measure memory, not a disk; put it on a disk with \
                 --server-datadir (datadir_in in a plan's target), or TMPDIR for temporary ones",
                server.dir.display()
            );
        }
        if spec.tls && spec.socket {
            return Err(Error::Usage(
                "a managed server's TLS is over TCP: tls and socket do not go together".into(),
            ));
        }
        // On failure `server` is dropped here, which removes what it created.
        match spec.kind {
            ServerKind::Postgres => super::postgres::start(&mut server)?,
            ServerKind::Mariadb | ServerKind::Mysql => super::mariadb::start(&mut server)?,
        }
        Ok(server)
    }

    /// The settings it was started with.
    pub fn settings(&self) -> &[(String, String)] {
        &self.settings
    }

    /// Records what the server made of its settings (`read_back` gives a setting's value in
    /// the server's words and whether it is the requested one, None when the server has no
    /// such variable) and the log's warnings about them since the last spawn.
    pub(super) fn check_settings(
        &mut self,
        read_back: impl FnMut(&str, &str) -> Result<Option<(String, bool)>, String>,
    ) -> Result<(), Error> {
        self.effective = super::effective::check(&self.settings, read_back)
            .map_err(|e| Error::Run(format!("managed server: reading back its settings: {e}")))?;
        let mut warnings: Vec<String> = self
            .effective
            .iter()
            .filter(|(_, e)| !e.applied)
            .map(|(name, e)| super::effective::describe(name, e))
            .collect();
        let names: Vec<&str> = self.settings.iter().map(|(n, _)| n.as_str()).collect();
        warnings.extend(
            super::effective::log_warnings(&self.log, self.log_from, &names)
                .into_iter()
                .map(|l| format!("server log: {l}")),
        );
        self.setting_warnings = warnings;
        Ok(())
    }

    /// Whether its directory stays after dbsweep ends.
    pub fn kept(&self) -> bool {
        self.keep || !self.created_dir
    }

    /// The server's main process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The main process and all its children (a PostgreSQL server is a process per connection
    /// plus helpers).
    pub fn pids(&self) -> Vec<u32> {
        self.pid().map(process_tree).unwrap_or_default()
    }

    /// Kills the server's processes with SIGKILL, as a crash would (for failure tests), and
    /// waits until they are gone, so that it can be started again on the same directory.
    pub fn kill(&mut self) {
        let pids = self.pids();
        if let Some(mut child) = self.child.take() {
            for pid in &pids {
                // SAFETY: kill(2) on the server's own processes.
                unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
            }
            let _ = child.wait();
            forget_running(child.id());
            let deadline = Instant::now() + STOP_TIMEOUT;
            while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    /// Starts the server again on the same data directory and port (after [`kill`]).
    pub fn restart(&mut self) -> Result<(), Error> {
        self.kill();
        match self.kind {
            ServerKind::Postgres => super::postgres::launch(self),
            ServerKind::Mariadb | ServerKind::Mysql => super::mariadb::launch(self),
        }
    }

    /// Stops the server cleanly and waits for it.
    pub fn stop(&mut self) {
        let signal = if self.kind == ServerKind::Postgres {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        self.stop_with(signal);
    }

    /// Ends a server whose data directory is removed next: its shutdown checkpoint (the
    /// buffer pool's dirty pages written out, behind a slow disk seconds of writes) would be
    /// work for nothing. PostgreSQL's immediate shutdown (SIGQUIT: its processes end and it
    /// frees its shared memory, no checkpoint); MariaDB and MySQL ended as a crash ends them.
    fn abandon(&mut self) {
        if self.kind == ServerKind::Postgres {
            self.stop_with(libc::SIGQUIT);
        } else {
            self.kill();
        }
    }

    fn stop_with(&mut self, signal: libc::c_int) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        // SAFETY: kill(2) on our own child process.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        forget_running(child.id());
    }

    /// Whether the server's main process has ended (crashed, aborted, killed).
    pub fn exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_none_or(|c| !matches!(c.try_wait(), Ok(None)))
    }

    /// Where the server's log ends now: a mark for [`ManagedServer::log_cause`].
    pub fn log_mark(&self) -> u64 {
        super::effective::log_offset(&self.log)
    }

    /// What the server's log says went wrong since `mark`: the first line about a full disk,
    /// else the last error line (MariaDB's `[ERROR]`, PostgreSQL's `FATAL:`/`PANIC:`).
    pub fn log_cause(&self, mark: u64) -> Option<String> {
        let mut f = File::open(&self.log).ok()?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        // The last 64 KB at most of what was written since the mark.
        let _ = f.seek(SeekFrom::Start(mark.max(len.saturating_sub(64 * 1024))));
        let lines: Vec<String> = BufReader::new(f).lines().map_while(Result::ok).collect();
        let disk = [
            "No space left on device",
            "disk is full",
            "Disk full",
            "could not extend file",
        ];
        lines
            .iter()
            .find(|l| disk.iter().any(|d| l.contains(d)))
            .or_else(|| {
                lines.iter().rev().find(|l| {
                    ["[ERROR]", "FATAL:", "PANIC:"]
                        .iter()
                        .any(|level| l.contains(level))
                })
            })
            .map(|l| l.trim().to_string())
    }

    /// The last lines of the server's log, for error messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let Ok(mut f) = File::open(&self.log) else {
            return String::new();
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(16 * 1024)));
        let all: Vec<String> = BufReader::new(f).lines().map_while(Result::ok).collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Spawns the server process as the unprivileged user where needed, in its own process
    /// group (so that Ctrl-C reaches dbsweep, which stops the server in order), logging to
    /// the server log.
    pub(super) fn spawn(&mut self, program: &Path, args: &[String]) -> Result<(), Error> {
        self.log_from = super::effective::log_offset(&self.log);
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.log)
            .map_err(|e| Error::Run(format!("{}: {e}", self.log.display())))?;
        let mut cmd = Command::new(program);
        if let Some(b) = &self.build {
            b.prepare(&mut cmd);
        }
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| Error::Run(e.to_string()))?)
            .stderr(log)
            .process_group(0);
        super::orphans::die_with_parent(&mut cmd);
        if let Some((uid, gid)) = self.runs_as {
            cmd.uid(uid).gid(gid);
        }
        let child = cmd
            .spawn()
            .map_err(|e| Error::Run(format!("starting {}: {e}", program.display())))?;
        let dir = self
            .created_dir
            .then(|| self.dir.clone())
            .filter(|_| !self.keep);
        RUNNING
            .lock()
            .expect("running servers")
            .push((child.id(), dir));
        self.child = Some(child);
        Ok(())
    }

    /// Waits until `probe` succeeds; fails with the log's tail if the server exits or the
    /// timeout passes.
    pub(super) fn wait_ready(
        &mut self,
        mut probe: impl FnMut(&Self) -> Result<(), String>,
    ) -> Result<(), Error> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                let refused = super::effective::refused(&self.log, self.log_from, &self.settings);
                if !refused.is_empty() {
                    return Err(Error::Run(format!(
                        "the managed {:?} server refused its settings and exited ({status}): {}",
                        self.kind,
                        refused
                            .iter()
                            .map(|(name, line)| format!(
                                "setting {name}: the server's log says: {line}{}",
                                super::effective::replacement(self.kind, name)
                                    .map(|r| format!(" ({r})"))
                                    .unwrap_or_default()
                            ))
                            .collect::<Vec<_>>()
                            .join("; ")
                    )));
                }
                return Err(Error::Run(format!(
                    "the managed {:?} server exited ({status}) before accepting connections; last lines of {}:\n{}",
                    self.kind,
                    self.log.display(),
                    self.log_tail(15)
                )));
            }
            let last = match probe(self) {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if Instant::now() >= deadline {
                return Err(Error::Run(format!(
                    "the managed {:?} server did not accept connections within {} s ({last}); last lines of {}:\n{}",
                    self.kind,
                    READY_TIMEOUT.as_secs(),
                    self.log.display(),
                    self.log_tail(15)
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        if self.created_dir && !self.keep {
            self.abandon();
            let _ = fs::remove_dir_all(&self.dir);
        } else {
            self.stop();
            if self.keep {
                eprintln!("managed server data kept in {}", self.dir.display());
            }
        }
    }
}

/// `root` and its child processes.
///
/// Read from `/proc/ROOT/task/*/children` (the children each of its threads forked): a file
/// per thread of the server, where scanning /proc reads the stat of every process on the host,
/// once a second while sampling. A kernel built without `CONFIG_PROC_CHILDREN` has no such
/// files: then the scan.
pub fn process_tree(root: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{root}/task")) else {
        return vec![root]; // gone (or never was): no children to find either
    };
    children_listed(root, tasks).unwrap_or_else(|| children_scanned(root))
}

/// `root` and the children its threads' `children` files list; None when they have none.
fn children_listed(root: u32, tasks: fs::ReadDir) -> Option<Vec<u32>> {
    let mut pids = vec![root];
    let mut listed = false;
    for task in tasks.flatten() {
        // A thread that ended since the listing has no file: its children are its process's.
        let Ok(text) = fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        listed = true;
        pids.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    listed.then_some(pids)
}

/// `root` and the processes whose parent it is, from every process's stat.
fn children_scanned(root: u32) -> Vec<u32> {
    let mut pids = vec![root];
    if let Ok(entries) = fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let stat = fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // The parent pid is the second field after the parenthesised command name.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            if ppid == Some(root) {
                pids.push(pid);
            }
        }
    }
    pids
}

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: u32) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|state| state != "Z")
}

fn forget_running(pid: u32) {
    if let Ok(mut r) = RUNNING.lock() {
        r.retain(|(p, _)| *p != pid);
    }
}

/// Parses `name=value` of `--server-set`.
pub fn parse_setting(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' is not name=value"))?;
    let name = name.trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return Err(format!("'{name}' is not a setting name"));
    }
    if value.contains('\n') {
        return Err(format!("the value of '{name}' spans lines"));
    }
    let canonical = name.to_ascii_lowercase().replace('-', "_");
    if OWN_SETTINGS.contains(&canonical.as_str()) {
        return Err(format!(
            "'{name}' is dbsweep's to set: a managed server listens, logs and keeps its data \
             where dbsweep looks for them (its own port, socket and directory)"
        ));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// Settings that say where a managed server listens, logs and keeps its files: dbsweep writes
/// them, and a server told otherwise would never be found (`port`, `skip_networking`).
const OWN_SETTINGS: [&str; 16] = [
    "port",
    "socket",
    "bind_address",
    "skip_networking",
    "datadir",
    "pid_file",
    "log_error",
    "tmpdir",
    "basedir",
    "secure_file_priv",
    "listen_addresses",
    "unix_socket_directories",
    "data_directory",
    "hba_file",
    "ident_file",
    "external_pid_file",
];

/// Whether `dir` is on a file system kept in memory (tmpfs, ramfs).
fn in_memory(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: statfs(2) with a NUL-terminated path and a zeroed struct it fills in.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    /// ramfs's magic number (linux/magic.h), which the libc crate does not define.
    const RAMFS_MAGIC: libc::__fsword_t = 0x8584_58f6;
    matches!(st.f_type, libc::TMPFS_MAGIC | RAMFS_MAGIC)
}

/// Starts a managed server, saying so on stderr.
pub(crate) fn start(spec: &ServerSpec) -> Result<ManagedServer, Error> {
    eprintln!("Starting a managed {:?} server...", spec.kind);
    let server = ManagedServer::start(spec)?;
    eprintln!(
        "{} running on 127.0.0.1:{} in {}",
        server.version,
        server.port,
        server.dir.display()
    );
    for w in &server.setting_warnings {
        eprintln!("warning: {w}");
    }
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Children forked by the main thread and by another thread are both found, as the scan of
    /// /proc finds them.
    #[test]
    fn process_tree_lists_the_children_of_every_thread() {
        let cat = || {
            Command::new("cat")
                .stdin(Stdio::piped())
                .spawn()
                .expect("cat starts")
        };
        let mut here = cat();
        let mut there = std::thread::spawn(cat)
            .join()
            .expect("the thread spawns cat");
        let me = std::process::id();
        let tasks = fs::read_dir(format!("/proc/{me}/task")).expect("our own task list");
        let listed = children_listed(me, tasks).expect("this kernel lists children");
        let scanned = children_scanned(me);
        for child in [&here, &there] {
            assert!(
                listed.contains(&child.id()),
                "{listed:?} lacks {}",
                child.id()
            );
            assert!(
                scanned.contains(&child.id()),
                "{scanned:?} lacks {}",
                child.id()
            );
        }
        assert_eq!(process_tree(me)[0], me);
        for c in [&mut here, &mut there] {
            drop(c.stdin.take());
            c.wait().expect("cat ends");
        }
        // No such process (above the kernel's largest pid): itself alone, nothing scanned.
        assert_eq!(process_tree(u32::MAX), vec![u32::MAX]);
    }
}
