//! fileio's asynchronous IO (`--file-io-mode=async`): each thread keeps up to
//! `--file-async-backlog` requests in flight on an io_uring of its own (the io-uring crate),
//! and counts a request when it completes, as sysbench's libaio mode does.

use io_uring::{IoUring, opcode, squeue, types};

/// A request's kind and size, carried through the ring in its user data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Done {
    Read(u64),
    Write(u64),
    Fsync,
}

impl Done {
    fn pack(self) -> u64 {
        match self {
            Done::Read(n) => n,
            Done::Write(n) => 1 << 62 | n,
            Done::Fsync => 2 << 62,
        }
    }

    fn unpack(v: u64) -> Done {
        match v >> 62 {
            0 => Done::Read(v),
            1 => Done::Write(v & !(3 << 62)),
            _ => Done::Fsync,
        }
    }
}

/// One thread's ring and what it has in flight.
pub(super) struct Ring {
    ring: IoUring,
    inflight: u32,
    backlog: u32,
}

/// A request to put in flight: the file, the buffer (which must outlive the request: the
/// thread's own, drained before it is freed), the position.
pub(super) enum Op {
    Read {
        fd: i32,
        buf: *mut u8,
        len: u32,
        pos: u64,
    },
    Write {
        fd: i32,
        buf: *const u8,
        len: u32,
        pos: u64,
    },
    Fsync {
        fd: i32,
        data_only: bool,
    },
}

impl Ring {
    pub(super) fn new(backlog: u32) -> Result<Ring, String> {
        let ring = IoUring::new(backlog.next_power_of_two().max(2))
            .map_err(|e| format!("io_uring_setup() failed: {e}"))?;
        Ok(Ring {
            ring,
            inflight: 0,
            backlog,
        })
    }

    /// Puts `op` in flight, first waiting for completions while the backlog is full; each
    /// completion goes to `done` (an error ends the run in sysbench's words).
    pub(super) fn submit(
        &mut self,
        op: Op,
        done: &mut dyn FnMut(Done) -> Result<(), String>,
    ) -> Result<(), String> {
        while self.inflight >= self.backlog {
            self.reap(1, done)?;
        }
        let (entry, what): (squeue::Entry, Done) = match op {
            Op::Read { fd, buf, len, pos } => (
                opcode::Read::new(types::Fd(fd), buf, len)
                    .offset(pos)
                    .build(),
                Done::Read(u64::from(len)),
            ),
            Op::Write { fd, buf, len, pos } => (
                opcode::Write::new(types::Fd(fd), buf, len)
                    .offset(pos)
                    .build(),
                Done::Write(u64::from(len)),
            ),
            Op::Fsync { fd, data_only } => {
                let mut f = opcode::Fsync::new(types::Fd(fd));
                if data_only {
                    f = f.flags(types::FsyncFlags::DATASYNC);
                }
                (f.build(), Done::Fsync)
            }
        };
        // SAFETY: the file stays open and the buffer alive until the request completes: the
        // thread drains its ring (`drain`) before either goes.
        let entry = entry.user_data(what.pack());
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            self.reap(1, done)?;
            // SAFETY: as above.
            unsafe { self.ring.submission().push(&entry) }
                .map_err(|_| "io_submit() failed! (the ring stays full)".to_string())?;
        }
        self.ring
            .submit()
            .map_err(|e| format!("io_submit() failed! {e}"))?;
        self.inflight += 1;
        Ok(())
    }

    /// Waits for at least `min` completions and hands each to `done`.
    fn reap(
        &mut self,
        min: u32,
        done: &mut dyn FnMut(Done) -> Result<(), String>,
    ) -> Result<(), String> {
        let want = min.min(self.inflight) as usize;
        if want > 0 {
            self.ring
                .submit_and_wait(want)
                .map_err(|e| format!("io_getevents() failed! {e}"))?;
        }
        let completed: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (data, result) in completed {
            self.inflight = self.inflight.saturating_sub(1);
            let what = Done::unpack(data);
            let expected = match what {
                Done::Read(n) | Done::Write(n) => n as i64,
                Done::Fsync => 0,
            };
            if i64::from(result) != expected {
                return Err(match what {
                    Done::Read(_) => "Asynchronous read failed!",
                    Done::Write(_) => "Asynchronous write failed!",
                    Done::Fsync => "Asynchronous fsync failed!",
                }
                .to_string());
            }
            done(what)?;
        }
        Ok(())
    }

    /// Waits for everything in flight.
    pub(super) fn drain(
        &mut self,
        done: &mut dyn FnMut(Done) -> Result<(), String>,
    ) -> Result<(), String> {
        while self.inflight > 0 {
            self.reap(self.inflight, done)?;
        }
        Ok(())
    }
}

impl Drop for Ring {
    /// Never frees a buffer the kernel may still write: what is in flight completes first.
    fn drop(&mut self) {
        while self.inflight > 0 {
            let before = self.inflight;
            if self.reap(self.inflight, &mut |_| Ok(())).is_err() && self.inflight == before {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_kind_and_size_survive_the_ring() {
        for d in [Done::Read(16384), Done::Write(4097), Done::Fsync] {
            assert_eq!(Done::unpack(d.pack()), d);
        }
    }
}
