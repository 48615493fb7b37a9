//! sysbench's `fileio` test: `prepare` writes `--file-num` files named `test_file.N` in the
//! working directory (`--file-total-size` in all), `run` reads, writes and syncs them in one of
//! sysbench's six modes (sequential write, rewrite and read; random read, write and both) with
//! its request generator (shared by the threads: sequential positions, an fsync every
//! `--file-fsync-freq` requests once something was written, the read/write ratio of `rndrw`),
//! `cleanup` removes them. Synchronous IO (`pread`/`pwrite`), with sysbench's open flags.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rand::{Rng, SeedableRng, rngs::SmallRng};

use super::engine::{self, Limits, Test};
use super::help::{self, Kind, Opt};
use super::{Values, fatal};
use crate::dropin::sysbench::output::SysbenchStyle;
use crate::error::{Error, Outcome};
use crate::results::figures::Interval;

pub const OPTIONS: &[Opt] = &[
    (
        "file-num",
        Kind::Num,
        "number of files to create",
        Some("128"),
    ),
    (
        "file-block-size",
        Kind::Num,
        "block size to use in all IO operations",
        Some("16384"),
    ),
    (
        "file-total-size",
        Kind::Size,
        "total size of files to create",
        Some("2G"),
    ),
    (
        "file-test-mode",
        Kind::Str,
        "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}",
        None,
    ),
    (
        "file-io-mode",
        Kind::Str,
        "file operations mode {sync,async,mmap}",
        Some("sync"),
    ),
    (
        "file-async-backlog",
        Kind::Num,
        "number of asynchronous operatons to queue per thread",
        Some("128"),
    ),
    (
        "file-extra-flags",
        Kind::List,
        "list of additional flags to use to open files {sync,dsync,direct}",
        Some(""),
    ),
    (
        "file-fsync-freq",
        Kind::Num,
        "do fsync() after this number of requests (0 - don't use fsync())",
        Some("100"),
    ),
    (
        "file-fsync-all",
        Kind::Bool,
        "do fsync() after each write operation",
        Some("off"),
    ),
    (
        "file-fsync-end",
        Kind::Bool,
        "do fsync() at the end of test",
        Some("on"),
    ),
    (
        "file-fsync-mode",
        Kind::Str,
        "which method to use for synchronization {fsync, fdatasync}",
        Some("fsync"),
    ),
    (
        "file-merged-requests",
        Kind::Num,
        "merge at most this number of IO requests if possible (0 - don't merge)",
        Some("0"),
    ),
    (
        "file-rw-ratio",
        Kind::Num,
        "reads/writes ratio for combined test",
        Some("1.5"),
    ),
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    SeqWrite,
    SeqRewrite,
    SeqRead,
    RndRead,
    RndWrite,
    RndRw,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "seqwr" => Mode::SeqWrite,
            "seqrewr" => Mode::SeqRewrite,
            "seqrd" => Mode::SeqRead,
            "rndrd" => Mode::RndRead,
            "rndwr" => Mode::RndWrite,
            "rndrw" => Mode::RndRw,
            _ => return None,
        })
    }

    fn words(self) -> &'static str {
        match self {
            Mode::SeqWrite => "sequential write (creation)",
            Mode::SeqRewrite => "sequential rewrite",
            Mode::SeqRead => "sequential read",
            Mode::RndRead => "random read",
            Mode::RndWrite => "random write",
            Mode::RndRw => "random r/w",
        }
    }

    fn sequential(self) -> bool {
        matches!(self, Mode::SeqWrite | Mode::SeqRewrite | Mode::SeqRead)
    }

    fn writes(self) -> bool {
        !matches!(self, Mode::SeqRead | Mode::RndRead)
    }
}

/// The open flags of `--file-extra-flags`.
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    sync: bool,
    dsync: bool,
    direct: bool,
}

impl Flags {
    fn words(self) -> String {
        if !(self.sync || self.dsync || self.direct) {
            return "(none)".into();
        }
        let mut s = String::new();
        if self.sync {
            s.push_str("sync ");
        }
        if self.dsync {
            s.push_str("dsync ");
        }
        if self.direct {
            s.push_str("directio");
        }
        s
    }

