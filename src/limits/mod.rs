//! What the machine can do at most, measured beside what the database did: the disk's random
//! reads and writes of the server's page at several queue depths, its sequential bandwidth,
//! and the log's sync (a block written and synced, by one writer and by N). `dbsweep limits`
//! prints them; a sweep with `limits = true` records them in each step's results file, and the
//! report sets each step against them (report/bound.rs).
//!
//! The probes run on the file system that holds the data, in files of their own (created here
//! with names no other file has, removed after, on Ctrl-C and on failure too), with O_DIRECT
//! where the file system has it. A probe that cannot run is one line in `notes`, and the
//! others still run.

pub mod device;
pub mod network;
pub mod probe;
pub mod target;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use device::Device;
pub use probe::{Figure, Kind};

pub use crate::results::limits::Limits;
use probe::Failed;

/// What to probe, and how.
#[derive(Clone, Debug)]
pub struct Shape {
    /// The directory whose file system is probed.
    pub dir: PathBuf,
    /// The server's page: the random probes' block.
    pub page: u64,
    /// The log's write: the commit probes' block.
    pub log_block: u64,
    /// The commit probe's writers beside the single one.
    pub writers: u32,
    /// The data probe file's size.
    pub size: u64,
    /// The log probe file's size.
    pub log_size: u64,
    /// Seconds per probe.
    pub seconds: f64,
    /// The random probes' queue depths.
    pub depths: Vec<u32>,
    /// The sequential probes' block and depth.
    pub seq_block: u64,
    pub seq_depth: u32,
    /// The probes to run (all by default).
    pub kinds: Vec<Kind>,
}

impl Shape {
    pub fn new(dir: PathBuf, page: u64) -> Shape {
        Shape {
            dir,
            page,
            log_block: 4096,
            writers: 8,
            size: 2 << 30,
            log_size: 64 << 20,
            seconds: 3.0,
            depths: vec![1, 4, 16, 64],
            seq_block: 1 << 20,
            seq_depth: 4,
            kinds: Kind::ALL.to_vec(),
        }
    }

    /// The cache key's probe part: what changes the figures besides the device.
    fn key(&self) -> String {
        let d: Vec<String> = self.depths.iter().map(u32::to_string).collect();
        format!(
            "p{}-l{}-w{}-s{}-d{}",
            self.page,
            self.log_block,
            self.writers,
            self.size >> 20,
            d.join("_")
        )
    }
}

impl Limits {
    /// The figure of `kind` at `depth` (random and sequential) or with `writers` (commits).
    pub fn find(&self, kind: Kind, depth: u32, writers: u32) -> Option<&Figure> {
        self.figures
            .iter()
            .find(|f| f.kind == kind && f.depth == depth && f.writers == writers)
    }

    /// No disk figures, for `why` (the data is on another host, the place cannot be probed):
    /// the connection's figures, if any, are added after.
    pub fn of_network_only(shape: &Shape, why: String) -> Limits {
        Limits {
            measured_at: now(),
            host: hostname(),
            dir: String::new(),
            device: None,
            direct: false,
            page: shape.page,
            log_block: shape.log_block,
            file_bytes: 0,
            figures: Vec::new(),
            notes: vec![why],
            network: None,
        }
    }

    /// The most of `kind` at any depth or writer count.
    pub fn best(&self, kind: Kind) -> Option<&Figure> {
        self.figures
            .iter()
            .filter(|f| f.kind == kind)
            .max_by(|a, b| a.iops.total_cmp(&b.iops))
    }
}

/// The outcome of a measurement: the limits, or Ctrl-C.
pub enum Measured {
    Done(Box<Limits>),
    Interrupted,
}

