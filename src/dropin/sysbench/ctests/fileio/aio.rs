//! fileio's asynchronous IO (`--file-io-mode=async`): each thread keeps up to
//! `--file-async-backlog` requests in flight on a ring of its own (the shared IO engine's,
//! ioengine::ring), and counts a request when it completes, as sysbench's libaio mode does.
//! What is sysbench's here: a request's kind and size carried in its tag, and the words of a
//! failure.

use crate::ioengine::ring::{self, Stop};
pub use ring::Op;

/// A request's kind and size, carried through the ring in its tag.
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

    fn of(op: &Op) -> Done {
        match *op {
            Op::Read { len, .. } => Done::Read(u64::from(len)),
            Op::Write { len, .. } => Done::Write(u64::from(len)),
            Op::Fsync { .. } => Done::Fsync,
        }
    }
}

/// A stopped ring in sysbench's words (its libaio calls').
fn words(s: Stop) -> String {
    match s {
        Stop::Setup(e) => format!("io_uring_setup() failed: {e}"),
        Stop::Submit(e) => format!("io_submit() failed! {e}"),
        Stop::Full => "io_submit() failed! (the ring stays full)".to_string(),
        Stop::Wait(e) => format!("io_getevents() failed! {e}"),
        Stop::Handler(s) => s,
    }
}

/// One thread's ring.
pub(super) struct Ring(ring::Ring);

/// Checks a completion's result and hands its request to `done`.
fn judged<'a>(
    done: &'a mut dyn FnMut(Done) -> Result<(), String>,
) -> impl FnMut(u64, i32) -> Result<(), String> + 'a {
    move |tag, result| {
        let what = Done::unpack(tag);
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
        done(what)
    }
}

impl Ring {
    pub(super) fn new(backlog: u32) -> Result<Ring, String> {
        ring::Ring::new(backlog).map(Ring).map_err(words)
    }

    /// Puts `op` in flight, first waiting for completions while the backlog is full; each
    /// completion goes to `done` (an error ends the run in sysbench's words).
    pub(super) fn submit(
        &mut self,
        op: Op,
        done: &mut dyn FnMut(Done) -> Result<(), String>,
    ) -> Result<(), String> {
        let tag = Done::of(&op).pack();
        self.0.submit(op, tag, &mut judged(done)).map_err(words)
    }

    /// Waits for everything in flight.
    pub(super) fn drain(
        &mut self,
        done: &mut dyn FnMut(Done) -> Result<(), String>,
    ) -> Result<(), String> {
        self.0.drain(&mut judged(done)).map_err(words)
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
