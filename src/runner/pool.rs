//! `--connections M`: clients share M connections, as a transaction monitor does. A client
//! takes a free connection for one event and gives it back; the time it waits for one is in its
//! latency (which runs from its due instant) and is recorded apart as queue time.
//!
//! A client's prepared statements must run on whichever connection it gets. Clients are made on
//! a [`Pooled`] connection, whose `prepare` only registers the statement's text in the run's
//! [`Registry`] and hands out the registry's number; each pooled connection prepares a
//! registered statement on the server once (all of them before the run, any other the first
//! time it is used) and maps the number to its own.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::db::QueryCounts;
use crate::db::{
    Conn, Count, DbError, Dialect, ErrorClass, OnRow, Param, RowValue, StmtId, StmtOutcome, TextRow,
};

/// The statements of a run's pooled clients, numbered in the order they were first prepared.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<(Vec<String>, HashMap<String, usize>)>,
}

impl Registry {
    fn register(&self, sql: &str) -> usize {
        let mut g = self.inner.lock().expect("registry lock");
        let (texts, ids) = &mut *g;
        match ids.entry(sql.to_string()) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                texts.push(sql.to_string());
                *e.insert(texts.len() - 1)
            }
        }
    }

    fn text(&self, id: usize) -> Option<String> {
        self.inner.lock().expect("registry lock").0.get(id).cloned()
    }

    fn len(&self) -> usize {
        self.inner.lock().expect("registry lock").0.len()
    }
}

/// One connection of the pool: a server connection, and the statements it has prepared by
/// registry number.
pub struct Pooled {
    conn: Box<dyn Conn>,
    local: Vec<Option<StmtId>>,
    registry: Arc<Registry>,
    /// Whether this connection's measured page cache count has started (its counters reset
    /// when a measured event first took it).
    measured: bool,
}

impl Pooled {
    pub fn new(conn: Box<dyn Conn>, registry: Arc<Registry>) -> Pooled {
        Pooled {
            conn,
            local: Vec::new(),
            registry,
            measured: false,
        }
    }

    /// Prepares every registered statement not prepared here yet, so that no measured event
    /// pays for it.
    pub fn prepare_registered(&mut self) -> Result<(), DbError> {
        for id in 0..self.registry.len() {
            self.local(StmtId(id))?;
        }
        Ok(())
    }

    /// This connection's statement for registry number `id`, prepared on first use.
    #[inline]
    fn local(&mut self, id: StmtId) -> Result<StmtId, DbError> {
        if let Some(Some(own)) = self.local.get(id.0) {
            return Ok(*own);
        }
        let sql = self.registry.text(id.0).ok_or_else(|| {
            DbError::new(
                ErrorClass::Fatal,
                "pooled connection",
                format!("statement {} was never prepared", id.0),
            )
        })?;
        let own = self.conn.prepare(&sql)?;
        if self.local.len() <= id.0 {
            self.local.resize(id.0 + 1, None);
        }
        self.local[id.0] = Some(own);
        Ok(own)
    }
}

impl Conn for Pooled {
    fn dialect(&self) -> Dialect {
        self.conn.dialect()
    }
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        Ok(StmtId(self.registry.register(sql)))
    }
    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let own = self.local(stmt)?;
        self.conn.query(own, params)
    }
    fn query_each(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<u64, DbError> {
        let own = self.local(stmt)?;
        self.conn.query_each(own, params, on_row)
    }
    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let own = self.local(stmt)?;
        self.conn.execute(own, params)
    }
    fn counted(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        count: Count,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let own = self.local(stmt)?;
        self.conn.counted(own, params, count, q)
    }
    fn sync(&mut self, q: &mut QueryCounts) -> Result<(), DbError> {
        self.conn.sync(q)
    }
    fn pipeline_queue(&mut self, stmt: StmtId, params: &[Param]) -> Result<(), DbError> {
        let own = self.local(stmt)?;
        self.conn.pipeline_queue(own, params)
    }
    fn pipeline_sync(&mut self) {
        self.conn.pipeline_sync()
    }
    fn pipeline_send(
        &mut self,
        syncs: usize,
        done: &mut dyn FnMut(StmtOutcome),
    ) -> Result<(), (usize, DbError)> {
        self.conn.pipeline_send(syncs, done)
    }
    fn pipeline_discard(&mut self) {
        self.conn.pipeline_discard()
    }
    fn begin(&mut self, write: bool) -> Result<(), DbError> {
        self.conn.begin(write)
    }
    fn commit(&mut self) -> Result<(), DbError> {
        self.conn.commit()
    }
    fn rollback(&mut self) -> Result<(), DbError> {
        self.conn.rollback()
    }
    fn simple(&mut self, sql: &str, on_row: OnRow) -> Result<StmtOutcome, DbError> {
        self.conn.simple(sql, on_row)
    }
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn.batch(sql)
    }
    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        self.conn.query_i64(sql)
    }
    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        self.conn.query_text(sql)
    }
    fn query_rows(
        &mut self,
        sql: &str,
        columns: usize,
    ) -> Result<Vec<Vec<Option<String>>>, DbError> {
        self.conn.query_rows(sql, columns)
    }
    /// The page cache counters of a shared connection belong to no one client: a reset starts
    /// this connection's measured count (once, when a measured event first takes it), and the
    /// run sums the counts of its connections at the end (SQLite only: its connections are
    /// in-process).
    fn cache_counters(&mut self, reset: bool) -> Option<[u64; 3]> {
        if reset {
            if !self.measured {
                self.measured = true;
                self.conn.cache_counters(true);
            }
            return None;
        }
        self.measured
            .then(|| self.conn.cache_counters(false))
            .flatten()
    }
    fn table_exists(&mut self, name: &str) -> Result<bool, DbError> {
        self.conn.table_exists(name)
    }
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.conn.bulk_load(table, columns, next_row)
    }
    fn tls(&self) -> Option<String> {
        self.conn.tls()
    }
}