/// A probe's file: removed when dropped (at the end, on failure, on Ctrl-C).
struct Scratch {
    path: PathBuf,
    file: Option<File>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        self.file.take();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Creates a probe file in `dir` (a name no file has: refused otherwise) and writes `size`
/// bytes into it, synced; then reopens it with O_DIRECT when `direct`.
fn lay_out(dir: &Path, what: &str, size: u64, direct: bool) -> Result<Scratch, Failed> {
    let made = tempfile::Builder::new()
        .prefix(&format!(".dbsweep-limits-{what}-"))
        .tempfile_in(dir)
        .map_err(|e| Failed::Io(format!("creating a probe file in {}", dir.display()), e))?;
    let (file, path) = made
        .keep()
        .map_err(|e| Failed::Io("keeping the probe file".into(), e.error))?;
    let mut s = Scratch {
        path,
        file: Some(file),
    };
    let f = s.file.as_mut().expect("just made");
    let block = vec![0x5au8; 1 << 20];
    let mut written = 0u64;
    while written < size {
        if crate::interrupt::interrupted() {
            return Err(Failed::Interrupted);
        }
        let n = (size - written).min(block.len() as u64) as usize;
        f.write_all(&block[..n])
            .map_err(|e| Failed::Io(format!("writing the {what} probe's file"), e))?;
        written += n as u64;
    }
    f.sync_all()
        .map_err(|e| Failed::Io(format!("syncing the {what} probe's file"), e))?;
    s.file = Some(
        crate::ioengine::open(&s.path, false, direct)
            .map_err(|e| Failed::Io(format!("opening the {what} probe's file"), e))?,
    );
    Ok(s)
}

/// A failed probe's line.
fn failed_words(dir: &Path, what: &str, e: &std::io::Error) -> String {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::StorageFull | K::QuotaExceeded => format!(
            "{}: the file system is full ({what}): no {what} probe",
            dir.display()
        ),
        K::ReadOnlyFilesystem => format!(
            "{}: the file system is read-only: no disk probe",
            dir.display()
        ),
        K::PermissionDenied => format!(
            "{}: not writable by this user: no disk probe",
            dir.display()
        ),
        _ => format!("{}: {what} failed: {e}", dir.display()),
    }
}

