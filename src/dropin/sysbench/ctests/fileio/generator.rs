//! fileio's request generator (shared by the threads, as sysbench's is under its mutex) and
//! the requests themselves: pread, pwrite and fsync on the test's files.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rand::Rng;
use rand::rngs::SmallRng;

use super::aio::{self, Done, Ring};
use super::config::{Config, Mode};
use super::{MIB, errno_words};
use crate::dropin::sysbench::ctests::engine::{Measured, Test};
use crate::ioengine::Aligned;
use crate::results::figures::Interval;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Op {
    Read,
    Write,
    Fsync,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Request {
    pub(super) op: Op,
    pub(super) file: u32,
    pub(super) pos: u64,
    pub(super) size: u64,
}

/// sysbench's request generator, shared by the threads.
pub(super) struct Generator {
    pub(super) position: u64,
    pub(super) current_file: u32,
    pub(super) fsynced_file: u32,
    pub(super) performed: u64,
    pub(super) dirty: bool,
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) rng: SmallRng,
}

pub(super) struct FileIo {
    pub(super) c: Config,
    pub(super) mode: Mode,
    pub(super) files: Vec<File>,
    /// `--file-io-mode=mmap`: each file's mapping (shared: threads copy in and out of them
    /// at once, as sysbench's do).
    pub(super) maps: Vec<memmap2::MmapRaw>,
    pub(super) total: u64,
    pub(super) generator: Mutex<Generator>,
    pub(super) reads: AtomicU64,
    pub(super) writes: AtomicU64,
    pub(super) fsyncs: AtomicU64,
    pub(super) read_bytes: AtomicU64,
    pub(super) written_bytes: AtomicU64,
    /// The byte and fsync counts at the last interval line.
    pub(super) last: Mutex<[u64; 3]>,
    /// The reads, writes, fsyncs and bytes read and written at the last checkpoint.
    pub(super) at_checkpoint: Mutex<[u64; 5]>,
    /// `--validate`: blocks written with checksums, checked when read (synchronous IO).
    pub(super) validate: bool,
    pub(super) seed: u64,
}

