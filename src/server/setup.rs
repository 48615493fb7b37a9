//! What starting a server needs from the machine: its binaries, an unprivileged user, a free
//! port, a reachable directory, and setup commands run with a bound.

use std::fs::{self};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::kind::ServerKind;
use crate::error::Error;
/// A free TCP port on the loopback interface.
pub(crate) fn free_port() -> Result<u16, Error> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| Error::Run(format!("finding a free port: {e}")))?;
    Ok(l.local_addr()
        .map_err(|e| Error::Run(e.to_string()))?
        .port())
}

/// Finds `names` (first match wins) in `dirs`, then on PATH.
pub(crate) fn find_binary(names: &[&str], dirs: &[PathBuf]) -> Option<PathBuf> {
    let path_dirs = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    for name in names {
        for d in dirs
            .iter()
            .chain(path_dirs.iter())
            .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")].iter())
        {
            let p = d.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The unprivileged user a server of `kind` runs as when dbsweep runs as root.
pub(crate) fn server_user(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Postgres => "postgres",
        ServerKind::Mariadb | ServerKind::Mysql => "mysql",
    }
}

/// When dbsweep runs as root, the (uid, gid) of `user`, which the server runs as.
pub(crate) fn unprivileged_user(user: &str) -> Result<Option<(u32, u32)>, Error> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new(user).expect("no NUL in user name");
    // SAFETY: getpwnam returns a pointer into static storage or null; read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err(Error::Run(format!(
            "dbsweep runs as root, and the server must run as the unprivileged user '{user}', which does not exist (the server's Debian package creates it)"
        )));
    }
    // SAFETY: pw is non-null and points to a valid passwd entry.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some((uid, gid)))
}

/// Fails with a clear message when the server's user cannot reach `dir` (a parent directory
/// without search permission for others, such as a private temporary directory).
pub(crate) fn check_reachable(
    dir: &Path,
    owner: Option<(u32, u32)>,
    user: &str,
) -> Result<(), Error> {
    match closed_parent(dir, owner) {
        None => Ok(()),
        Some((parent, mode)) => Err(Error::Usage(format!(
            "data directory {}: the server runs as '{user}', which cannot enter {} (mode {mode:o}); \
             choose a directory (--server-datadir, or datadir_in in a plan) whose parents \
             others may enter, or chmod o+x {}",
            dir.display(),
            parent.display(),
            parent.display()
        ))),
    }
}

/// The first parent of `dir` (and its mode) that the server's user, `owner`, may not enter.
pub(crate) fn closed_parent(dir: &Path, owner: Option<(u32, u32)>) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    let (uid, _) = owner?;
    dir.ancestors().skip(1).find_map(|parent| {
        let meta = fs::metadata(parent).ok()?;
        (meta.uid() != uid && meta.mode() & 0o001 == 0)
            .then(|| (parent.to_path_buf(), meta.mode() & 0o777))
    })
}

/// Whether a server of `kind` (run as its unprivileged user when dbsweep runs as root) can
/// enter data directories made in `dir`; the reason when it cannot. For checking a plan before
/// anything runs.
pub fn check_datadir_in(kind: ServerKind, dir: &Path) -> Result<(), String> {
    let user = server_user(kind);
    // A missing user is reported when the server starts, with what to install.
    let owner = unprivileged_user(user).unwrap_or(None);
    match closed_parent(&dir.join("data"), owner) {
        None => Ok(()),
        Some((parent, mode)) => Err(format!(
            "the server runs as '{user}', which cannot enter {} (mode {mode:o}); choose a \
             directory whose parents others may enter, or chmod o+x {}",
            parent.display(),
            parent.display()
        )),
    }
}

/// Gives `path` (recursively) to the server's user. Never through a symbolic link: a link
/// is changed itself (lchown), never its target, and never descended into, so a link in the
/// data directory (to a file, to `..`) hands nothing outside the directory to the server.
pub(crate) fn chown_tree(path: &Path, owner: Option<(u32, u32)>) -> Result<(), Error> {
    let Some((uid, gid)) = owner else {
        return Ok(());
    };
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))
        .map_err(|e| Error::Run(format!("chown {}: {e}", path.display())))?;
    let meta =
        fs::symlink_metadata(path).map_err(|e| Error::Run(format!("{}: {e}", path.display())))?;
    if meta.is_dir() {
        for e in fs::read_dir(path)
            .map_err(|e| Error::Run(format!("{}: {e}", path.display())))?
            .flatten()
        {
            chown_tree(&e.path(), owner)?;
        }
    }
    Ok(())
}

/// Writes `text` to `path` (created or truncated) with permissions `mode`, refusing to write
/// through a symbolic link: a link planted in a data directory never redirects a write.
pub(crate) fn write_file(path: &Path, text: &[u8], mode: u32) -> Result<(), Error> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let fail = |e: std::io::Error| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            Error::Run(format!(
                "{}: a symbolic link; dbsweep does not write through links in a data directory",
                path.display()
            ))
        } else {
            Error::Run(format!("{}: {e}", path.display()))
        }
    };
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(fail)?;
    // An existing file keeps its mode through open: set it on the file itself (fchmod).
    f.set_permissions(fs::Permissions::from_mode(mode))
        .map_err(fail)?;
    f.write_all(text).map_err(fail)
}

/// The file that marks a directory given with `--server-datadir` as dbsweep's own.
pub const DATADIR_MARK: &str = "dbsweep.datadir";

