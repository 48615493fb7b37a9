//! Which device and file system hold a directory (the key the limits are cached under), and
//! the cache: one file per device, file system, size and probe shape, trusted for a day.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

pub use crate::results::limits::Device;

/// The device and file system that hold `dir`, from the mount table and sysfs.
pub fn of(dir: &Path) -> std::io::Result<Device> {
    let dir = dir.canonicalize()?;
    let dev = std::fs::metadata(&dir)?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let number = format!("{major}:{minor}");
    let table = std::fs::read_to_string("/proc/self/mountinfo")?;
    // The mount with this device number whose mount point is the longest prefix of `dir`.
    let mut best: Option<(String, String, String)> = None;
    for line in table.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let Some(dash) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        if f.len() < dash + 3 || f.get(2) != Some(&number.as_str()) {
            continue;
        }
        let mount = unescape(f[4]);
        if !dir.starts_with(&mount) {
            continue;
        }
        if best.as_ref().is_none_or(|(m, _, _)| mount.len() > m.len()) {
            best = Some((mount, f[dash + 1].to_string(), unescape(f[dash + 2])));
        }
    }
    let (mount, fs, source) = best.unwrap_or_else(|| ("/".into(), "unknown".into(), "?".into()));
    let sectors = std::fs::read_to_string(format!("/sys/dev/block/{number}/size"))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let bytes = match sectors {
        Some(s) => s * 512,
        None => fs_bytes(&dir).unwrap_or(0),
    };
    Ok(Device {
        source,
        number,
        fs,
        mount,
        bytes,
    })
}

/// The mount table's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A file system's size and free bytes (statvfs).
pub fn fs_space(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the struct it is given from a NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let unit = s.f_frsize as u64;
    Some((s.f_blocks as u64 * unit, s.f_bavail as u64 * unit))
}

fn fs_bytes(dir: &Path) -> Option<u64> {
    fs_space(dir).map(|(total, _)| total)
}

/// Where a device's limits are cached: `$XDG_CACHE_HOME/dbsweep/limits/` (else
/// `~/.cache/...`), one file per device, file system, size and probe shape.
pub fn cache_path(d: &Device, shape: &str) -> Option<PathBuf> {
    let name: String = format!("{}-{}-{}-{}-{shape}", d.number, d.fs, d.bytes, d.source)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Some(
        crate::server::setup::cache_dir()?
            .join("limits")
            .join(format!("{name}.json")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_tables_escapes_are_read() {
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape("/x\\"), "/x\\");
        assert_eq!(unescape("/plain"), "/plain");
    }

    #[test]
    fn a_directory_has_a_device_and_a_file_system() {
        let d = of(Path::new("/")).unwrap();
        assert!(!d.fs.is_empty() && d.fs != "unknown", "{d:?}");
        assert!(d.bytes > 0, "{d:?}");
    }
}
