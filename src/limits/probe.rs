//! The probes themselves, on the shared IO engine (ioengine): requests of one size at one queue
//! depth on one ring for a fixed time (random or sequential, reads or writes), and the commit
//! ceiling, writers that each write a block and sync it, again and again. Each gives its rate,
//! its bandwidth, its latency's p50 and p99, and the probing thread's CPU per request (so that
//! a bench can show the probe is not what limits the figure).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng, rngs::SmallRng};

pub use crate::results::limits::{Figure, Kind};

use crate::ioengine::Aligned;
use crate::ioengine::ring::{Op, Ring, Stop};

impl Kind {
    pub(super) fn writes(self) -> bool {
        !matches!(self, Kind::RandomRead | Kind::SequentialRead)
    }

    pub(super) fn random(self) -> bool {
        matches!(self, Kind::RandomRead | Kind::RandomWrite)
    }
}

/// What stopped a probe: an IO error (the call and the error), or Ctrl-C.
#[derive(Debug)]
pub enum Failed {
    Io(String, std::io::Error),
    Interrupted,
}

fn stopped(s: Stop) -> Failed {
    match s {
        Stop::Setup(e) => Failed::Io("setting up an io_uring".into(), e),
        Stop::Submit(e) => Failed::Io("submitting a request".into(), e),
        Stop::Wait(e) => Failed::Io("waiting for a request".into(), e),
        Stop::Full => Failed::Io(
            "submitting a request".into(),
            std::io::Error::other("the ring stays full"),
        ),
        Stop::Handler(s) => {
            let code: i32 = s.parse().unwrap_or(libc::EIO);
            Failed::Io("a request".into(), std::io::Error::from_raw_os_error(code))
        }
    }
}

/// The calling thread's user + system CPU so far.
fn thread_cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds")
}

/// `depth` requests of `block` bytes in flight on one ring over the first `size` bytes of
/// `file` for `seconds` (or until Ctrl-C).
pub fn ring(
    file: &File,
    direct: bool,
    kind: Kind,
    size: u64,
    block: u64,
    depth: u32,
    seconds: f64,
) -> Result<Figure, Failed> {
    let depth = depth.max(1);
    let blocks = (size / block).max(1);
    // The buffers before the ring: dropped after it, once what is in flight has completed.
    let mut bufs: Vec<Aligned> = (0..depth).map(|_| Aligned::new(block as usize)).collect();
    let mut ring = Ring::new(depth).map_err(stopped)?;
    if kind.writes() {
        let mut fill = SmallRng::seed_from_u64(7);
        for b in &mut bufs {
            fill.fill(b.bytes(block as usize));
        }
    }
    let mut rng = SmallRng::seed_from_u64(u64::from(depth) * 31 + block);
    let mut next_seq = 0u64;
    let mut started = vec![Instant::now(); depth as usize];
    let mut hist = histogram();
    let mut free: Vec<u64> = (0..u64::from(depth)).collect();
    let mut done: Vec<u64> = Vec::with_capacity(depth as usize);
    let mut count = 0u64;
    let fd = file.as_raw_fd();
    let cpu0 = thread_cpu();
    let t0 = Instant::now();
    let deadline = t0 + Duration::from_secs_f64(seconds);
    // Each completion: its result judged, its latency counted, its slot free again.
    let record = |tag: u64, result: i32, started: &[Instant], hist: &mut Histogram<u64>| {
        if i64::from(result) != block as i64 {
            let code = if result < 0 { -result } else { libc::EIO };
            return Err(code.to_string());
        }
        let ns = started[tag as usize].elapsed().as_nanos() as u64;
        let _ = hist.record(ns.max(1));
        Ok(())
    };
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        if crate::interrupt::interrupted() {
            return Err(Failed::Interrupted);
        }
        for slot in free.drain(..) {
            let block_no = if kind.random() {
                rng.random_range(0..blocks)
            } else {
                let b = next_seq;
                next_seq = (next_seq + 1) % blocks;
                b
            };
            let pos = block_no * block;
            let buf = bufs[slot as usize].bytes(block as usize).as_mut_ptr();
            let op = if kind.writes() {
                Op::Write {
                    fd,
                    buf,
                    len: block as u32,
                    pos,
                }
            } else {
                Op::Read {
                    fd,
                    buf,
                    len: block as u32,
                    pos,
                }
            };
            started[slot as usize] = now;
            // Never waits: a slot is free only when fewer than `depth` are in flight.
            ring.submit(op, slot, &mut |_, _| Ok(())).map_err(stopped)?;
        }
        ring.reap(1, &mut |tag, result| {
            record(tag, result, &started, &mut hist)?;
            done.push(tag);
            Ok(())
        })
        .map_err(stopped)?;
        count += done.len() as u64;
        std::mem::swap(&mut free, &mut done);
    }
    let elapsed = t0.elapsed().as_secs_f64();
    ring.drain(&mut |tag, result| record(tag, result, &started, &mut hist))
        .map_err(stopped)?;
    let cpu = (thread_cpu() - cpu0).as_secs_f64();
    Ok(figure(
        kind, block, depth, 1, direct, count, elapsed, cpu, &hist,
    ))
}

