//! The database a cell runs on: the target or the managed server started with the cell's
//! configuration, its memory limit and caches, and its reload when a crash took the data.

use std::fs;
use std::path::{Path, PathBuf};

use crate::measure::Db;
use crate::server::ManagedServer;
use crate::server::cgroup::MemoryCgroup;
/// A cell's database: the target (and the managed server behind it), its memory cgroup, and
/// the SQLite file dbsweep created for it.
pub(super) struct CellDb {
    pub(super) db: Db,
    /// Held until the server has stopped (dropped after `db`), then removed.
    pub(super) _cgroup: Option<MemoryCgroup>,
    pub(super) sqlite_file: Option<PathBuf>,
    pub(super) url: String,
    /// Whether dbsweep created this database (a load may then drop its sbtest tables).
    pub(super) own: bool,
    pub(super) notes: Vec<String>,
    /// The database's version string and the managed build's install tree, for the records.
    pub(super) version: Option<String>,
    pub(super) basedir: Option<String>,
}

impl CellDb {
    /// An external server's process and data directory, as a step's options (`server_pid`,
    /// `data_dir`) name them, so that its CPU and IO are sampled as a managed server's are.
    pub(super) fn follow(&mut self, plan: &crate::plan::RunPlan) {
        if self.db.server.is_none() {
            self.db.server_pid = plan.server_pid;
            self.db.data_dir.clone_from(&plan.data_dir);
        }
    }

    /// Where the managed server's log ends now (0 for other targets).
    pub(super) fn log_mark(&self) -> u64 {
        self.db.server.as_ref().map_or(0, ManagedServer::log_mark)
    }

    /// After a failed step: why the cell's managed server can no longer serve (its process
    /// ended, or it refuses connections, as a PostgreSQL in recovery does), with what its log
    /// said since `mark`. None while it serves (the step failed for a reason of its own) and
    /// for targets that dbsweep did not start.
    pub(super) fn server_failure(&mut self, mark: u64) -> Option<String> {
        let server = self.db.server.as_mut()?;
        let exited = server.exited();
        let answers = !exited && answers_within(&self.url, ANSWER_BOUND);
        if answers {
            return None;
        }
        // A killed server resets its connections while it exits, a moment before the kernel
        // reports the exit: the refused connection may have come first (up to 2 s for it).
        let exited = exited
            || (0..100).any(|_| {
                let gone = server.exited();
                if !gone {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                gone
            });
        let server = self.db.server.as_ref()?;
        let what = if exited {
            "the managed server exited"
        } else {
            "the managed server stopped answering"
        };
        Some(match server.log_cause(mark) {
            Some(line) => format!("{what}; its log: {line}"),
            None => format!(
                "{what} (its log says nothing more: {})",
                server.log.display()
            ),
        })
    }

    /// Removes the SQLite file of a finished cell.
    pub(super) fn finish(self, completed: bool) {
        let file = self.sqlite_file.clone();
        drop(self);
        if let (Some(f), true) = (file, completed) {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = f.clone().into_os_string();
                p.push(suffix);
                let _ = fs::remove_file(p);
            }
        }
    }
}

/// How long a managed server may take to answer `SELECT 1` after a failed step.
const ANSWER_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether the database at `url` accepts a connection and answers `SELECT 1` within `bound`
/// (or before Ctrl-C). The check runs on a thread of its own, left behind if the server
/// hangs: a server that accepts and never answers must not hold the sweep.
fn answers_within(url: &str, bound: std::time::Duration) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    let url = url.to_string();
    std::thread::spawn(move || {
        // Its own bounds: the answer is wanted within `bound`, whatever the sweep's are.
        let options = crate::db::OpenOptions::bounded(crate::db::Timeouts {
            connect: bound,
            query: Some(bound),
        });
        let ok = crate::db::open(&url, options)
            .ok()
            .and_then(|t| t.connect().ok())
            .is_some_and(|mut c| c.query_i64("SELECT 1").is_ok());
        let _ = tx.send(ok);
    });
    let deadline = std::time::Instant::now() + bound;
    while std::time::Instant::now() < deadline && !crate::interrupt::interrupted() {
        match rx.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(ok) => return ok,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return false,
        }
    }
    false
}

/// Puts the managed server's processes into a memory cgroup of `bytes`.
pub(super) fn limit_memory(
    server: &ManagedServer,
    bytes: u64,
    cell: &str,
) -> Result<(MemoryCgroup, String), String> {
    let cg = MemoryCgroup::create(&format!("dbsweep-{}-{cell}", std::process::id()), bytes)?;
    for pid in server.pids() {
        // A helper process may exit between the listing and the move: only live ones count.
        if let Err(e) = cg.add(pid)
            && Path::new(&format!("/proc/{pid}")).exists()
        {
            return Err(e);
        }
    }
    let limit = cg.limit().unwrap_or(bytes);
    Ok((
        cg,
        format!(
            "the server's processes are limited to {} MB of memory (cgroup)",
            limit >> 20
        ),
    ))
}

/// Writes back dirty pages and drops the OS page cache, so that reads come from the device.
/// Whether an error says a disk was full (the system's, SQLite's, PostgreSQL's, InnoDB's words).
pub(super) fn out_of_space(error: &str) -> bool {
    [
        "No space left on device",
        "database or disk is full",
        "could not extend file",
        "The table is full",
        "Disk full",
    ]
    .iter()
    .any(|m| error.contains(m))
}

pub(super) fn drop_caches() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("dropping the page cache needs root".into());
    }
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| format!("cannot write /proc/sys/vm/drop_caches: {e}"))
}
