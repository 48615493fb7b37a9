//! MariaDB's and MySQL's system tables, installed once per build and copied into each fresh
//! data directory after that.
//!
//! `mysqld --initialize-insecure` takes about 6 s and `mariadb-install-db` about 1.3 s on a
//! 2-core machine, and every fresh managed server paid it: a sweep with a fresh server per
//! step, and the tests, which start a few hundred. The install runs with `--no-defaults`, so
//! what it writes depends only on the build, the user the server runs as and the host's name
//! (MariaDB's root@host accounts): the key. The copy is taken right after a successful install,
//! before the server first starts, into a directory of its own that is renamed into place once
//! complete, so that a half-made copy is never used; a copy that cannot be made or used only
//! costs the install. MySQL's server UUID (auto.cnf, written by the install) is left out of
//! each server's copy: every server makes its own. The copies live in
//! `$XDG_CACHE_HOME/dbsweep/system-tables` (else `~/.cache/...`; about 190 MB for a MySQL
//! build, 115 MB for MariaDB) and may be deleted at any time.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::instance::ManagedServer;

/// Where the copies live; None without a home.
fn root() -> Option<PathBuf> {
    Some(super::setup::cache_dir()?.join("system-tables"))
}

/// The copy's directory for this server's build, user and host: None when the binary cannot be
/// read (then nothing is cached).
fn slot(s: &ManagedServer, binary: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(binary).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let what = format!(
        "{:?}\n{}\n{}\n{}\n{}\n{:?}\n{:?}\n{}",
        s.kind,
        binary.display(),
        meta.len(),
        modified.as_nanos(),
        s.version,
        s.runs_as,
        s.build.as_ref().map(|b| &b.basedir),
        hostname(),
    );
    let digest = Sha256::digest(what.as_bytes());
    let key: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    Some(root()?.join(format!("{:?}-{key}", s.kind).to_lowercase()))
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Copies the build's installed system tables into `data` (which must not exist yet or be
/// empty); false when there is no copy or it could not be used (then `data` is as before).
pub(super) fn restore(s: &ManagedServer, binary: &Path, data: &Path) -> bool {
    let Some(slot) = slot(s, binary) else {
        return false;
    };
    let from = slot.join("data");
    if !slot.join("complete").is_file() || !from.is_dir() {
        return false;
    }
    if data.exists() && std::fs::remove_dir(data).is_err() {
        return false; // not empty: not ours to fill
    }
    if copy_tree(&from, data) {
        // MySQL's server UUID: each server makes its own at its first start.
        let _ = std::fs::remove_file(data.join("auto.cnf"));
        return true;
    }
    let _ = std::fs::remove_dir_all(data);
    false
}

/// Keeps a copy of the system tables just installed in `data`, unless one is there already.
/// Failures are ignored: the next fresh server installs again.
pub(super) fn keep(s: &ManagedServer, binary: &Path, data: &Path) {
    let Some(slot) = slot(s, binary) else {
        return;
    };
    if slot.join("complete").is_file() {
        return;
    }
    let Some(parent) = slot.parent() else {
        return;
    };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let unique = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = parent.join(format!(".making-{}-{unique}", std::process::id()));
    let made = std::fs::create_dir(&tmp).is_ok()
        && copy_tree(data, &tmp.join("data"))
        && std::fs::write(tmp.join("complete"), b"").is_ok()
        && std::fs::rename(&tmp, &slot).is_ok();
    if !made {
        // Another server's copy won the rename, or the copy failed: ours goes.
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

/// `cp -a` (owners, modes and times kept; a reflink where the file system has them).
fn copy_tree(from: &Path, to: &Path) -> bool {
    Command::new("cp")
        .args(["-a", "--reflink=auto"])
        .arg(from)
        .arg(to)
        .output()
        .is_ok_and(|o| o.status.success())
}
