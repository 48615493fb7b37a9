//! Which SQLite connections this process has open, and the thread, if any, that has a file
//! table of its own while it runs a lone client (`own_file_table`). Below both `sqlite` and
//! `sqlite_turns`, whose connections it counts.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{DbError, ErrorClass};

/// SQLite connections open in this process, and the thread, if any, that has taken a file table
/// of its own (see [`own_file_table`]).
struct Openings {
    open: usize,
    owner: Option<std::thread::ThreadId>,
}

static OPENINGS: Mutex<Openings> = Mutex::new(Openings {
    open: 0,
    owner: None,
});

/// Whether [`own_file_table`] may split the file table: only in dbsweep's own process, where
/// every SQLite connection is opened here and its users are known (see `allow_own_file_table`).
static OWN_FILE_TABLES: AtomicBool = AtomicBool::new(false);

fn openings() -> MutexGuard<'static, Openings> {
    // Two integers, consistent after any panic.
    OPENINGS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A connection of this process is closed (its Drop, after SQLite freed it).
pub(in crate::db) fn closed() {
    let mut o = openings();
    o.open = o.open.saturating_sub(1);
}

/// Lets a lone client's thread take a file table of its own ([`own_file_table`]), or not:
/// allowed by dbsweep's `main` (and by benchmarks that run dbsweep's runner as it does), never
/// by a library user whose other threads may hold SQLite connections dbsweep cannot see.
pub fn allow_own_file_table(allow: bool) {
    OWN_FILE_TABLES.store(allow, Ordering::Relaxed);
}

/// While held, the calling thread has a file table of its own, and it alone may open SQLite
/// connections in this process. Dropped on that thread (it cannot move to another), after its
/// connections are closed.
pub struct OwnFileTable(std::marker::PhantomData<*const ()>);

/// For the only client of a run on embedded SQLite: gives the calling thread a file table of
/// its own (`unshare(CLONE_FILES)`), as a single-threaded program has. Once a process's threads
/// share one table, the kernel takes and drops a reference on every file for every read, lock
/// and stat (fdget/fput), four calls per point select: 2-4% of its time, measured with
/// bench/sqlite_limit and with `dbsweep run` at one client (6 pairs, 355k-361k against
/// 362k-372k queries/s), a cost of the client's threads and not of SQLite.
///
/// Safe only while no other thread uses SQLite: SQLite keeps one set of locks per file for
/// the whole process (POSIX locks belong to a file table) and shares descriptors between a
/// file's connections. So it is taken only when the process has no SQLite connection open,
/// and until it is dropped, a connection opened by any other thread is refused. None when
/// that does not hold (or outside dbsweep's own process): the client then runs as before.
pub fn own_file_table() -> Option<OwnFileTable> {
    if !OWN_FILE_TABLES.load(Ordering::Relaxed) {
        return None;
    }
    let mut o = openings();
    if o.open != 0 || o.owner.is_some() {
        return None;
    }
    // SAFETY: unshare(2) with CLONE_FILES copies this thread's descriptor table; nothing else
    // of the process changes.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return None;
    }
    o.owner = Some(std::thread::current().id());
    Some(OwnFileTable(std::marker::PhantomData))
}

impl Drop for OwnFileTable {
    fn drop(&mut self) {
        let mut o = openings();
        // A connection this thread opened and left open would outlive the descriptors it
        // uses when the thread ends (its table goes with it): the same number in the other
        // table may name any file. A bug; the process stops rather than write through it.
        assert_eq!(
            o.open, 0,
            "an SQLite connection outlived the thread that opened it in a file table of its own"
        );
        o.owner = None;
    }
}

/// A connection to `path` is about to be opened: counted (undone by [`closed`] when it fails
/// or is freed), or refused while another thread has a file table of its own.
pub(in crate::db) fn opening(path: &Path) -> Result<(), DbError> {
    let mut o = openings();
    if o.owner.is_some_and(|t| t != std::thread::current().id()) {
        return Err(DbError::new(
            ErrorClass::Fatal,
            "in use",
            format!(
                "cannot open {} now: the run's only client has this process's SQLite files to \
                 itself until it ends",
                path.display()
            ),
        ));
    }
    o.open += 1;
    Ok(())
}