    fn bits(self) -> i32 {
        let mut f = 0;
        if self.sync {
            f |= libc::O_SYNC;
        }
        if self.dsync {
            f |= libc::O_DSYNC;
        }
        if self.direct {
            f |= libc::O_DIRECT;
        }
        f
    }
}

/// What the options say, checked as sysbench checks them.
struct Config {
    files: u32,
    file_size: u64,
    block: u64,
    /// A sequential request's size: the block, times `--file-merged-requests` where given.
    request: u64,
    merged: u64,
    mode: Option<Mode>,
    flags: Flags,
    fsync_freq: u64,
    fsync_all: bool,
    fsync_end: bool,
    fdatasync: bool,
    rw_ratio: f64,
}

/// The options of `command` read, or sysbench's FATAL line.
fn config(v: &Values, command: &str) -> Result<Config, String> {
    let files = match v.int("file-num") {
        Some(n) if n > 0 && n <= 1 << 20 => n as u32,
        _ => {
            return Err(format!(
                "Invalid value for file-num: {}",
                v.text("file-num")
            ));
        }
    };
    let total = match v.size("file-total-size") {
        Some(n) if n > 0 => n,
        _ => {
            return Err(format!(
                "Invalid value for file-total-size: {}",
                v.text("file-total-size")
            ));
        }
    };
    let mode = match v.text("file-test-mode") {
        "" if command == "run" => {
            return Err(format!(
                "Missing required argument: --file-test-mode\n\nfileio options:\n{}",
                help::table(OPTIONS)
            ));
        }
        _ if command != "run" => None,
        m => match Mode::parse(m) {
            Some(m) => Some(m),
            None => return Err(format!("Invalid IO operations mode: {m}.")),
        },
    };
    match v.text("file-io-mode") {
        "sync" => {}
        "async" | "mmap" => {
            return Err(format!(
                "--file-io-mode={}: dbsweep's fileio does synchronous IO only so far (sync)",
                v.text("file-io-mode")
            ));
        }
        m => return Err(format!("unknown I/O mode: {m}")),
    }
    let merged = match v.int("file-merged-requests") {
        Some(n) if n >= 0 => n as u64,
        _ => {
            return Err(format!(
                "Invalid value for file-merged-requests: {}.",
                v.text("file-merged-requests")
            ));
        }
    };
    let block = match v.size("file-block-size") {
        Some(n) if n > 0 && n <= 1 << 30 => n,
        _ => {
            return Err(format!(
                "Invalid value for file-block-size: {}.",
                v.text("file-block-size")
            ));
        }
    };
    let mut flags = Flags::default();
    for f in v.list("file-extra-flags") {
        match f.as_str() {
            "sync" => flags.sync = true,
            "dsync" => flags.dsync = true,
            "direct" => flags.direct = true,
            _ => {
                return Err(format!(
                    "Invalid value for file-extra-flags: {}",
                    v.text("file-extra-flags")
                ));
            }
        }
    }
    let mut fsync_freq = match v.int("file-fsync-freq") {
        Some(n) if n >= 0 => n as u64,
        _ => {
            return Err(format!(
                "Invalid value for file-fsync-freq: {}.",
                v.text("file-fsync-freq")
            ));
        }
    };
    let fsync_all = v.flag("file-fsync-all");
    let mut fsync_end = v.flag("file-fsync-end");
    // --file-fsync-all overrides the others.
    if fsync_all {
        fsync_end = false;
        fsync_freq = 0;
    }
    let fdatasync = match v.text("file-fsync-mode") {
        "fsync" => false,
        "fdatasync" => true,
        m => return Err(format!("Invalid fsync mode: {m}.")),
    };
    let rw_ratio = match v.text("file-rw-ratio").trim().parse::<f64>() {
        Ok(r) if r >= 0.0 && r.is_finite() => r,
        _ => {
            return Err(format!(
                "Invalid value for --file-rw-ratio: {}.",
                v.text("file-rw-ratio")
            ));
        }
    };
    Ok(Config {
        files,
        file_size: total / u64::from(files),
        block,
        request: if merged > 0 { block * merged } else { block },
        merged,
        mode,
        flags,
        fsync_freq,
        fsync_all,
        fsync_end,
        fdatasync,
        rw_ratio,
    })
}

