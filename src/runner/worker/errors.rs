//! A client's way through errors: retries after retryable ones, reconnects after a lost
//! connection, pgbench's abort, and what the client says of them (through its printer).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{Ended, Shared, Tally, Worker, open_conn, wait_until};
use crate::clock::Stamp;
use crate::db::{DbError, ErrorClass, QueryCounts};
use crate::output::note::{Aborted, At, ClientNote};

impl Worker {
    /// After the event's first attempt failed with `err`: retries it after retryable errors
    /// and reconnects after a lost connection, until it succeeds or the run is stopped (Ctrl-C,
    /// another client's error, the deadline). Attempts after the first are not timed by the
    /// client (`end` stays None: the runner reads the clock when the event is done).
    #[cold]
    #[inline(never)]
    pub(super) fn after_error(
        &mut self,
        sh: &Shared,
        deadline: Option<Instant>,
        mut err: DbError,
        (q, end): (&mut QueryCounts, &mut Option<Stamp>),
        tally: &mut Tally,
    ) -> Result<Ended, String> {
        let mut backoff = Backoff::new();
        let mut tries = 1u32;
        loop {
            // A wait that Ctrl-C ended, or an error after the run was stopped (or cut short by
            // its end), is not the run's error.
            if sh.stopped() || err.code == crate::interrupt::RUN_ENDED {
                return Ok(if err.class == ErrorClass::ConnectionLost {
                    Ended::Lost
                } else {
                    Ended::Stopped
                });
            }
            if let Some(slot) = err.class.retry_slot() {
                // A failed rollback is not the event's error: the retry will show what is wrong.
                let _ = self.conn.rollback();
                self.client.rolled_back();
                let last = sh.max_tries.is_some_and(|m| tries >= m.get());
                self.note_error(sh, &err, tries, last);
                if last {
                    return Ok(Ended::Failed(err.class));
                }
                tally.retries[slot] += 1;
                self.client.will_retry();
            } else if sh.abort_alone {
                return Ok(self.abort(sh, &err, Aborted::InCommand));
            } else if err.class == ErrorClass::ConnectionLost {
                if !self
                    .reconnect(sh, deadline, &mut backoff)
                    .map_err(|e| self.describe(&e))?
                {
                    return Ok(Ended::Lost);
                }
                tally.reconnects += 1;
            } else {
                return Err(self.describe(&err));
            }
            // An event that fails and retries past the end of the run ends with it: a script
            // that restarts every event must not run on after --time.
            if sh.stopped() || deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(Ended::Stopped);
            }
            tries += 1;
            *q = QueryCounts::default();
            *end = None;
            match self.client.event(self.conn.as_mut(), &mut self.rand, q) {
                Ok(()) => return Ok(Ended::Done),
                Err(e) => err = e,
            }
        }
    }

    /// A retryable error of try `tries` (the last one when `last`): kept for the per-statement
    /// counts, and under `--verbose-errors` printed as pgbench prints it.
    pub(super) fn note_error(&mut self, sh: &Shared, err: &DbError, tries: u32, last: bool) {
        let at = self.client.error_at();
        if let Some(at) = at {
            self.errors_at.push((at.statement, last));
        }
        if !sh.verbose_errors {
            return;
        }
        sh.notes.client_note(&ClientNote::Retryable {
            client: self.thread,
            at: at.map(|a| At {
                script: a.script,
                command: a.command,
            }),
            message: &err.message,
            tries,
            max_tries: sh.max_tries,
            last,
        });
    }

    /// pgbench's abort: the client ends alone after `err`, said as pgbench says it; the run
    /// goes on with the others.
    #[cold]
    #[inline(never)]
    pub(super) fn abort(&mut self, sh: &Shared, err: &DbError, how: Aborted) -> Ended {
        sh.aborted_clients.fetch_add(1, Ordering::Relaxed);
        // A server that ends the session says why (PostgreSQL's 57P01, administrator
        // command) before it closes; one that dies says nothing.
        let said = err.code.len() == 5 && err.code.bytes().all(|b| b.is_ascii_alphanumeric());
        let how = match how {
            Aborted::InCommand if err.class == ErrorClass::ConnectionLost && !said => Aborted::Lost,
            other => other,
        };
        // The server's whole message, as libpq gives it, where it said more than a line.
        let whole = err
            .notes
            .is_some()
            .then(|| err.libpq_text(err.statement.as_deref()));
        sh.notes.client_note(&ClientNote::Aborted {
            client: self.thread,
            at: self.client.error_at().map(|a| At {
                script: a.script,
                command: a.command,
            }),
            code: &err.code,
            message: &err.message,
            whole: whole.as_deref(),
            how,
        });
        Ended::Aborted
    }

    /// Opens a new connection and prepares the client again, backing off between attempts
    /// (and across the attempts of one event, so that a server that accepts connections and
    /// drops them at once is not hammered), for up to `--reconnect-timeout`. Ok(false) when the
    /// run's deadline or a stop came first.
    pub(super) fn reconnect(
        &mut self,
        sh: &Shared,
        deadline: Option<Instant>,
        backoff: &mut Backoff,
    ) -> Result<bool, DbError> {
        let give_up = Instant::now() + sh.reconnect_timeout;
        loop {
            if sh.stopped() || deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(false);
            }
            let attempt = open_conn(sh).and_then(|mut conn| {
                let client = sh
                    .workload
                    .client_on(conn.as_mut(), self.thread, sh.target)?;
                Ok((conn, client))
            });
            match attempt {
                Ok((conn, mut client)) => {
                    if let Some(kept) = self.client.hand_over() {
                        client.take_over(kept);
                    }
                    self.conn = conn;
                    self.client = client;
                    return Ok(true);
                }
                Err(_) if sh.stopped() => return Ok(false),
                Err(e) if e.class != ErrorClass::ConnectionLost || Instant::now() >= give_up => {
                    return Err(e);
                }
                Err(_) => {
                    let until = Instant::now() + backoff.next();
                    wait_until(deadline.map_or(until, |d| until.min(d)).min(give_up), sh);
                }
            }
        }
    }
}

/// Pauses between reconnection attempts: 10 ms doubling up to a second.
pub(super) struct Backoff(Duration);

impl Backoff {
    pub(super) fn new() -> Backoff {
        Backoff(Duration::from_millis(10))
    }

    pub(super) fn next(&mut self) -> Duration {
        let now = self.0;
        self.0 = (self.0 * 2).min(Duration::from_secs(1));
        now
    }
}
