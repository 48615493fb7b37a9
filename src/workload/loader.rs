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
