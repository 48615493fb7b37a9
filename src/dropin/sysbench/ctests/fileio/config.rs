//! fileio's options: sysbench's table, its test modes and open flags, and its checks.

use super::super::Values;
use super::super::help::{self, Kind, Opt};

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
pub(super) enum Mode {
    SeqWrite,
    SeqRewrite,
    SeqRead,
    RndRead,
    RndWrite,
    RndRw,
}

impl Mode {
    pub(super) fn parse(s: &str) -> Option<Mode> {
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

    pub(super) fn words(self) -> &'static str {
        match self {
            Mode::SeqWrite => "sequential write (creation)",
            Mode::SeqRewrite => "sequential rewrite",
            Mode::SeqRead => "sequential read",
            Mode::RndRead => "random read",
            Mode::RndWrite => "random write",
            Mode::RndRw => "random r/w",
        }
    }

    pub(super) fn sequential(self) -> bool {
        matches!(self, Mode::SeqWrite | Mode::SeqRewrite | Mode::SeqRead)
    }

    pub(super) fn writes(self) -> bool {
        !matches!(self, Mode::SeqRead | Mode::RndRead)
    }
}

/// The open flags of `--file-extra-flags`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Flags {
    pub(super) sync: bool,
    pub(super) dsync: bool,
    pub(super) direct: bool,
}

impl Flags {
    pub(super) fn words(self) -> String {
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

    pub(super) fn bits(self) -> i32 {
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
pub(super) struct Config {
    pub(super) files: u32,
    pub(super) file_size: u64,
    pub(super) block: u64,
    /// A sequential request's size: the block, times `--file-merged-requests` where given.
    pub(super) request: u64,
    pub(super) merged: u64,
    pub(super) mode: Option<Mode>,
    pub(super) flags: Flags,
    pub(super) fsync_freq: u64,
    pub(super) fsync_all: bool,
    pub(super) fsync_end: bool,
    pub(super) fdatasync: bool,
    /// `--file-io-mode=async`, with `--file-async-backlog` requests in flight per thread.
    pub(super) io_async: bool,
    /// `--file-io-mode=mmap`: each file mapped whole, read and written by copies, synced
    /// with msync (sysbench's "fast mmaped" mode of 64-bit machines).
    pub(super) io_mmap: bool,
    pub(super) backlog: u32,
    pub(super) rw_ratio: f64,
}

/// The options of `command` read, or sysbench's FATAL line.
pub(super) fn config(v: &Values, command: &str) -> Result<Config, String> {
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
        // Every file at least a byte: sizes and positions are taken modulo a file's size.
        Some(n) if n >= u64::from(files) => n,
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
    let (io_async, io_mmap) = match v.text("file-io-mode") {
        "sync" => (false, false),
        "async" => (true, false),
        "mmap" => (false, true),
        m => return Err(format!("unknown I/O mode: {m}")),
    };
    let backlog = match v.int("file-async-backlog") {
        Some(n) if n > 0 && n <= 1 << 15 => n as u32,
        _ => {
            return Err(format!(
                "Invalid value of file-async-backlog: {}",
                v.text("file-async-backlog")
            ));
        }
    };
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
        io_async,
        io_mmap,
        backlog,
        rw_ratio,
    })
}