impl FileIo {
    pub(super) fn next_request(&self) -> Request {
        let Ok(mut g) = self.generator.lock() else {
            return Request {
                op: Op::Fsync,
                file: 0,
                pos: 0,
                size: 0,
            };
        };
        let c = &self.c;
        let op = match self.mode {
            Mode::SeqWrite | Mode::SeqRewrite | Mode::RndWrite => Op::Write,
            Mode::SeqRead | Mode::RndRead => Op::Read,
            Mode::RndRw => {
                if ((g.reads + 1) as f64 / (g.writes + 1) as f64) < c.rw_ratio {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        // An fsync every --file-fsync-freq requests once something was written, file by file.
        let fsync_due = c.fsync_freq != 0
            && g.dirty
            && g.performed % c.fsync_freq == 0
            && (!self.mode.sequential() || op == Op::Write);
        if fsync_due {
            let file = g.fsynced_file;
            g.fsynced_file += 1;
            if g.fsynced_file == c.files {
                g.fsynced_file = 0;
                g.dirty = false;
            }
            return Request {
                op: Op::Fsync,
                file,
                pos: 0,
                size: 0,
            };
        }
        g.performed += 1;
        if op == Op::Write {
            g.dirty = true;
        }
        match op {
            Op::Read => g.reads += 1,
            _ => g.writes += 1,
        }
        if self.mode.sequential() {
            if g.current_file == c.files {
                g.position = 0;
                g.current_file = 0;
            }
            let (file, pos) = (g.current_file, g.position);
            let size = c.request.min(c.file_size - pos);
            g.position += size;
            if g.position == c.file_size {
                g.current_file += 1;
                g.position = 0;
            }
            return Request {
                op,
                file,
                pos,
                size,
            };
        }
        let at = (g.rng.random::<f64>() * self.total as f64) as u64;
        let at = at - at % c.block;
        let file = ((at / c.file_size) as u32).min(c.files - 1);
        let pos = at % c.file_size;
        Request {
            op,
            file,
            pos,
            size: c.block.min(c.file_size - pos),
        }
    }

    pub(super) fn sync(&self, file: u32) -> Result<(), String> {
        let f = &self.files[file as usize];
        // A mapped file is synced through its mapping (msync), as sysbench's is.
        let r = if let Some(map) = self.maps.get(file as usize) {
            map.flush()
        } else if self.c.fdatasync {
            f.sync_data()
        } else {
            f.sync_all()
        };
        r.map_err(|e| errno_words(&format!("Failed to fsync file! file: {file}"), &e))?;
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// A thread's buffer, its request and (async) its ring. The ring comes first: dropped first,
/// it waits for what is in flight before the buffer goes.
pub(super) struct Local {
    pub(super) ring: Option<Ring>,
    pub(super) buf: Aligned,
    pub(super) req: Option<Request>,
    pub(super) rng: SmallRng,
}

impl FileIo {
    /// A completed asynchronous request, counted as a synchronous one is when it returns.
    fn completed(&self, d: Done) -> Result<(), String> {
        match d {
            Done::Read(n) => {
                self.reads.fetch_add(1, Ordering::Relaxed);
                self.read_bytes.fetch_add(n, Ordering::Relaxed);
            }
            Done::Write(n) => {
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.written_bytes.fetch_add(n, Ordering::Relaxed);
            }
            Done::Fsync => {
                self.fsyncs.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Puts request `r` in flight on the thread's ring (made at its first request).
    fn submit(&self, l: &mut Local, r: Request) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        if l.ring.is_none() {
            l.ring = Some(Ring::new(self.c.backlog)?);
        }
        let fd = self.files[r.file as usize].as_raw_fd();
        let len = r.size as u32;
        let buf = l.buf.bytes(r.size as usize).as_mut_ptr();
        let op = match r.op {
            Op::Read => aio::Op::Read {
                fd,
                buf,
                len,
                pos: r.pos,
            },
            Op::Write => aio::Op::Write {
                fd,
                buf,
                len,
                pos: r.pos,
            },
            Op::Fsync => aio::Op::Fsync {
                fd,
                data_only: self.c.fdatasync,
            },
        };
        let ring = l.ring.as_mut().expect("made above");
        ring.submit(op, &mut |d| self.completed(d))?;
        if r.op == Op::Write && self.c.fsync_all {
            ring.submit(
                aio::Op::Fsync {
                    fd,
                    data_only: self.c.fdatasync,
                },
                &mut |d| self.completed(d),
            )?;
        }
        Ok(())
    }
}

impl Test for FileIo {
    type Local = Local;
    fn local(&self, thread: u32) -> Local {
        Local {
            ring: None,
            buf: Aligned::new(self.c.request as usize),
            req: None,
            rng: crate::dropin::sysbench::ctests::engine::thread_rng(self.seed, thread),
        }
    }
    fn next(&self, l: &mut Local) -> bool {
        l.req = Some(self.next_request());
        true
    }
    fn execute(&self, l: &mut Local) -> Result<(), String> {
        let Some(r) = l.req.take() else {
            return Ok(());
        };
        if self.c.io_async {
            if r.op == Op::Fsync && self.c.fsync_all {
                return Ok(());
            }
            return self.submit(l, r);
        }
        let f = &self.files[r.file as usize];
        let map = self.maps.get(r.file as usize);
        match r.op {
            Op::Write => {
                let buf = l.buf.bytes(r.size as usize);
                if self.validate {
                    super::fill(buf, r.pos, &mut l.rng);
                }
                let written = match map {
                    Some(m) => {
                        copy_into(m, r.pos, buf);
                        Ok(())
                    }
                    None => f.write_all_at(buf, r.pos),
                };
                written.map_err(|e| {
                    errno_words(
                        &format!("Failed to write file! file: {} pos: {}", r.file, r.pos),
                        &e,
                    )
                })?;
                if self.c.fsync_all {
                    self.sync(r.file)?;
                }
                self.writes.fetch_add(1, Ordering::Relaxed);
                self.written_bytes.fetch_add(r.size, Ordering::Relaxed);
            }
            Op::Read => {
                let buf = l.buf.bytes(r.size as usize);
                let read = match map {
                    Some(m) => {
                        copy_from(m, r.pos, buf);
                        Ok(())
                    }
                    None => f.read_exact_at(buf, r.pos),
                };
                read.map_err(|e| {
                    errno_words(
                        &format!("Failed to read file! file: {} pos: {}", r.file, r.pos),
                        &e,
                    )
                })?;
                if self.validate {
                    super::check(buf, r.pos).map_err(|e| {
                        format!(
                            "{e}\nFATAL: Validation failed on file {}, block offset {}, exiting...",
                            r.file, r.pos
                        )
                    })?;
                }
                self.reads.fetch_add(1, Ordering::Relaxed);
                self.read_bytes.fetch_add(r.size, Ordering::Relaxed);
            }
            // Not again where every write is synced already.
            Op::Fsync if self.c.fsync_all => {}
            Op::Fsync => self.sync(r.file)?,
        }
        Ok(())
    }
    /// `--file-fsync-end`: each thread syncs every file once its events are over.
    /// Async: then waits for everything in flight.
    fn thread_done(&self, l: &mut Local) -> Result<(), String> {
        if self.c.fsync_end && self.mode.writes() {
            for i in 0..self.c.files {
                if self.c.io_async {
                    let fsync = Request {
                        op: Op::Fsync,
                        file: i,
                        pos: 0,
                        size: 0,
                    };
                    self.submit(l, fsync)?;
                } else {
                    self.sync(i)?;
                }
            }
        }
        if let Some(ring) = l.ring.as_mut() {
            ring.drain(&mut |d| self.completed(d))?;
        }
        Ok(())
    }
    fn interval_line(&self, iv: &Interval, percentile: u32) -> String {
        let now = [
            self.read_bytes.load(Ordering::Relaxed),
            self.written_bytes.load(Ordering::Relaxed),
            self.fsyncs.load(Ordering::Relaxed),
        ];
        let mut last = self.last.lock().map(|l| *l).unwrap_or(now);
        if let Ok(mut l) = self.last.lock() {
            last = std::mem::replace(&mut *l, now);
        }
        let s = iv.seconds.max(1e-9);
        format!(
            "[ {}s ] reads: {:4.2} MiB/s writes: {:4.2} MiB/s fsyncs: {:4.2}/s latency (ms,{percentile}%): {:4.3}",
            iv.t.round() as u64,
            (now[0] - last[0]) as f64 / MIB / s,
            (now[1] - last[1]) as f64 / MIB / s,
            (now[2] - last[2]) as f64 / s,
            iv.pct_ms
        )
    }

    /// sysbench's file operations and throughput since the last checkpoint (its counters start
    /// again after each report).
    fn report(&self, m: &Measured) -> String {
        let now = [
            &self.reads,
            &self.writes,
            &self.fsyncs,
            &self.read_bytes,
            &self.written_bytes,
        ]
        .map(|n| n.load(Ordering::Relaxed));
        let mut base = [0; 5];
        if let Ok(mut b) = self.at_checkpoint.lock() {
            base = std::mem::replace(&mut *b, now);
        }
        let n = |i: usize| (now[i] - base[i]) as f64;
        format!(
            "\nFile operations:\n    reads/s:                      {:4.2}\n    writes/s:                     {:4.2}\n    fsyncs/s:                     {:4.2}\n\nThroughput:\n    read, MiB/s:                  {:4.2}\n    written, MiB/s:               {:4.2}\n",
            m.per_second(n(0)),
            m.per_second(n(1)),
            m.per_second(n(2)),
            m.per_second(n(3) / MIB),
            m.per_second(n(4) / MIB)
        )
    }
}

/// `--file-io-mode=mmap`: maps each file whole, read and write, shared; a sequential write
/// test first sizes its new files (sysbench's ftruncate), so that the mapping covers them.
pub(super) fn map_files(
    files: &[File],
    file_size: u64,
    mode: Mode,
) -> Result<Vec<memmap2::MmapRaw>, String> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if mode == Mode::SeqWrite {
                f.set_len(file_size)
                    .map_err(|e| errno_words(&format!("ftruncate() failed on file {i}"), &e))?;
            }
            memmap2::MmapOptions::new()
                .len(file_size as usize)
                .map_raw(f)
                .map_err(|e| errno_words(&format!("mmap() failed on file {i}"), &e))
        })
        .collect()
}

/// Copies `buf` into mapping `m` at `pos` (the generator keeps every request inside its file).
fn copy_into(m: &memmap2::MmapRaw, pos: u64, buf: &[u8]) {
    assert!(
        pos as usize + buf.len() <= m.len(),
        "a request past its file"
    );
    // SAFETY: the range is inside the mapping (asserted); the mapping lives as long as `m`.
    // Threads may copy into one range at once, as sysbench's do: the bytes are the test's own
    // and what a racing copy leaves is never relied on (a validating run is one thread).
    unsafe {
        std::ptr::copy_nonoverlapping(buf.as_ptr(), m.as_mut_ptr().add(pos as usize), buf.len())
    }
}

/// Copies from mapping `m` at `pos` into `buf`.
fn copy_from(m: &memmap2::MmapRaw, pos: u64, buf: &mut [u8]) {
    assert!(
        pos as usize + buf.len() <= m.len(),
        "a request past its file"
    );
    // SAFETY: as in `copy_into`.
    unsafe {
        std::ptr::copy_nonoverlapping(m.as_ptr().add(pos as usize), buf.as_mut_ptr(), buf.len())
    }
}
