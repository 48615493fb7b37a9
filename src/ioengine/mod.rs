//! The IO engine: aligned buffers, files opened for direct IO where the file system has it,
//! and a ring of asynchronous requests. One engine, two front ends: sysbench's `fileio` test
//! (dropin/sysbench/ctests/fileio) and the disk and log probes of `dbsweep limits` (limits/).

pub mod ring;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A buffer aligned for O_DIRECT (4 KiB) of `len` bytes.
pub struct Aligned {
    raw: Vec<u8>,
    at: usize,
    len: usize,
}

impl Aligned {
    pub fn new(len: usize) -> Aligned {
        let raw = vec![0u8; len + 4096];
        let at = raw.as_ptr().align_offset(4096);
        Aligned { raw, at, len }
    }

    /// The first `n` bytes (at most the buffer's length).
    pub fn bytes(&mut self, n: usize) -> &mut [u8] {
        &mut self.raw[self.at..self.at + n.min(self.len)]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Opens `path` for reading and writing with O_DIRECT when `direct`; a file system that has
/// no direct IO (tmpfs) refuses the flag with EINVAL, which is returned as it is for the
/// caller to say.
pub fn open(path: &Path, create: bool, direct: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).mode(0o600);
    if create {
        o.create_new(true);
    }
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path)
}

/// Whether the file system that holds `dir` takes O_DIRECT: a probe file opened with it in
/// `dir` (created and removed here; a name no other file has).
pub fn has_direct(dir: &Path) -> std::io::Result<bool> {
    let probe = tempfile::Builder::new()
        .prefix(".dbsweep-direct-")
        .tempfile_in(dir)?;
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(probe.path())
    {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aligned_buffer_starts_on_a_page() {
        let mut b = Aligned::new(16384);
        assert_eq!(b.bytes(16384).as_ptr() as usize % 4096, 0);
        assert_eq!(b.bytes(1 << 20).len(), 16384);
    }
}
