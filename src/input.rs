//! Reading files that come from outside (plans, results files, scripts, keys, certificates):
//! only regular files, and never more than a limit, so that a FIFO, a device such as
//! `/dev/zero` or a huge file given by mistake ends in an error at once instead of a wait
//! without end or memory without bound.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A plan, a sysbench config file, a key or a certificate: small text.
pub const SMALL: u64 = 4 << 20;
/// A Lua script.
pub const SCRIPT: u64 = 16 << 20;
/// A results file or step record (histograms, intervals, profiles).
pub const RESULTS: u64 = 512 << 20;

/// The longest duration dbsweep accepts anywhere (a run, a warm-up, a pause, a timeout): a
/// year. Longer ones are typing errors, and past a few centuries a clock overflows.
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// The bytes of the regular file at `path`, refusing anything else and anything over
/// `limit` bytes. Opened without blocking: a FIFO without a writer does not hold the open.
pub fn read(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_flags(path, limit, libc::O_NONBLOCK)
}

/// [`read`] of a file dbsweep wrote beside a results file (a flame graph, folded stacks): a
/// symbolic link at `path` is refused, not followed, so that a results file from elsewhere
/// cannot make a report embed a file it points to.
pub fn read_own(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    read_flags(path, limit, libc::O_NONBLOCK | libc::O_NOFOLLOW).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a symbolic link, not a file dbsweep wrote",
            )
        } else {
            e
        }
    })
}

fn read_flags(path: &Path, limit: u64, flags: i32) -> io::Result<Vec<u8>> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, a socket or a device)"
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, kind));
    }
    let too_big = |n: u64| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{n} bytes or more, past the {} MiB this file may hold",
                limit >> 20
            ),
        )
    };
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// sysbench-style booleans: on/off, true/false, yes/no, 1/0; a bare flag means on.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{s}' is not a boolean (use on or off)")),
    }
}

/// A clap options type at its defaults: clap's, written once on the options themselves (the
/// matches of no option at all), for those who build options in code.
pub fn clap_defaults<T: clap::Args + clap::FromArgMatches>() -> T {
    let command = T::augment_args(clap::Command::new("defaults").no_binary_name(true));
    let matches = command
        .try_get_matches_from(std::iter::empty::<&str>())
        .expect("every option has a default");
    T::from_arg_matches(&matches).expect("the defaults make the options")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_directories_and_big_files_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path in a fresh directory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for p in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
            assert!(read(p, SMALL).is_err(), "{}", p.display());
        }
        let big = dir.path().join("big");
        fs::write(&big, vec![b'x'; 2048]).unwrap();
        assert!(read(&big, 1024).is_err());
        assert_eq!(read(&big, 4096).unwrap().len(), 2048);
    }

    #[test]
    fn a_file_of_our_own_is_never_read_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        fs::write(&secret, "password").unwrap();
        let link = dir.path().join("x.flame.svg");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let e = read_own(&link, SMALL).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(read_own(&secret, SMALL).unwrap(), b"password");
    }
}