/// The data directory given with `--server-datadir`, made when missing, as an absolute path.
/// A directory that holds files dbsweep did not put there (no [`DATADIR_MARK`]), or that
/// belongs to another user, is refused unless `force`: dbsweep gives the directory to the
/// server's user and writes in it.
pub(crate) fn claim_datadir(d: &Path, force: bool) -> Result<PathBuf, Error> {
    use std::os::unix::fs::MetadataExt;
    let usage = |m: String| Error::Usage(format!("--server-datadir {}: {m}", d.display()));
    fs::create_dir_all(d).map_err(|e| usage(e.to_string()))?;
    let dir = fs::canonicalize(d).map_err(|e| usage(e.to_string()))?;
    let meta = fs::metadata(&dir).map_err(|e| usage(e.to_string()))?;
    if !meta.is_dir() {
        return Err(usage("not a directory".into()));
    }
    let mark = dir.join(DATADIR_MARK);
    let ours = fs::symlink_metadata(&mark).is_ok_and(|m| m.is_file());
    let hint = "give a new or empty directory, or add --server-datadir-force to use it anyway \
                (dbsweep never follows the links in it)";
    if !ours && !force {
        let mut names: Vec<String> = fs::read_dir(&dir)
            .map_err(|e| usage(e.to_string()))?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        if let Some(first) = names.first() {
            return Err(usage(format!(
                "holds {} entr{} that dbsweep did not make ({first}{}); {hint}",
                names.len(),
                if names.len() == 1 { "y" } else { "ies" },
                if names.len() > 1 { ", ..." } else { "" },
            )));
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(usage(format!(
                "belongs to user id {}, not to this user ({me}); {hint}",
                meta.uid()
            )));
        }
    }
    if !ours {
        write_file(
            &mark,
            b"made by dbsweep for a managed server's data\n",
            0o644,
        )?;
    }
    Ok(dir)
}

/// How long a setup command (initdb, install-db, --initialize) may take: minutes on the
/// slowest disks, never more.
const SETUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs a setup command (initdb, install-db) to completion; fails with its output.
pub(crate) fn run_setup(cmd: &mut Command, what: &str) -> Result<(), Error> {
    // Bounded, and ended by Ctrl-C: a build whose initdb hangs is not waited on forever.
    let out = output_within(cmd, SETUP_TIMEOUT).map_err(|e| {
        if crate::interrupt::interrupted() {
            Error::Run(format!("{what}: interrupted"))
        } else {
            Error::Run(format!("{what}: {e}"))
        }
    })?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // One line: the tool's own error line (the last that says ERROR or error), else its last.
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let key = lines
        .iter()
        .rev()
        .find(|l| l.contains("ERROR") || l.contains("error") || l.contains("Error"))
        .or(lines.last())
        .copied()
        .unwrap_or("no output");
    Err(Error::Run(format!("{what} failed ({}): {key}", out.status)))
}

/// The first line a binary prints for `--version`.
pub(crate) fn version_of(program: &Path) -> String {
    Command::new(program)
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// `path` as one component of a URL (every byte but letters, digits and `-._~` escaped).
pub(crate) fn url_component(path: &std::path::Path) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::percent_encode(path.as_os_str().as_encoded_bytes(), KEEP).to_string()
}

/// Runs `cmd` to its end, or kills it after `limit`: a broken tree's binary must not hang a
/// listing. (Its output is a line or two: the pipes never fill before it exits.)
/// Kills the process group `pgid` (a setup command and everything it started) and waits, a
/// few seconds at most, until none of its processes is left running.
pub(crate) fn kill_group(pgid: u32) {
    let group = -(pgid as libc::pid_t);
    // SAFETY: signals to a process group this process made; the leader is not reaped yet, so
    // the group's id is not reused.
    unsafe { libc::kill(group, libc::SIGKILL) };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < until && group_running(pgid) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Whether a process of group `pgid` other than a zombie is left (read from /proc).
fn group_running(pgid: u32) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let Ok(stat) = std::fs::read_to_string(p.path().join("stat")) else {
            return false;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            return false;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // state, ppid, pgrp
        fields.first().is_some_and(|s| *s != "Z")
            && fields.get(2) == Some(&pgid.to_string().as_str())
    })
}

/// `cmd`'s output, its process group killed when it takes longer than `limit` or on Ctrl-C.
/// The pipes are read while it runs (a thread waits for it), so a child that writes more than
/// a pipe holds never blocks.
pub(crate) fn output_within(
    cmd: &mut Command,
    limit: std::time::Duration,
) -> std::io::Result<std::process::Output> {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    // A process group of its own: install-db starts a bootstrap server, which must end with
    // it (and stop writing into the directory that is removed next).
    let child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let deadline = std::time::Instant::now() + limit;
    loop {
        match finished.recv_timeout(std::time::Duration::from_millis(10)) {
            Ok(out) => return out,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(std::io::Error::other("the waiting thread ended"));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if std::time::Instant::now() >= deadline || crate::interrupt::interrupted() {
            kill_group(pid);
            // Bounded: the group is killed, so the pipes close and the waiter returns.
            let _ = finished.recv_timeout(std::time::Duration::from_secs(5));
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                if crate::interrupt::interrupted() {
                    "interrupted".to_string()
                } else {
                    format!("no answer within {} s", limit.as_secs())
                },
            ));
        }
    }
}

/// dbsweep's own cache: `$XDG_CACHE_HOME/dbsweep`, else `~/.cache/dbsweep`; None without either.
pub(crate) fn cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| std::path::PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("dbsweep"))
}
