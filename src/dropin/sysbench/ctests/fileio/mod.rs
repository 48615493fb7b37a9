//! sysbench's `fileio` test: `prepare` writes `--file-num` files named `test_file.N` in the
//! working directory (`--file-total-size` in all), `run` reads, writes and syncs them in one of
//! sysbench's six modes (sequential write, rewrite and read; random read, write and both) with
//! its request generator (shared by the threads: sequential positions, an fsync every
//! `--file-fsync-freq` requests once something was written, the read/write ratio of `rndrw`),
//! `cleanup` removes them. Synchronous IO (`pread`/`pwrite`) or asynchronous (io_uring, with
//! `--file-async-backlog` requests in flight per thread) or through mappings (mmap), with
//! sysbench's open flags.

mod aio;
mod config;
mod generator;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use rand::{SeedableRng, rngs::SmallRng};

use super::engine::{self, Limits};
use super::{Values, fatal};
use crate::dropin::sysbench::output::SysbenchStyle;
use crate::error::{Error, Outcome};
use crate::ioengine::Aligned;
pub use config::OPTIONS;
use config::{Config, Mode, config};
use generator::{FileIo, Generator};

fn name(i: u32) -> String {
    format!("test_file.{i}")
}

/// sysbench's sizes in its text: `%.5g` of the value in the largest of K, M, G, T it reaches,
/// with an `i` (so `8MiB` once `B` is added).
pub(super) fn size_words(bytes: u64) -> String {
    let mut v = bytes as f64;
    let mut unit = None;
    for u in ['K', 'M', 'G', 'T'] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = Some(u);
    }
    let g = crate::cfmt::format_g(v, 5);
    match unit {
        Some(u) => format!("{g}{u}i"),
        None => g,
    }
}

/// The error of a system call in sysbench's words.
pub(super) fn errno_words(what: &str, e: &std::io::Error) -> String {
    let code = e.raw_os_error().unwrap_or(0);
    // SAFETY: strerror's text for a code, copied at once.
    let text = unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) }
        .to_string_lossy()
        .into_owned();
    format!("{what} errno = {code} ({text})")
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
    let mut block = buf.bytes(c.block as usize).to_vec();
    let mut rng = engine::thread_rng(0, 0);
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
            if style.validate {
                fill(&mut block, offset, &mut rng);
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

pub(super) const MIB: f64 = 1024.0 * 1024.0;

/// `--validate`: a block's last 12 bytes hold the CRC-32 of the rest (4 bytes) and the
/// block's offset in its file (8), after random bytes, as sysbench's blocks do.
const CHECK: usize = 12;

/// Fills `buf` with random bytes, their checksum and `offset`.
pub(super) fn fill(buf: &mut [u8], offset: u64, rng: &mut SmallRng) {
    use rand::Rng;
    if buf.len() < CHECK {
        return;
    }
    let at = buf.len() - CHECK;
    rng.fill(&mut buf[..at]);
    let crc = crc32fast::hash(&buf[..at]);
    buf[at..at + 4].copy_from_slice(&crc.to_ne_bytes());
    buf[at + 4..].copy_from_slice(&offset.to_ne_bytes());
}

/// Checks a block read at `offset` against its checksum and offset, in sysbench's words.
pub(super) fn check(buf: &[u8], offset: u64) -> Result<(), String> {
    if buf.len() < CHECK {
        return Ok(());
    }
    let at = buf.len() - CHECK;
    let crc = crc32fast::hash(&buf[..at]);
    let stored = u32::from_ne_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
    if crc != stored {
        return Err(format!(
            "Checksum mismatch in block with offset: {offset}\nFATAL:     Calculated value: 0x{crc:x}    Stored value: 0x{stored:x}"
        ));
    }
    let stored = u64::from_ne_bytes(buf[at + 4..].try_into().expect("8 bytes"));
    if stored != offset {
        return Err(format!(
            "Offset mismatch in block:\nFATAL:    Actual offset: {offset}    Stored offset: {stored}"
        ));
    }
    Ok(())
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
    text += &format!(
        "Using {} I/O mode\n{}Doing {} test\n",
        match (c.io_async, c.io_mmap) {
            (true, _) => "asynchronous",
            (_, true) => "fast mmaped",
            _ => "synchronous",
        },
        if style.validate {
            "Using checksums validation.\n"
        } else {
            ""
        },
        mode.words()
    );
    engine::header(limits, style, &text);
    let Ok(files) = open_files(&c, mode, style) else {
        return Ok(Outcome::Failed);
    };
    let maps = if c.io_mmap {
        match generator::map_files(&files, c.file_size, mode) {
            Ok(m) => m,
            Err(e) => {
                println!("FATAL: {e}");
                return Ok(Outcome::Failed);
            }
        }
    } else {
        Vec::new()
    };
    let seed = limits.rand_seed;
    let test = FileIo {
        total: c.file_size * u64::from(c.files),
        mode,
        files,
        maps,
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
        at_checkpoint: Mutex::new([0; 5]),
        validate: style.validate,
        seed,
        c,
    };
    let m = engine::run(&test, limits, style);
    engine::finish(&test, &m, style)
}

#[cfg(test)]
mod tests {
    use super::config::Flags;
    use super::*;

    #[test]
    fn a_filled_block_checks_and_a_changed_byte_or_offset_does_not() {
        let mut rng = engine::thread_rng(7, 0);
        let mut block = vec![0u8; 4096];
        fill(&mut block, 8192, &mut rng);
        assert!(check(&block, 8192).is_ok());
        assert!(
            check(&block, 4096)
                .unwrap_err()
                .starts_with("Offset mismatch")
        );
        block[10] ^= 1;
        assert!(
            check(&block, 8192)
                .unwrap_err()
                .starts_with("Checksum mismatch")
        );
    }

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
