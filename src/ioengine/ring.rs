//! An io_uring of one thread's own (the io-uring crate) with up to `depth` requests in flight:
//! a request goes in with a tag of the caller's, and each completion comes back as its tag and
//! the kernel's result, for the caller to count and judge. sysbench's `fileio --file-io-mode=
//! async` and the disk probes of `dbsweep limits` both run on it.

use io_uring::{IoUring, opcode, squeue, types};

/// A request to put in flight: the file, the buffer (which must outlive the request: the
/// caller's own, drained before it is freed), the position.
pub enum Op {
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

/// What stopped a ring: the ring's own failure (which system call, and the error), or what the
/// caller's completion handler returned.
#[derive(Debug)]
pub enum Stop {
    Setup(std::io::Error),
    Submit(std::io::Error),
    Wait(std::io::Error),
    /// The submission queue stayed full after completions were reaped.
    Full,
    Handler(String),
}

/// A completion handler: the request's tag and the kernel's result (bytes moved, or a negated
/// errno).
pub type Handler<'a> = dyn FnMut(u64, i32) -> Result<(), String> + 'a;

/// One thread's ring and what it has in flight.
pub struct Ring {
    ring: IoUring,
    inflight: u32,
    depth: u32,
}

impl Ring {
    pub fn new(depth: u32) -> Result<Ring, Stop> {
        let depth = depth.max(1);
        let ring = IoUring::new(depth.next_power_of_two().max(2)).map_err(Stop::Setup)?;
        Ok(Ring {
            ring,
            inflight: 0,
            depth,
        })
    }

    /// How many requests are in flight.
    pub fn inflight(&self) -> u32 {
        self.inflight
    }

    /// Puts `op` in flight with `tag`, first waiting for completions while `depth` requests
    /// are in flight; each completion goes to `done`.
    pub fn submit(&mut self, op: Op, tag: u64, done: &mut Handler) -> Result<(), Stop> {
        while self.inflight >= self.depth {
            self.reap(1, done)?;
        }
        let entry: squeue::Entry = match op {
            Op::Read { fd, buf, len, pos } => opcode::Read::new(types::Fd(fd), buf, len)
                .offset(pos)
                .build(),
            Op::Write { fd, buf, len, pos } => opcode::Write::new(types::Fd(fd), buf, len)
                .offset(pos)
                .build(),
            Op::Fsync { fd, data_only } => {
                let mut f = opcode::Fsync::new(types::Fd(fd));
                if data_only {
                    f = f.flags(types::FsyncFlags::DATASYNC);
                }
                f.build()
            }
        };
        let entry = entry.user_data(tag);
        // SAFETY: the file stays open and the buffer alive until the request completes: the
        // caller drains its ring (`drain`, or the drop) before either goes.
        let pushed = unsafe { self.ring.submission().push(&entry) };
        if pushed.is_err() {
            self.reap(1, done)?;
            // SAFETY: as above.
            unsafe { self.ring.submission().push(&entry) }.map_err(|_| Stop::Full)?;
        }
        self.ring.submit().map_err(Stop::Submit)?;
        self.inflight += 1;
        Ok(())
    }

    /// Waits for at least `min` completions (no more than are in flight) and hands each to
    /// `done`.
    pub fn reap(&mut self, min: u32, done: &mut Handler) -> Result<(), Stop> {
        let want = min.min(self.inflight) as usize;
        if want > 0 {
            loop {
                match self.ring.submit_and_wait(want) {
                    Ok(_) => break,
                    // A signal (Ctrl-C's handler) woke the wait: the requests are still in
                    // flight, so wait again.
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Stop::Wait(e)),
                }
            }
        }
        let completed: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (tag, result) in completed {
            self.inflight = self.inflight.saturating_sub(1);
            done(tag, result).map_err(Stop::Handler)?;
        }
        Ok(())
    }

    /// Waits for everything in flight.
    pub fn drain(&mut self, done: &mut Handler) -> Result<(), Stop> {
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
            if self.reap(self.inflight, &mut |_, _| Ok(())).is_err() && self.inflight == before {
                break;
            }
        }
    }
}