/// The free connections of a pool, and the clients' wait for one.
#[derive(Default)]
pub struct ConnPool {
    free: Mutex<Vec<Box<dyn Conn>>>,
    returned: Condvar,
}

impl ConnPool {
    pub fn put(&self, conn: Box<dyn Conn>) {
        self.free.lock().expect("pool lock").push(conn);
        self.returned.notify_one();
    }

    /// A free connection, waiting for one until `until` or until `stopped` says so (looking
    /// at least every 100 ms); None then.
    pub fn take(
        &self,
        until: Option<Instant>,
        stopped: &dyn Fn() -> bool,
    ) -> Option<Box<dyn Conn>> {
        let mut free = self.free.lock().expect("pool lock");
        loop {
            if stopped() {
                return None;
            }
            if let Some(conn) = free.pop() {
                return Some(conn);
            }
            let now = Instant::now();
            let mut wait = Duration::from_millis(100);
            if let Some(u) = until {
                if now >= u {
                    return None;
                }
                wait = wait.min(u - now);
            }
            free = self.returned.wait_timeout(free, wait).expect("pool lock").0;
        }
    }

    /// Closes every connection; returns the page cache counters of their measured use summed
    /// (None where the database keeps none). Called when every client has given its
    /// connection back.
    pub fn close(&self) -> Option<[u64; 3]> {
        let conns = std::mem::take(&mut *self.free.lock().expect("pool lock"));
        let mut sum: Option<[u64; 3]> = None;
        for mut c in conns {
            if let Some(counts) = c.cache_counters(false) {
                let s = sum.get_or_insert([0; 3]);
                for (s, v) in s.iter_mut().zip(counts) {
                    *s += v;
                }
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_made_on_one_pooled_connection_run_on_another() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("p.db").display());
        let target = crate::db::open(
            &url,
            crate::db::OpenOptions {
                create: true,
                ..Default::default()
            },
        )
        .expect("open");
        let mut setup = target.connect().expect("connect");
        setup
            .batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t VALUES (1, 10), (2, 20);")
            .expect("table");
        let registry = Arc::new(Registry::default());
        let mut a = Pooled::new(target.connect().expect("a"), registry.clone());
        let mut b = Pooled::new(target.connect().expect("b"), registry.clone());
        // Made on `a`: numbers from the registry, the same text the same number.
        let one = a.prepare("SELECT v FROM t WHERE id = 1").expect("prepare");
        let two = a.prepare("SELECT v FROM t WHERE id = ?").expect("prepare");
        assert_eq!(a.prepare("SELECT v FROM t WHERE id = 1").ok(), Some(one));
        b.prepare_registered()
            .expect("b prepares what a registered");
        let mut seen = Vec::new();
        b.query_each(two, &[Param::Int(2)], &mut |r| {
            seen.push(r.get(0).map(<[u8]>::to_vec))
        })
        .expect("b runs a's statement");
        assert_eq!(seen, vec![Some(b"20".to_vec())]);
        // A statement registered later is prepared on first use.
        let three = b.prepare("SELECT count(*) FROM t").expect("prepare");
        assert_eq!(a.query(three, &[]).expect("a runs b's"), 1);
        assert!(
            a.query(StmtId(99), &[]).is_err(),
            "an unknown number is refused"
        );
    }

    #[test]
    fn a_client_waits_for_a_returned_connection_and_gives_up_at_its_bound() {
        let pool = Arc::new(ConnPool::default());
        let never = || false;
        let t0 = Instant::now();
        assert!(
            pool.take(Some(t0 + Duration::from_millis(30)), &never)
                .is_none()
        );
        assert!(t0.elapsed() >= Duration::from_millis(30));
        let (tx, rx) = std::sync::mpsc::channel();
        let p = pool.clone();
        let waiter = std::thread::spawn(move || {
            tx.send(()).expect("send");
            p.take(None, &|| false).map(|c| c.dialect())
        });
        rx.recv().expect("waiter started");
        pool.put(Box::new(crate::db::Detached(Dialect::Any)));
        assert_eq!(waiter.join().expect("join"), Some(Dialect::Any));
        let stop = || true;
        assert!(pool.take(None, &stop).is_none(), "a stopped run takes none");
    }
}