/// Refuses a place that is not a directory (exit 2), before anything is printed.
pub fn check_dir(dir: &Path) -> Result<(), crate::error::Error> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(crate::error::Error::Usage(format!(
                "limits: {}: not a directory",
                dir.display()
            )));
        }
        Err(e) => {
            return Err(crate::error::Error::Usage(format!(
                "limits: {}: {e}",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Measures the limits of `shape.dir`'s file system; `say` gets each figure and note as it
/// comes (the command prints them; a sweep logs them).
pub fn measure(shape: &Shape, say: &mut dyn FnMut(Said)) -> Result<Measured, crate::error::Error> {
    let dir = &shape.dir;
    check_dir(dir)?;
    let mut l = Limits {
        measured_at: 0,
        host: hostname(),
        dir: dir.display().to_string(),
        device: None,
        direct: false,
        page: shape.page,
        log_block: shape.log_block,
        file_bytes: shape.size,
        figures: Vec::new(),
        notes: Vec::new(),
        network: None,
    };
    let note = |l: &mut Limits, say: &mut dyn FnMut(Said), s: String| {
        say(Said::Note(&s));
        l.notes.push(s);
    };
    match device::of(dir) {
        Ok(d) => l.device = Some(d),
        Err(e) => note(
            &mut l,
            say,
            format!("{}: its device cannot be read: {e}", dir.display()),
        ),
    }
    let fs = l
        .device
        .as_ref()
        .map_or("the file system".to_string(), |d| d.fs.clone());
    match crate::ioengine::has_direct(dir) {
        Ok(direct) => {
            l.direct = direct;
            // tmpfs takes O_DIRECT on newer kernels, and is memory all the same.
            if matches!(fs.as_str(), "tmpfs" | "ramfs") {
                note(
                    &mut l,
                    say,
                    format!(
                        "{}: {fs} keeps its files in memory: the probes measure memory, not a disk",
                        dir.display()
                    ),
                );
            } else if !direct {
                note(
                    &mut l,
                    say,
                    format!(
                        "{}: {fs} has no direct IO (O_DIRECT): the probes go through the page cache and may measure memory, not the disk",
                        dir.display()
                    ),
                );
            }
        }
        Err(e) => {
            note(&mut l, say, failed_words(dir, "creating a file", &e));
            l.measured_at = now();
            return Ok(Measured::Done(Box::new(l)));
        }
    }
    if let Some((_, free)) = device::fs_space(dir) {
        let need = shape.size + shape.log_size;
        if free < need + (64 << 20) {
            note(
                &mut l,
                say,
                format!(
                    "{}: the file system is full for the probes ({} MiB free, {} MiB needed): no disk probe",
                    dir.display(),
                    free >> 20,
                    need >> 20
                ),
            );
            l.measured_at = now();
            return Ok(Measured::Done(Box::new(l)));
        }
    }
    let run = |l: &mut Limits, say: &mut dyn FnMut(Said), r: Result<Figure, Failed>, what: &str| {
        match r {
            Ok(f) => {
                say(Said::Figure(&f));
                l.figures.push(f);
                Ok(true)
            }
            Err(Failed::Interrupted) => Err(()),
            Err(Failed::Io(call, e)) => {
                let s = failed_words(dir, &format!("{what} ({call})"), &e);
                say(Said::Note(&s));
                l.notes.push(s);
                Ok(false)
            }
        }
    };
    // The data file: random and sequential probes.
    let direct = l.direct;
    let data_kinds = [
        Kind::RandomRead,
        Kind::RandomWrite,
        Kind::SequentialRead,
        Kind::SequentialWrite,
    ];
    let wanted = |k: &Kind| shape.kinds.contains(k);
    match data_kinds
        .iter()
        .any(wanted)
        .then(|| lay_out(dir, "data", shape.size, direct))
        .transpose()
    {
        Ok(None) => {}
        Ok(Some(data)) => {
            let f = data.file.as_ref().expect("laid out");
            let mut plan: Vec<(Kind, u64, u32)> = Vec::new();
            for k in [Kind::RandomRead, Kind::RandomWrite] {
                for &d in &shape.depths {
                    plan.push((k, shape.page, d));
                }
            }
            plan.push((Kind::SequentialRead, shape.seq_block, shape.seq_depth));
            plan.push((Kind::SequentialWrite, shape.seq_block, shape.seq_depth));
            for (k, block, depth) in plan.into_iter().filter(|(k, _, _)| wanted(k)) {
                let r = probe::ring(f, direct, k, shape.size, block, depth, shape.seconds);
                match run(&mut l, say, r, k.words()) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(()) => return Ok(Measured::Interrupted),
                }
            }
        }
        Err(Failed::Interrupted) => return Ok(Measured::Interrupted),
        Err(Failed::Io(call, e)) => note(&mut l, say, failed_words(dir, &call, &e)),
    }
    // The log file: the commit ceiling.
    let log_kinds = [Kind::WriteFdatasync, Kind::WriteFsync];
    match log_kinds
        .iter()
        .any(wanted)
        .then(|| lay_out(dir, "log", shape.log_size, false))
        .transpose()
    {
        Ok(None) => {}
        Ok(Some(log)) => {
            let f = log.file.as_ref().expect("laid out");
            let mut writers = vec![1];
            if shape.writers > 1 {
                writers.push(shape.writers);
            }
            'kinds: for k in log_kinds.into_iter().filter(wanted) {
                for &w in &writers {
                    let r = probe::commits(f, k, shape.log_size, shape.log_block, w, shape.seconds);
                    match run(&mut l, say, r, k.words()) {
                        Ok(true) => {}
                        Ok(false) => break 'kinds,
                        Err(()) => return Ok(Measured::Interrupted),
                    }
                }
            }
        }
        Err(Failed::Interrupted) => return Ok(Measured::Interrupted),
        Err(Failed::Io(call, e)) => note(&mut l, say, failed_words(dir, &call, &e)),
    }
    l.measured_at = now();
    Ok(Measured::Done(Box::new(l)))
}

/// What a measurement tells as it goes.
pub enum Said<'a> {
    Figure(&'a Figure),
    Note(&'a str),
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The cached limits of `shape`'s device, when measured there less than a day ago.
pub fn cached(shape: &Shape) -> Option<Limits> {
    let d = device::of(&shape.dir).ok()?;
    let path = device::cache_path(&d, &shape.key())?;
    let text = std::fs::read_to_string(path).ok()?;
    let l: Limits = serde_json::from_str(&text).ok()?;
    (l.device.as_ref() == Some(&d) && now().saturating_sub(l.measured_at) < 86_400).then_some(l)
}

/// Keeps `l` in the cache of its device (best effort: a cache that cannot be written is
/// measured again next time).
pub fn keep(shape: &Shape, l: &Limits) {
    let Some(d) = &l.device else { return };
    let Some(path) = device::cache_path(d, &shape.key()) else {
        return;
    };
    if let Some(parent) = path.parent()
        && std::fs::create_dir_all(parent).is_ok()
    {
        let _ = crate::atomic::write_atomic(&path, l);
    }
}

/// A figure's line under `header()`.
pub fn line(f: &Figure) -> String {
    let shape = if f.writers > 1 {
        format!("{} writers", f.writers)
    } else if matches!(f.kind, Kind::WriteFdatasync | Kind::WriteFsync) {
        "1 writer".to_string()
    } else {
        format!("depth {}", f.depth)
    };
    format!(
        "{:<18} {:>7} {:>11} {:>10.0} {:>9.1} {:>9.1} {:>9.1} {:>8.2}",
        f.kind.words(),
        block_words(f.block),
        shape,
        f.iops,
        f.mb_s,
        f.p50_us,
        f.p99_us,
        f.cpu_us_per_io
    )
}

pub fn header() -> String {
    format!(
        "{:<18} {:>7} {:>11} {:>10} {:>9} {:>9} {:>9} {:>8}",
        "probe", "block", "", "per s", "MB/s", "p50 us", "p99 us", "cpu us"
    )
}

fn block_words(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}M", b >> 20)
    } else if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}K", b >> 10)
    } else {
        b.to_string()
    }
}