#[allow(clippy::too_many_arguments)]
fn figure(
    kind: Kind,
    block: u64,
    depth: u32,
    writers: u32,
    direct: bool,
    count: u64,
    elapsed: f64,
    cpu: f64,
    hist: &Histogram<u64>,
) -> Figure {
    let elapsed = elapsed.max(1e-9);
    Figure {
        kind,
        block,
        depth,
        writers,
        direct,
        iops: count as f64 / elapsed,
        mb_s: (count * block) as f64 / elapsed / 1e6,
        p50_us: hist.value_at_quantile(0.50) as f64 / 1e3,
        p99_us: hist.value_at_quantile(0.99) as f64 / 1e3,
        cpu_us_per_io: if count == 0 {
            0.0
        } else {
            cpu * 1e6 / count as f64
        },
        seconds: elapsed,
    }
}

/// A commit writer's requests, their latencies, and its CPU seconds.
type Writer = (u64, Histogram<u64>, f64);

/// The commit ceiling: `writers` threads, each writing `block` bytes then syncing them
/// (fdatasync or fsync), again and again over a region of its own of `file` (the first `size`
/// bytes, laid out already: a log's blocks are overwritten, as InnoDB's and PostgreSQL's
/// preallocated logs are), for `seconds`.
pub fn commits(
    file: &File,
    kind: Kind,
    size: u64,
    block: u64,
    writers: u32,
    seconds: f64,
) -> Result<Figure, Failed> {
    let writers = writers.max(1);
    let region = (size / u64::from(writers) / block).max(1) * block;
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let t0 = Instant::now();
    let results: Vec<Result<Writer, Failed>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                s.spawn(move || {
                    let mut buf = Aligned::new(block as usize);
                    SmallRng::seed_from_u64(u64::from(w)).fill(buf.bytes(block as usize));
                    let mut hist = histogram();
                    let base = u64::from(w) * region;
                    let mut at = 0u64;
                    let mut count = 0u64;
                    let cpu0 = thread_cpu();
                    while Instant::now() < deadline {
                        if crate::interrupt::interrupted() {
                            return Err(Failed::Interrupted);
                        }
                        let t = Instant::now();
                        file.write_all_at(buf.bytes(block as usize), base + at)
                            .map_err(|e| Failed::Io("writing the log probe's file".into(), e))?;
                        let synced = if kind == Kind::WriteFsync {
                            file.sync_all()
                        } else {
                            file.sync_data()
                        };
                        synced.map_err(|e| Failed::Io("syncing the log probe's file".into(), e))?;
                        let _ = hist.record((t.elapsed().as_nanos() as u64).max(1));
                        count += 1;
                        at = (at + block) % region;
                    }
                    Ok((count, hist, (thread_cpu() - cpu0).as_secs_f64()))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(Failed::Interrupted)))
            .collect()
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let mut count = 0;
    let mut cpu = 0.0;
    let mut hist = histogram();
    for r in results {
        let (c, h, u) = r?;
        count += c;
        cpu += u;
        let _ = hist.add(&h);
    }
    Ok(figure(
        kind, block, 1, writers, false, count, elapsed, cpu, &hist,
    ))
}
