//! The hidden `mock` target: no database, a fixed service time per statement, no IO. It exists
//! so that runner and metrics tests are exact; it is not listed in `--help`.
//!
//! URL: `mock://?service_us=N&rows=R&panic_connect=C` (defaults 0, 1, 0). A statement starting
//! with SELECT returns R rows; any other prepared statement changes one row; the C-th
//! connection panics.

use std::time::{Duration, Instant};

use super::conn::{Conn, Dialect, Param, RowValue, StmtId, Target};
use super::url::query_pairs;
use crate::error::DbError;
use crate::error::Error;

/// What `max(id)`-style probes answer: large enough that no table looks under-filled.
const MOCK_TABLE_ROWS: i64 = 1 << 40;

#[derive(Clone, Copy, Debug)]
pub struct MockTarget {
    service: Duration,
    rows: u64,
    /// The connection (counted from 1 in the process) whose opening panics: a bug on purpose,
    /// for the tests of what a panic in a thread does. 0: none.
    panic_connect: u64,
}

impl MockTarget {
    pub fn from_url(url: &str) -> Result<MockTarget, Error> {
        let rest = url.strip_prefix("mock://").unwrap_or_default();
        let query = rest.split_once('?').map(|(_, q)| q).unwrap_or("");
        let mut t = MockTarget {
            service: Duration::ZERO,
            rows: 1,
            panic_connect: 0,
        };
        for (name, value) in query_pairs(query, url)? {
            let number: u64 = value.parse().map_err(|_| {
                Error::Usage(format!(
                    "--target {url}: '{name}' needs a whole number, not '{value}'"
                ))
            })?;
            match name.as_str() {
                "service_us" => t.service = Duration::from_micros(number),
                "rows" => t.rows = number,
                "panic_connect" => t.panic_connect = number,
                _ => {
                    return Err(Error::Usage(format!(
                        "--target {url}: unknown mock parameter '{name}' (service_us, rows, panic_connect)"
                    )));
                }
            }
        }
        Ok(t)
    }
}

impl Target for MockTarget {
    fn dialect(&self) -> Dialect {
        Dialect::Any
    }

    fn display_url(&self) -> String {
        format!(
            "mock://?service_us={}&rows={}",
            self.service.as_micros(),
            self.rows
        )
    }

    fn shared(&self) -> std::sync::Arc<dyn Target> {
        std::sync::Arc::new(*self)
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        static CONNECTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = CONNECTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        assert!(
            n != self.panic_connect,
            "mock: connection {n} panics, as panic_connect asked"
        );
        // Wake from sleeps on time (the default timer slack adds up to 50 us per sleep).
        // SAFETY: prctl with PR_SET_TIMERSLACK only changes this thread's timer slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        Ok(Box::new(MockConn {
            target: *self,
            selects: Vec::new(),
        }))
    }

    fn version(&self, _conn: &mut dyn Conn) -> Result<String, DbError> {
        Ok(format!("mock {}", env!("CARGO_PKG_VERSION")))
    }
}

struct MockConn {
    target: MockTarget,
    /// For each prepared statement, whether it returns rows.
    selects: Vec<bool>,
}

impl MockConn {
    /// Takes the service time: sleeps through most of it and busy-waits the last stretch.
    /// Sleeping keeps the time exact on a loaded machine (a spinning thread gets preempted and
    /// overshoots by a scheduler slice); the short spin removes the wake-up jitter.
    fn serve(&self) {
        const SPIN: Duration = Duration::from_micros(150);
        let service = self.target.service;
        if service.is_zero() {
            return;
        }
        let end = Instant::now() + service;
        if service > SPIN {
            std::thread::sleep(service - SPIN);
        }
        while Instant::now() < end {
            std::hint::spin_loop();
        }
    }
}

impl Conn for MockConn {
    fn dialect(&self) -> Dialect {
        Dialect::Any
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        let select = sql
            .trim_start()
            .get(..6)
            .is_some_and(|w| w.eq_ignore_ascii_case("select"));
        self.selects.push(select);
        Ok(StmtId(self.selects.len() - 1))
    }

    fn query(&mut self, stmt: StmtId, _params: &[Param]) -> Result<u64, DbError> {
        self.serve();
        Ok(if self.selects[stmt.0] {
            self.target.rows
        } else {
            0
        })
    }

    /// Each row has no values (every column reads as NULL).
    fn query_each(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: &mut dyn FnMut(&dyn super::conn::TextRow),
    ) -> Result<u64, DbError> {
        struct NoValues;
        impl super::conn::TextRow for NoValues {
            fn get(&self, _i: usize) -> Option<&[u8]> {
                None
            }
            fn len(&self) -> usize {
                0
            }
        }
        let rows = self.query(stmt, params)?;
        for _ in 0..rows {
            on_row(&NoValues);
        }
        Ok(rows)
    }

    fn execute(&mut self, stmt: StmtId, _params: &[Param]) -> Result<u64, DbError> {
        self.serve();
        Ok(if self.selects[stmt.0] { 0 } else { 1 })
    }

    fn begin(&mut self, _write: bool) -> Result<(), DbError> {
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        Ok(())
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        Ok(())
    }

    fn simple(
        &mut self,
        _sql: &str,
        _on_row: super::conn::OnRow,
    ) -> Result<super::conn::StmtOutcome, DbError> {
        self.serve();
        Ok(super::conn::StmtOutcome::default())
    }

    fn batch(&mut self, _sql: &str) -> Result<(), DbError> {
        Ok(())
    }

    fn query_i64(&mut self, _sql: &str) -> Result<Option<i64>, DbError> {
        Ok(Some(MOCK_TABLE_ROWS))
    }

    fn query_rows(
        &mut self,
        _sql: &str,
        _columns: usize,
    ) -> Result<Vec<Vec<Option<String>>>, DbError> {
        Ok(Vec::new())
    }

    fn table_exists(&mut self, _name: &str) -> Result<bool, DbError> {
        Ok(true)
    }

    fn bulk_load(
        &mut self,
        _table: &str,
        _columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        let mut row = Vec::new();
        let mut n = 0;
        while next_row(&mut row) {
            n += 1;
        }
        Ok(n)
    }
}