fn name(i: u32) -> String {
    format!("test_file.{i}")
}

/// sysbench's sizes in its text: `%.5g` of the value in the largest of K, M, G, T it reaches,
/// with an `i` (so `8MiB` once `B` is added).
fn size_words(bytes: u64) -> String {
    let mut v = bytes as f64;
    let mut unit = None;
    for u in ['K', 'M', 'G', 'T'] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = Some(u);
    }
    let g = crate::output::cfmt::format_g(v, 5);
    match unit {
        Some(u) => format!("{g}{u}i"),
        None => g,
    }
}

/// The error of a system call in sysbench's words.
fn errno_words(what: &str, e: &std::io::Error) -> String {
    let code = e.raw_os_error().unwrap_or(0);
    // SAFETY: strerror's text for a code, copied at once.
    let text = unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) }
        .to_string_lossy()
        .into_owned();
    format!("{what} errno = {code} ({text})")
}

/// A buffer aligned for O_DIRECT (4 KiB) of `len` bytes.
struct Aligned {
    raw: Vec<u8>,
    at: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let raw = vec![0u8; len + 4096];
        let at = raw.as_ptr().align_offset(4096);
        Aligned { raw, at, len }
    }
    fn bytes(&mut self, n: usize) -> &mut [u8] {
        &mut self.raw[self.at..self.at + n.min(self.len)]
    }
}

pub fn prepare(v: &Values, style: &SysbenchStyle) -> Result<Outcome, Error> {
    let c = match config(v, "prepare") {
        Ok(c) => c,
        Err(e) => return fatal(&e),
    };
    // The test mode is read for `run` only (sysbench's prepare creates the files whatever
    // --file-test-mode says).
    let say = |s: &str| {
        if style.notice() {
            println!("{s}");
        }
    };
    say(&format!(
        "{} files, {}Kb each, {}Mb total",
        c.files,
        c.file_size / 1024,
        c.file_size * u64::from(c.files) / (1024 * 1024)
    ));
    say("Creating files for the test...");
    say(&format!("Extra file open flags: {}", c.flags.words()));
    let start = Instant::now();
    let mut buf = Aligned::new(c.block as usize);
    let block = buf.bytes(c.block as usize).to_vec();
    let mut written = 0u64;
    for i in 0..c.files {
        let path = name(i);
        let file = match OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(c.flags.bits())
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => return fatal(&errno_words("Can't open file", &e)),
        };
        let mut offset = match file.metadata() {
            Ok(m) => m.len(),
            Err(e) => return fatal(&errno_words("Can't open file", &e)),
        };
        if offset >= c.file_size {
            say(&format!("Reusing existing file {path}"));
        } else if offset > 0 {
            say(&format!("Extending existing file {path}"));
        } else {
            say(&format!("Creating file {path}"));
        }
        while offset < c.file_size {
            if crate::interrupt::interrupted() {
                return Ok(Outcome::Interrupted);
            }
            if let Err(e) = file.write_all_at(&block, offset) {
                return fatal(&errno_words("Failed to write file!", &e));
            }
            written += c.block;
            offset += c.block;
        }
        // Synced, so that flushing the page cache later does not weigh on the run.
        let _ = file.sync_all();
    }
    let seconds = start.elapsed().as_secs_f64();
    if written > 0 {
        say(&format!(
            "{written} bytes written in {seconds:.2} seconds ({:.2} MiB/sec).",
            written as f64 / MIB / seconds.max(1e-9)
        ));
    } else {
        say("No bytes written.");
    }
    Ok(Outcome::Done)
}

