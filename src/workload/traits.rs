//! What a workload is: the [`Workload`] trait (its tables, load, checks and clients) and the
//! [`Client`] trait each client runs its events with.

use crate::db::QueryCounts;
use crate::error::Error;
use std::sync::atomic::AtomicBool;

use super::options::WorkloadOptions;
use super::rand::Rand;
use super::tables::{self, TableSet};
use crate::db::{Conn, DbError, Target};
use crate::results::figures::LoadReport;
/// One client's state: its prepared statements and buffers. Created on the client's own
/// connection, and created again after a reconnect.
pub trait Client: Send {
    /// What the client carries over to the client prepared on its next connection
    /// (`--reconnect`, a lost connection): pgbench's variables live as long as its client,
    /// whatever its connections. Given to the new client's [`Client::take_over`].
    fn hand_over(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        None
    }
    /// Takes what the client before it on the same thread handed over.
    fn take_over(&mut self, _from: Box<dyn std::any::Any + Send>) {}

    /// Runs one event, counting its queries into `q`. On error the runner rolls back and
    /// either retries the event or stops.
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError>;

    /// [`Client::event`] started at `start` (the runner's clock read just before): a client
    /// that times its statements starts its first statement's time there rather than reading
    /// the clock again, and returns the end of its last statement, which the runner takes as
    /// the event's end. Two clock reads fewer per event: half the runner's own cost of a
    /// point select on the mock target, about 1% of one on SQLite (bench/sqlite_limit).
    fn timed_event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
        _start: crate::clock::Stamp,
    ) -> Result<Option<crate::clock::Stamp>, DbError> {
        self.event(conn, rand, q).map(|()| None)
    }

    /// Called after the runner rolled back a failed event, so that state tied to the open
    /// transaction can be reset.
    fn rolled_back(&mut self) {}

    /// Called when the event that failed is tried again (after [`Client::rolled_back`]): a
    /// client that retries the same transaction (pgbench's) runs its next event as the
    /// failed one, from the same random state.
    fn will_retry(&mut self) {}

    /// After an event that succeeded and was counted: an error that ends this client alone
    /// (pgbench's client whose script ended inside a transaction block), or None to go on.
    fn abort_after(&mut self) -> Option<crate::db::DbError> {
        None
    }

    /// For workloads of several transaction types (TPC-C): the type of the event that just
    /// ran (an index into [`Workload::kinds`]) and whether it ended in an expected rollback.
    fn last_kind(&self) -> Option<(usize, bool)> {
        None
    }

    /// The statements of the event that just ran, timed: (kind, nanoseconds) pairs, the kind
    /// an index into [`Workload::statements`]. Empty for workloads that do not time them.
    fn statement_times(&self) -> &[(u16, u64)] {
        &[]
    }

    /// Where the last event's error came from, for a client of scripts: its script, the
    /// command in it, and that command's index in [`Workload::statements`].
    fn error_at(&self) -> Option<ErrorAt> {
        None
    }

    /// Whether this client has stopped on its own (a script's `event` returned true).
    fn stopped(&self) -> bool {
        false
    }

    /// Time to wait before the next event, outside its latency (TPC-C's keying and think
    /// times under --wait).
    fn pause(&mut self, _rand: &mut Rand) -> Option<std::time::Duration> {
        None
    }

    /// Page cache counters (SQLite) of the connections the client opened itself, as
    /// [`Conn::cache_counters`] gives them; `None` when it runs on the runner's connection
    /// (every built-in workload). A sysbench script opens its own.
    fn own_cache_counters(&mut self, _reset: bool) -> Option<Option<[u64; 3]>> {
        None
    }

    /// What the run should hear when the client ends (sql-bench ATIS's row counts that are
    /// not the original's), handed to the personality's printer: a workload never prints.
    fn warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// Called once when the client stops (bulk_insert commits its open batch; a script runs
    /// `thread_done`). Queries it counts into `q` belong to the run, as sysbench counts them.
    fn finish(&mut self, _conn: &mut dyn Conn, _q: &mut QueryCounts) -> Result<(), DbError> {
        Ok(())
    }

    /// Runs the client's own event loop, if it has one (a sysbench script's `thread_run`),
    /// asking `ctl` for each event and telling it when each starts and ends; None when the
    /// client has none and the runner calls [`Client::event`] instead. An error ends the
    /// client: there is no event to retry.
    fn own_loop(&mut self, _ctl: &mut dyn EventLoop) -> Option<Result<(), DbError>> {
        None
    }
}

/// The runner's side of a loop that a client runs itself: the same pacing, deadline, event
/// limit, warm-up and recording as the runner's own loop.
pub trait EventLoop {
    /// Waits for the next event's turn and says whether to run it.
    fn next(&mut self) -> Next;
    /// The event starts now (its latency is measured from here, or from its scheduled time
    /// under `--rate`).
    fn start(&mut self);
    /// The event that started ended, with these queries.
    fn stop(&mut self, q: &QueryCounts);
}

/// What [`EventLoop::next`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Run,
    /// Run it: it is the first measured event, so the client's own cache counters (those of
    /// [`Client::own_cache_counters`]) start again from zero, warm-up left out.
    RunFirstMeasured,
    /// The run is over for this client.
    Done,
}

