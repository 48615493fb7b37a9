//! Running a statement outside the prepared path (its rows as text, the schema brought up to
//! date where another connection changed it), the page cache's counters, and SQLite's errors
//! in the classes the runner acts on.

use std::sync::atomic::Ordering;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, Statement};

use crate::error::{DbError, ErrorClass};

/// Runs an unprepared statement `st` of `conn`, its rows to `on_row` with their column names.
/// `sql` prepared on `conn`, against the schema as it is now: a connection compiles against
/// the schema it read last, and a table another connection of this process changed since (the
/// shared writer's DDL under `lock_wait` turns) makes the compile fail ("table T has 3 columns
/// but 1 values were supplied"). On a failure, a read of the schema brings it up to date and
/// the statement is prepared again (the hot path never fails here).
pub(super) fn prepare_fresh<'c>(
    conn: &'c Connection,
    sql: &str,
) -> rusqlite::Result<Statement<'c>> {
    match conn.prepare(sql) {
        Ok(st) => Ok(st),
        Err(first) => {
            let _ = conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()));
            conn.prepare(sql).map_err(|_| first)
        }
    }
}

pub(super) fn run_simple(
    mut st: Statement<'_>,
    conn: &Connection,
    text: &mut RowText,
    on_row: crate::db::conn::OnRow,
) -> rusqlite::Result<crate::db::conn::StmtOutcome> {
    let columns = st.column_count();
    text.names.truncate(columns);
    for i in 0..columns {
        let name = st.column_name(i)?;
        match text.names.get_mut(i) {
            Some(n) if n == name => {}
            Some(n) => *n = name.to_string(),
            None => text.names.push(name.to_string()),
        }
    }
    let mut rows = st.query([])?;
    let mut n = 0;
    while let Some(row) = rows.next()? {
        text.fill(row, columns)?;
        on_row(text);
        n += 1;
    }
    drop(rows);
    Ok(crate::db::conn::StmtOutcome {
        rows: n,
        changed: if columns == 0 { conn.changes() } else { 0 },
    })
}

/// SQLite's page cache hits, misses and writes of connection `conn` (reset to zero with
/// `reset`).
pub(super) fn db_cache_counters(conn: &Connection, reset: bool) -> Option<[u64; 3]> {
    use rusqlite::ffi;
    let mut out = [0u64; 3];
    for (slot, op) in out.iter_mut().zip([
        ffi::SQLITE_DBSTATUS_CACHE_HIT,
        ffi::SQLITE_DBSTATUS_CACHE_MISS,
        ffi::SQLITE_DBSTATUS_CACHE_WRITE,
    ]) {
        let (mut cur, mut high) = (0, 0);
        // SAFETY: the handle is an open connection's, used by the one thread using it now.
        let rc = unsafe {
            ffi::sqlite3_db_status(conn.handle(), op, &mut cur, &mut high, i32::from(reset))
        };
        if rc != ffi::SQLITE_OK {
            return None;
        }
        *slot = u64::try_from(cur).unwrap_or(0);
    }
    Some(out)
}

/// The first `columns` values of every row of `sql`, as text (NULL as None).
pub(super) fn rows_as_text(
    conn: &Connection,
    sql: &str,
    columns: usize,
) -> Result<Vec<Vec<Option<String>>>, DbError> {
    let mut st = conn.prepare(sql).map_err(classify)?;
    let mut rows = st.query([]).map_err(classify)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(classify)? {
        out.push(
            (0..columns)
                .map(|i| match row.get_ref(i).ok()? {
                    ValueRef::Null => None,
                    ValueRef::Integer(v) => Some(v.to_string()),
                    ValueRef::Real(v) => Some(v.to_string()),
                    ValueRef::Text(t) | ValueRef::Blob(t) => {
                        Some(String::from_utf8_lossy(t).into_owned())
                    }
                })
                .collect(),
        );
    }
    Ok(out)
}

/// Maps a rusqlite error to a class: busy and locked are retryable, as are primary-key and
/// unique violations (delete/insert races); everything else is fatal.
pub(super) fn classify(e: rusqlite::Error) -> DbError {
    let (class, code) = match &e {
        rusqlite::Error::SqliteFailure(f, _) => {
            let class = match f.code {
                // The busy handler gives up at once after Ctrl-C: not a lock to retry.
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked
                    if crate::interrupt::INTERRUPT.load(Ordering::Relaxed) =>
                {
                    return DbError::new(
                        ErrorClass::Fatal,
                        "interrupted",
                        "interrupted while waiting for a lock on the database",
                    );
                }
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => ErrorClass::Busy,
                ErrorCode::ConstraintViolation
                    if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                        || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
                {
                    ErrorClass::DuplicateKey
                }
                _ => ErrorClass::Fatal,
            };
            (class, format!("SQLite error {}", f.extended_code))
        }
        _ => (ErrorClass::Fatal, "rusqlite".to_string()),
    };
    DbError::new(class, code, e.to_string())
}

/// A row's values as text, in buffers reused from row to row.
#[derive(Default)]
pub(super) struct RowText {
    text: Vec<u8>,
    cells: Vec<Option<(usize, usize)>>,
    /// The result set's column names, kept from one statement to the next while they match.
    names: Vec<String>,
}

impl RowText {
    pub(super) fn fill(&mut self, row: &rusqlite::Row, columns: usize) -> rusqlite::Result<()> {
        use rusqlite::types::ValueRef;
        use std::io::Write;
        self.text.clear();
        self.cells.clear();
        for i in 0..columns {
            let start = self.text.len();
            let t = &mut self.text;
            // Writing to a Vec cannot fail.
            let present = match row.get_ref(i)? {
                ValueRef::Null => false,
                ValueRef::Integer(v) => write!(t, "{v}").is_ok(),
                ValueRef::Real(v) => write!(t, "{v}").is_ok(),
                ValueRef::Text(b) | ValueRef::Blob(b) => {
                    t.extend_from_slice(b);
                    true
                }
            };
            self.cells.push(present.then_some((start, self.text.len())));
        }
        Ok(())
    }
}

impl crate::db::conn::TextRow for RowText {
    fn len(&self) -> usize {
        self.cells.len()
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let (a, b) = (*self.cells.get(i)?)?;
        self.text.get(a..b)
    }

    fn name(&self, i: usize) -> Option<&str> {
        self.names.get(i).map(String::as_str)
    }
}