pub fn cleanup(v: &Values, style: &SysbenchStyle) -> Result<Outcome, Error> {
    match config(v, "cleanup") {
        Ok(c) => remove(&c, style),
        Err(e) => fatal(&e),
    }
}

/// Removes `test_file.0` .. `test_file.{N-1}` (sysbench's names, nothing else).
fn remove(c: &Config, style: &SysbenchStyle) -> Result<Outcome, Error> {
    if style.notice() {
        println!("Removing test files...");
    }
    for i in 0..c.files {
        let _ = std::fs::remove_file(name(i));
    }
    Ok(Outcome::Done)
}

const MIB: f64 = 1024.0 * 1024.0;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Read,
    Write,
    Fsync,
}

#[derive(Clone, Copy, Debug)]
struct Request {
    op: Op,
    file: u32,
    pos: u64,
    size: u64,
}

/// sysbench's request generator, shared by the threads.
struct Generator {
    position: u64,
    current_file: u32,
    fsynced_file: u32,
    performed: u64,
    dirty: bool,
    reads: u64,
    writes: u64,
    rng: SmallRng,
}

struct FileIo {
    c: Config,
    mode: Mode,
    files: Vec<File>,
    total: u64,
    generator: Mutex<Generator>,
    reads: AtomicU64,
    writes: AtomicU64,
    fsyncs: AtomicU64,
    read_bytes: AtomicU64,
    written_bytes: AtomicU64,
    /// The byte and fsync counts at the last interval line.
    last: Mutex<[u64; 3]>,
}