/// A built-in workload.
pub trait Workload: Send + Sync {
    fn name(&self) -> &'static str;
    /// The tables it uses, which prepare creates and cleanup drops.
    fn tables(&self) -> TableSet;
    /// Whether its tables may be empty when it starts (inserting workloads).
    fn accepts_empty_tables(&self) -> bool {
        false
    }
    /// Creates and loads its tables (`prepare`).
    fn prepare(
        &self,
        target: &dyn Target,
        opts: &WorkloadOptions,
        force: bool,
        stop: &AtomicBool,
    ) -> Result<LoadReport, Error> {
        tables::prepare(target, &self.tables(), opts, force, stop)
    }
    /// Checks the loaded tables after `prepare` (TPC-C's consistency conditions); callers run
    /// it outside the load's measurements.
    fn verify(&self, _target: &dyn Target) -> Result<(), Error> {
        Ok(())
    }
    /// What a run of it should be warned of before it starts (TPC-C's mix below the
    /// specification's least shares: the run does not conform).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// The consistency checks that must hold after a crash and the server's recovery (TPC-C's,
    /// but for the one a run in flight may break): None where the workload has none; Err says
    /// which failed, in the workload's words.
    fn verify_after_crash(&self, _target: &dyn Target) -> Option<Result<(), Error>> {
        None
    }
    /// Whether [`verify`](Self::verify) checks anything that a run may have broken, so that
    /// `dbsweep check` runs it (LinkBench's counts).
    fn checks(&self) -> bool {
        false
    }
    /// Drops its tables (`cleanup`); returns how many.
    fn cleanup(&self, target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
        tables::cleanup(target, &self.tables(), o)
    }
    /// Whether any of its tables is missing (a fresh managed server has none).
    fn tables_missing(&self, conn: &mut dyn Conn) -> Result<bool, DbError> {
        for (_, name) in self.tables().names() {
            if !conn.table_exists(&name)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
    /// Whether the files it reads of the user's (LinkBench's Distribution.dat, sql-bench's
    /// data files) are there and well formed: a sweep checks it of every step before it
    /// starts, so that a wrong path is one line then, not a failed step days later.
    fn inputs(&self) -> Result<(), Error> {
        Ok(())
    }
    /// Checks before a run that the tables are there and loaded; a usage error says what to do.
    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        opts: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        tables::check_ready(conn, &self.tables(), opts, self.accepts_empty_tables(), url)
    }
    /// Its own figures of a run, where it has any (TPC-C's NOPM, tpm and per-type figures):
    /// from the run's per-kind statistics and queue times ([`kinds`](Self::kinds)) over
    /// `seconds` with `terminals` clients.
    fn figures(
        &self,
        _kinds: &[crate::metrics::KindStats],
        _queue: &[crate::metrics::KindStats],
        _seconds: f64,
        _terminals: u32,
    ) -> Option<crate::results::TpccFigures> {
        None
    }
    /// The names of its transaction types, for workloads that mix several (TPC-C); the
    /// runner then records each type's latency and counts apart.
    fn kinds(&self) -> &'static [&'static str] {
        &[]
    }
    /// Of [`kinds`](Self::kinds), the one whose committed count per minute is the workload's
    /// headline figure (TPC-C's New-Order: NOPM), kept per interval with its latency.
    fn headline_kind(&self) -> Option<usize> {
        None
    }
    /// The kinds of statement its events run, for workloads whose clients time each
    /// statement ([`Client::statement_times`]); the runner keeps a histogram per kind.
    fn statements(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether its clients send each event's statements through [`Conn::counted`] and
    /// [`Conn::sync`], so that `--pipeline` can send them in one round trip.
    fn pipelines(&self) -> bool {
        false
    }
    /// Prepares client `thread`'s statements on `conn`.
    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError>;
    /// [`client`](Self::client) for a workload whose clients open connections of their own
    /// during their events (sql-bench's connect test): they get the run's `target` too.
    fn client_on(
        &self,
        conn: &mut dyn Conn,
        thread: u32,
        _target: &dyn Target,
    ) -> Result<Box<dyn Client>, DbError> {
        self.client(conn, thread)
    }
    /// Whether its clients open their own connections (a sysbench script's): the runner then
    /// opens none for them, and `conn` in [`Workload::client`] and [`Client::event`] is
    /// [`crate::db::Detached`].
    fn own_connections(&self) -> bool {
        false
    }
    /// Whether its clients can share connections (`--connections`): an event leaves nothing
    /// open on its connection, and [`Workload::client`] only prepares statements on it.
    fn shares_connections(&self) -> bool {
        !self.own_connections()
    }
    /// Runs `run` (one measured run of this workload) inside whatever the workload does around
    /// a run: a sysbench script's `init` before it and `done` after it, in its main state.
    fn around_run(
        &self,
        run: &mut dyn FnMut() -> Result<crate::results::Results, Error>,
    ) -> Result<crate::results::Results, Error> {
        run()
    }
}

/// The command of a script where an event's error came from (see [`Client::error_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorAt {
    pub script: usize,
    pub command: usize,
    pub statement: usize,
}
