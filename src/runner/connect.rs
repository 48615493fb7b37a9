//! Connecting the clients: each worker its share (workers mode), or the pooled connections
//! opened at the connect rate; the progress bar of many clients; the memory check before any of
//! it; the hint for a server-wide limit met while they connect.

use std::sync::atomic::{AtomicU32, Ordering};

use super::worker::{Shared, Worker};
use super::{RunnerOptions, pool};
use crate::db::Target;
use crate::error::Error;

/// Workers mode: connects clients, taking the next client number from `next`, until every
/// client is connected or the run is stopped.
pub(super) fn connect_share(
    sh: &Shared,
    next: &AtomicU32,
    clients: u32,
    seed: u64,
) -> Result<Vec<Worker>, crate::db::DbError> {
    let mut mine = Vec::new();
    while !sh.stopped() {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= clients {
            break;
        }
        mine.push(Worker::connect(sh, i, seed)?);
    }
    Ok(mine)
}

/// What to change when the clients could not start for a server-wide limit.
pub(super) fn start_hint(e: &str) -> &'static str {
    if e.contains("max_prepared_stmt_count") {
        // MySQL's server-wide limit of prepared statements is met by many clients first.
        " (each client prepares its statements: raise the server's max_prepared_stmt_count, let the clients share fewer connections with --connections, or use text statements with --ps-mode disable)"
    } else if e.contains("(53300)") || e.contains("(1040 (") {
        // PostgreSQL's SQLSTATE; MySQL's error number with its SQLSTATE after it.
        // The check before the run found the connections free; others took them since.
        " (the server's max_connections was reached while the clients connected, though enough were free when dbsweep checked: other sessions connected meanwhile; raise max_connections or let the clients share fewer with --connections)"
    } else {
        ""
    }
}

/// Pooled mode: opens the `--connections` at the connect rate, makes every client on the first
/// of them (which only registers their statements) and prepares the statements on each.
pub(super) fn open_pool(
    sh: &Shared,
    opts: &RunnerOptions,
    pool: &pool::ConnPool,
    progress: &Progress,
) -> Result<Vec<Worker>, Error> {
    let url = sh.target.display_url();
    let failed = |e: crate::db::DbError| {
        let e = e.to_string();
        Error::Run(format!(
            "could not start the clients on {url}: {e}{}",
            start_hint(&e)
        ))
    };
    let registry = sh.registry.clone().expect("a pooled run has a registry");
    let mut conns = Vec::with_capacity(opts.shared_connections() as usize);
    for _ in 0..opts.shared_connections() {
        if sh.stopped() {
            break;
        }
        sh.connects.wait(&|| sh.stopped());
        let conn = sh.target.connect().map_err(failed)?;
        conns.push(pool::Pooled::new(conn, registry.clone()));
        progress.set(conns.len() as u64);
    }
    let mut clients = Vec::new();
    if let Some(first) = conns.first_mut() {
        let dialect = crate::db::Conn::dialect(first);
        clients.reserve(opts.threads as usize);
        for i in 0..opts.clients() {
            let client = sh.workload.client_on(first, i, sh.target).map_err(failed)?;
            clients.push(Worker::with(
                i,
                Box::new(crate::db::Detached(dialect)),
                client,
                opts.rand_seed,
            ));
        }
    }
    for mut c in conns {
        c.prepare_registered().map_err(failed)?;
        pool.put(Box::new(c));
    }
    Ok(clients)
}

/// The progress bar of connecting many clients (on a terminal only; none for a few).
pub(super) struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    pub(super) fn new(total: u32, notes: crate::output::Events) -> Progress {
        use std::io::IsTerminal;
        let show = total >= 100 && std::io::stderr().is_terminal() && notes.progress_bars();
        Progress(show.then(|| {
            let bar = indicatif::ProgressBar::new(u64::from(total));
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "connecting {pos}/{len} [{bar:30}] {per_sec} eta {eta}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        }))
    }

    pub(super) fn set(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.set_position(n);
        }
    }

    pub(super) fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// What a worker thread's stack holds once it runs (its 2 MiB are reserved, not touched).
pub(super) const WORKER_STACK: u64 = 128 << 10;

/// Refuses a run whose `connections` and `workers` need more memory than `available` (the
/// machine's available memory, where known): 5,000 SQLite clients would take the machine's
/// memory and run nothing. Each connection holds what its target says; each worker a recorder
/// of `recorder_bytes` and its stack.
pub(super) fn check_memory(
    target: &dyn Target,
    (connections, workers): (u32, u32),
    recorder_bytes: u64,
    available: Option<u64>,
) -> Result<(), Error> {
    let Some(available) = available else {
        return Ok(());
    };
    let per_connection = target.client_memory();
    // Two recorders a client (its own and the one the reporter swaps in).
    let per_worker = 2 * recorder_bytes + WORKER_STACK;
    let need = u64::from(connections)
        .saturating_mul(per_connection)
        .saturating_add(u64::from(workers).saturating_mul(per_worker));
    if need <= available {
        return Ok(());
    }
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    Err(Error::Usage(format!(
        "{connections} client connection(s) on {} need about {:.0} MiB ({:.1} MiB per connection, \
         {:.1} MiB per client thread for its histograms and stack), more than the {:.0} MiB this \
         machine has available: use fewer clients{}",
        target.kind(),
        mib(need),
        mib(per_connection),
        mib(per_worker),
        mib(available),
        if target.dialect() == crate::db::Dialect::Sqlite {
            ", or a smaller cache_size in the URL"
        } else {
            ", or --workers to share threads among them"
        }
    )))
}