impl FileIo {
    fn next_request(&self) -> Request {
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

    fn sync(&self, file: u32) -> Result<(), String> {
        let f = &self.files[file as usize];
        let r = if self.c.fdatasync {
            f.sync_data()
        } else {
            f.sync_all()
        };
        r.map_err(|e| errno_words(&format!("Failed to fsync file! file: {file}"), &e))?;
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// A thread's buffer and its request.
struct Local {
    buf: Aligned,
    req: Option<Request>,
}

impl Test for FileIo {
    type Local = Local;
    fn local(&self, _thread: u32) -> Local {
        Local {
            buf: Aligned::new(self.c.request as usize),
            req: None,
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
        let f = &self.files[r.file as usize];
        match r.op {
            Op::Write => {
                let buf = l.buf.bytes(r.size as usize);
                f.write_all_at(buf, r.pos).map_err(|e| {
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
                f.read_exact_at(buf, r.pos).map_err(|e| {
                    errno_words(
                        &format!("Failed to read file! file: {} pos: {}", r.file, r.pos),
                        &e,
                    )
                })?;
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
    fn thread_done(&self, _l: &mut Local) -> Result<(), String> {
        if self.c.fsync_end && self.mode.writes() {
            for i in 0..self.c.files {
                self.sync(i)?;
            }
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
}

/// Opens the files for a run (a sequential write creates them anew), each at least as large
/// as the options say; sysbench's FATAL and WARNING lines where not.
fn open_files(c: &Config, mode: Mode, style: &SysbenchStyle) -> Result<Vec<File>, ()> {
    let warn = |s: &str| {
        if style.verbosity >= 2 {
            println!("WARNING: {s}");
        }
    };
    let mut files = Vec::with_capacity(c.files as usize);
    for i in 0..c.files {
        let path = name(i);
        if mode == Mode::SeqWrite {
            let _ = std::fs::remove_file(&path);
            if let Err(e) = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                println!(
                    "FATAL: {}",
                    errno_words(&format!("Cannot create file '{path}'"), &e)
                );
                return Err(());
            }
        }
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(c.flags.bits())
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => {
                println!(
                    "FATAL: {}",
                    errno_words(&format!("Cannot open file '{path}'"), &e)
                );
                warn("Did you forget to run the prepare step?");
                return Err(());
            }
        };
        if mode != Mode::SeqWrite {
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            if len < c.file_size {
                println!(
                    "FATAL: Size of file '{path}' is {}B, but at least {}B is expected.",
                    size_words(len),
                    size_words(c.file_size)
                );
                warn(
                    "Did you run 'prepare' with different --file-total-size or --file-num values?",
                );
                return Err(());
            }
        }
        files.push(file);
    }
    Ok(files)
}

pub fn run(v: &Values, limits: &Limits, style: &SysbenchStyle) -> Result<Outcome, Error> {
    let c = match config(v, "run") {
        Ok(c) => c,
        Err(e) => return fatal(&e),
    };
    let mode = c.mode.expect("checked for run");
    let mut text = format!(
        "Extra file open flags: {}\n{} files, {}B each\n{}B total file size\nBlock size {}B\n",
        c.flags.words(),
        c.files,
        size_words(c.file_size),
        size_words(c.file_size * u64::from(c.files)),
        size_words(c.block)
    );
    if c.merged > 0 {
        text += &format!(
            "Merging requests up to {}B for sequential IO.\n",
            size_words(c.request)
        );
    }
    if !mode.sequential() {
        text += &format!(
            "Number of IO requests: {}\nRead/Write ratio for combined random IO test: {:2.2}\n",
            limits.events, c.rw_ratio
        );
    }
    if c.fsync_freq > 0 {
        text += &format!(
            "Periodic FSYNC enabled, calling fsync() each {} requests.\n",
            c.fsync_freq
        );
    }
    if c.fsync_end {
        text += "Calling fsync() at the end of test, Enabled.\n";
    }
    if c.fsync_all {
        text += "Calling fsync() after each write operation.\n";
    }
    text += &format!("Using synchronous I/O mode\nDoing {} test\n", mode.words());
    engine::header(limits, style, &text);
    let Ok(files) = open_files(&c, mode, style) else {
        return Ok(Outcome::Failed);
    };
    let seed = limits.rand_seed;
    let test = FileIo {
        total: c.file_size * u64::from(c.files),
        mode,
        files,
        generator: Mutex::new(Generator {
            position: 0,
            current_file: 0,
            fsynced_file: 0,
            performed: 0,
            dirty: false,
            reads: 0,
            writes: 0,
            rng: if seed == 0 {
                SmallRng::from_os_rng()
            } else {
                SmallRng::seed_from_u64(seed)
            },
        }),
        reads: AtomicU64::new(0),
        writes: AtomicU64::new(0),
        fsyncs: AtomicU64::new(0),
        read_bytes: AtomicU64::new(0),
        written_bytes: AtomicU64::new(0),
        last: Mutex::new([0; 3]),
        c,
    };
    let m = engine::run(&test, limits, style);
    if m.overrun {
        return engine::overrun();
    }
    if let Some(e) = &m.error {
        return fatal(e);
    }
    if style.notice() {
        let per_s = |n: &AtomicU64| m.per_second(n.load(Ordering::Relaxed) as f64);
        let mib_s = |n: &AtomicU64| m.per_second(n.load(Ordering::Relaxed) as f64 / MIB);
        println!(
            "\nFile operations:\n    reads/s:                      {:4.2}\n    writes/s:                     {:4.2}\n    fsyncs/s:                     {:4.2}\n\nThroughput:\n    read, MiB/s:                  {:4.2}\n    written, MiB/s:               {:4.2}",
            per_s(&test.reads),
            per_s(&test.writes),
            per_s(&test.fsyncs),
            mib_s(&test.read_bytes),
            mib_s(&test.written_bytes)
        );
        print!("{}", m.general(style.percentile));
    }
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_worded_as_sysbench_words_them() {
        assert_eq!(size_words(8 << 20), "8Mi");
        assert_eq!(size_words(16384), "16Ki");
        assert_eq!(size_words(256 << 10), "256Ki");
        assert_eq!(size_words(4097), "4.001Ki");
        assert_eq!(size_words(1000), "1000");
        assert_eq!(size_words(0), "0");
    }

    #[test]
    fn extra_flags_are_listed_in_sysbenchs_order() {
        let f = Flags {
            sync: true,
            dsync: true,
            direct: false,
        };
        assert_eq!(f.words(), "sync dsync ");
        assert_eq!(Flags::default().words(), "(none)");
    }
}
