//! The parallel load every workload's prepare shares: numbered jobs (a table, a warehouse)
//! taken in order by up to `--threads` writers, each on a connection of its own, as many as
//! the database takes at once, until every job is done or Ctrl-C stops them.

use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::db::{Conn, Target};
use crate::error::Error;

/// How many writers load `jobs` with `threads` asked for: no more than the jobs, nor than the
/// database takes at once (SQLite: one).
pub fn writers(target: &dyn Target, threads: u32, jobs: &RangeInclusive<u32>) -> usize {
    let count = jobs.clone().count();
    (threads as usize)
        .min(count)
        .min(target.max_writers())
        .max(1)
}

/// Runs `job` for every number of `jobs` on `writers` connections; the rows they loaded.
/// A job that fails ends its writer with the error; the others finish the job they hold.
pub fn run(
    target: &dyn Target,
    jobs: RangeInclusive<u32>,
    writers: usize,
    stop: &AtomicBool,
    job: impl Fn(&mut dyn Conn, u32) -> Result<u64, Error> + Sync,
) -> Result<u64, Error> {
    let next = AtomicU32::new(*jobs.start());
    let last = *jobs.end();
    let (next, job) = (&next, &job);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..writers.max(1))
            .map(|_| {
                s.spawn(move || -> Result<u64, Error> {
                    let mut conn = target
                        .connect()
                        .map_err(|e| Error::db(target.display_url(), e))?;
                    let mut rows = 0;
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        if n > last || stop.load(Ordering::Relaxed) {
                            return Ok(rows);
                        }
                        rows += job(conn.as_mut(), n)?;
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("loader thread panicked"))
            .sum::<Result<u64, Error>>()
    })
}

/// A load's progress on a terminal's stderr: rows, rows/s and the time left, with the jobs
/// (tables, warehouses) done; its lines ("Creating table ...") go above it. Nothing shows when
/// stderr is not a terminal, in a personality's voice, or in a sweep's step.
pub struct LoadBar {
    bar: Option<indicatif::ProgressBar>,
    notes: crate::output::Events,
    jobs: u32,
    noun: &'static str,
    done: AtomicU32,
}

/// Rows a writer counts before it moves the bar (the bar's lock is not taken per row).
const COUNT_EVERY: u64 = 1024;

impl LoadBar {
    /// A bar for `rows` rows (an estimate is enough: it sets the time left) in `jobs` jobs.
    pub fn new(notes: crate::output::Events, rows: u64, jobs: u32, noun: &'static str) -> Self {
        use std::io::IsTerminal;
        let show = rows > 0 && std::io::stderr().is_terminal() && notes.progress_bars();
        let bar = show.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(rows),
                indicatif::ProgressDrawTarget::stderr(),
            );
            let rate = |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{} rows/s", indicatif::HumanCount(s.per_sec() as u64));
            };
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "loading [{bar:30}] {human_pos}/{human_len} rows, {rate}, eta {eta}  {msg}",
            ) {
                bar.set_style(style.with_key("rate", rate).progress_chars("=> "));
            }
            bar.set_message(format!("0/{jobs} {noun}"));
            bar.enable_steady_tick(std::time::Duration::from_millis(500));
            bar
        });
        LoadBar {
            bar,
            notes,
            jobs,
            noun,
            done: AtomicU32::new(0),
        }
    }

    /// Whether the bar shows.
    pub fn shown(&self) -> bool {
        self.bar.is_some()
    }

    /// A line of the load's progress, above the bar.
    pub fn say(&self, line: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| self.notes.progress(line)),
            None => self.notes.progress(line),
        }
    }

    /// `n` more rows loaded.
    pub fn rows(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// One more job done.
    pub fn job_done(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(b) = &self.bar {
            b.set_message(format!("{done}/{} {}", self.jobs, self.noun));
        }
    }

    /// `next` (a bulk load's source of rows), counting the rows it gives on this bar.
    pub fn counting<'a>(
        &'a self,
        next: &'a mut dyn FnMut(&mut Vec<crate::db::RowValue>) -> bool,
    ) -> impl FnMut(&mut Vec<crate::db::RowValue>) -> bool + 'a {
        let mut pending = 0;
        move |row| {
            let more = next(row);
            pending += u64::from(more);
            if pending == COUNT_EVERY || (!more && pending > 0) {
                self.rows(pending);
                pending = 0;
            }
            more
        }
    }
}

impl Drop for LoadBar {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// `ddl` (a `CREATE TABLE` of `table`) as the load creates it, and the statement that adds
/// its primary key after the rows, if that is where it goes: PostgreSQL builds a btree once
/// from all the rows far faster than it grows one row by row (pgbench's `-i` and pg_restore
/// add theirs after the data, too); InnoDB's primary key is the table's own order and SQLite's
/// WITHOUT ROWID tables are their key, so both keep it. Only a table constraint
/// (`, PRIMARY KEY (...)`) moves; the table ends up as `ddl` creates it.
pub fn key_after_rows(
    dialect: crate::db::Dialect,
    table: &str,
    ddl: &str,
) -> (String, Option<String>) {
    const KEY: &str = ", PRIMARY KEY (";
    if dialect != crate::db::Dialect::Postgres {
        return (ddl.to_string(), None);
    }
    let Some(at) = ddl.find(KEY) else {
        return (ddl.to_string(), None);
    };
    let Some(close) = ddl[at..].find(')') else {
        return (ddl.to_string(), None);
    };
    let end = at + close + 1;
    let key = &ddl[at + 2..end];
    (
        format!("{}{}", &ddl[..at], &ddl[end..]),
        Some(format!("ALTER TABLE {table} ADD {key}")),
    )
}

/// Runs each table's statements after its rows (`per_table`: its primary key where it comes
/// after, its secondary indexes), the tables on up to `threads` connections at once, as the
/// database takes them (SQLite: one), each table's statements in order on one of them.
pub fn after_rows(
    target: &dyn Target,
    per_table: &[(String, Vec<String>)],
    threads: u32,
    stop: &AtomicBool,
) -> Result<(), Error> {
    let jobs = 1..=per_table.len() as u32;
    if per_table.iter().all(|(_, sqls)| sqls.is_empty()) {
        return Ok(());
    }
    let writers = writers(target, threads, &jobs);
    run(target, jobs, writers, stop, |conn, n| {
        let (table, sqls) = &per_table[n as usize - 1];
        for sql in sqls {
            conn.batch(sql)
                .map_err(|e| Error::db(format!("indexing {table}: {sql}"), e))?;
        }
        Ok(0)
    })
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Dialect;

    #[test]
    fn postgres_gets_its_primary_key_after_the_rows_and_the_others_keep_theirs() {
        let ddl = "CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, c TEXT, PRIMARY KEY (a, b)) WITH (fillfactor=90)";
        let (made, key) = key_after_rows(Dialect::Postgres, "t", ddl);
        assert_eq!(
            made,
            "CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, c TEXT) WITH (fillfactor=90)"
        );
        assert_eq!(key.as_deref(), Some("ALTER TABLE t ADD PRIMARY KEY (a, b)"));
        for d in [Dialect::Mysql, Dialect::Sqlite] {
            assert_eq!(key_after_rows(d, "t", ddl), (ddl.to_string(), None));
        }
        let inline = "CREATE TABLE n (id BIGINT NOT NULL PRIMARY KEY, v INT)";
        assert_eq!(
            key_after_rows(Dialect::Postgres, "n", inline),
            (inline.to_string(), None)
        );
    }
}
