//! MariaDB's and MySQL's builds from Debian's newer suites (trixie, unstable), the source
//! `scripts/builds` uses: one release per suite, read with apt's own client into a private
//! state directory (`$XDG_CACHE_HOME/dbsweep/apt/SUITE`, else `~/.cache/...`; the system's
//! sources and package state are never touched), the server package and the libraries it needs unpacked into the build's tree, and
//! its programs set to load the tree's own C library and libraries (patchelf: they need a newer
//! C library than a stable system's). apt checks the suite's signature (Debian's archive
//! keyring) and every package's hash. Needs apt-get, apt-cache, dpkg-deb and patchelf.
//!
//! The mirror is `DBSWEEP_DEBIAN_MIRROR`, else the first of this system's apt sources.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{Checksum, Release};
use crate::server::kind::ServerKind;

/// The suites asked, oldest first.
const SUITES: [&str; 2] = ["trixie", "unstable"];
/// How long apt may take to read a suite's lists, or to download a build's packages.
const APT_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// A suite's lists are read again when older than this.
const LISTS_FRESH: Duration = Duration::from_secs(24 * 3600);
/// How long a process waits for another that holds a suite's state: the holder's apt runs
/// (the lists, the closure, the download) are each bounded by [`APT_TIMEOUT`].
const STATE_WAIT: Duration = Duration::from_secs(3 * 15 * 60);
/// What the servers need none of: interpreters, tools and the packages' configuration helpers
/// (by name, and by the start of a name).
const LEFT_OUT: [&str; 17] = [
    "perl",
    "perl-base",
    "adduser",
    "lsb-base",
    "sensible-utils",
    "tzdata",
    "ucf",
    "passwd",
    "init-system-helpers",
    "mysql-common",
    "mariadb-common",
    "postgresql-client-common",
    "ssl-cert",
    "libjson-perl",
    "netbase",
    "procps",
    "psmisc",
];
const LEFT_OUT_START: [&str; 10] = [
    "perl-modules-",
    "libperl",
    "libgdbm",
    "libdb5",
    "debconf",
    "login",
    "libpam-",
    "postgresql-common",
    "python3",
    "libpython",
];

/// The packages of a kind's build and the program that means it is there.
fn packages(kind: ServerKind) -> Option<(&'static [&'static str], &'static str)> {
    match kind {
        ServerKind::Mariadb => Some((
            &["mariadb-server-core", "mariadb-client-core"],
            "sbin/mariadbd",
        )),
        ServerKind::Mysql => Some((&["mysql-server-core"], "sbin/mysqld")),
        ServerKind::Postgres => None,
    }
}

fn mirror() -> Result<String, String> {
    if let Ok(m) = std::env::var("DBSWEEP_DEBIAN_MIRROR")
        && !m.is_empty()
    {
        return Ok(m);
    }
    let mut texts = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/etc/apt/sources.list.d") {
        for e in dir.flatten() {
            if e.path().extension().is_some_and(|x| x == "sources") {
                texts.push(std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
    }
    for t in &texts {
        if let Some(uri) = t
            .lines()
            .find_map(|l| l.strip_prefix("URIs:"))
            .and_then(|u| u.split_whitespace().next())
        {
            return Ok(uri.to_string());
        }
    }
    let list = std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default();
    list.lines()
        .filter_map(|l| l.strip_prefix("deb "))
        .flat_map(str::split_whitespace)
        .find(|w| w.contains("://"))
        .map(String::from)
        .ok_or_else(|| {
            "no Debian mirror in this system's apt sources (set DBSWEEP_DEBIAN_MIRROR)".into()
        })
}

/// apt's options for the private state of `suite` under `state`.
fn apt_options(state: &Path) -> Vec<String> {
    let d = |p: &str| state.join(p).display().to_string();
    [
        format!("Dir::Etc::sourcelist={}", d("sources.list")),
        "Dir::Etc::sourceparts=-".into(),
        format!("Dir::State::Lists={}", d("lists")),
        format!("Dir::Cache={}", d("cache")),
        format!("Dir::State::status={}", d("status")),
        "APT::Architecture=amd64".into(),
        "Debug::NoLocking=1".into(),
        "APT::Sandbox::User=root".into(),
    ]
    .into_iter()
    .flat_map(|o| ["-o".to_string(), o])
    .collect()
}

/// Runs `program` with `args`, bounded by `timeout` and Ctrl-C; its standard output.
fn run(
    program: &str,
    args: &[String],
    dir: Option<&Path>,
    timeout: Duration,
) -> Result<String, String> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let out =
        crate::server::setup::output_within(&mut cmd, timeout).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("needs {program} (Debian's apt, dpkg and patchelf)")
            }
            _ => format!("{program}: {e}"),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!("{program} failed ({}): {last}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// apt's private state directories.
fn cache() -> Result<PathBuf, String> {
    crate::server::setup::cache_dir()
        .map(|d| d.join("apt"))
        .ok_or_else(|| "neither XDG_CACHE_HOME nor HOME is set: no place for apt's lists".into())
}

/// A suite's private state, held by this process until dropped. apt runs there without its
/// own locks (`Debug::NoLocking`: they are the system's, and root's), so dbsweep takes one of
/// its own: two processes reading a suite's lists at once (two sweeps, or a sweep and
/// `servers --available`) take each other's half-fetched files away.
struct AptState {
    dir: PathBuf,
    _held: File,
}

/// Holds `suite`'s state under `apt` (its lock file beside it): at once when free, else after
/// one line saying what it waits for, until the holder is done, Ctrl-C or [`STATE_WAIT`].
fn hold(apt: &Path, suite: &str) -> Result<File, String> {
    let path = apt.join(format!("{suite}.lock"));
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    std::fs::create_dir_all(apt).map_err(err)?;
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(err)?;
    let deadline = Instant::now() + STATE_WAIT;
    let mut said = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::Error(e)) => return Err(err(e)),
            Err(TryLockError::WouldBlock) => {}
        }
        if !said {
            eprintln!(
                "waiting for another dbsweep using Debian {suite}'s package lists ({})",
                path.display()
            );
            said = true;
        }
        if crate::interrupt::interrupted() {
            return Err(format!(
                "waiting for Debian {suite}'s package lists: interrupted"
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "another process has held {} for {} minutes",
                path.display(),
                STATE_WAIT.as_secs() / 60
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The private state of `suite`, held, its lists read (again when older than a day).
fn state(suite: &str) -> Result<AptState, String> {
    let apt = cache()?;
    let held = hold(&apt, suite)?;
    let state = apt.join(suite);
    let stamp = state.join("lists").join("dbsweep-updated");
    let fresh = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().is_ok_and(|e| e < LISTS_FRESH));
    if fresh {
        return Ok(AptState {
            dir: state,
            _held: held,
        });
    }
    for d in ["lists/partial", "cache/archives/partial"] {
        std::fs::create_dir_all(state.join(d)).map_err(|e| format!("{}: {e}", state.display()))?;
    }
    let write = |name: &str, text: String| {
        std::fs::write(state.join(name), text).map_err(|e| format!("{}: {e}", state.display()))
    };
    write("status", String::new())?;
    write(
        "sources.list",
        format!(
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {} {suite} main\n",
            mirror()?
        ),
    )?;
    eprintln!(
        "reading Debian {suite}'s package lists into {} (once a day)",
        state.display()
    );
    let mut args = apt_options(&state);
    args.extend(["-qq".into(), "update".into()]);
    run("apt-get", &args, None, APT_TIMEOUT)
        .map_err(|e| format!("reading Debian {suite}'s package lists: {e}"))?;
    write("lists/dbsweep-updated", String::new())?;
    Ok(AptState {
        dir: state,
        _held: held,
    })
}

/// `1:11.8.3-1+b1` -> `11.8.3`: the upstream version of a Debian version.
fn upstream(debian: &str) -> Option<String> {
    let v = debian.split_once(':').map_or(debian, |(_, v)| v);
    let v = v.split(['-', '+', '~']).next()?;
    let parts: Vec<&str> = v.split('.').collect();
    (parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
    .then(|| v.to_string())
}

/// The builds of `kind` Debian's suites have, oldest first.
pub(super) fn available(kind: ServerKind) -> Result<Vec<Release>, String> {
    let Some((names, _)) = packages(kind) else {
        return Ok(Vec::new());
    };
    let mut out: Vec<Release> = Vec::new();
    for suite in SUITES {
        let state = state(suite)?;
        let mut args = apt_options(&state.dir);
        args.extend(["show".into(), names[0].into()]);
        let text = run("apt-cache", &args, None, APT_TIMEOUT).unwrap_or_default();
        drop(state);
        // The first record is the candidate (apt-cache show lists the newest first).
        let Some(debian) = text
            .lines()
            .find_map(|l| l.strip_prefix("Version:"))
            .map(str::trim)
        else {
            continue;
        };
        // Debian's versions are letters, digits and `.+~:-`: anything else (a terminal's
        // escape) is no release.
        if !super::package::registry_word(debian, ".+~:-") {
            continue;
        }
        let Some(version) = upstream(debian) else {
            continue;
        };
        if out.iter().any(|r| r.version == version) {
            continue;
        }
        out.push(Release {
            kind,
            version,
            package_version: format!("{} {debian} (Debian {suite})", names[0]),
            url: suite.to_string(),
            checksum: Checksum::Apt,
        });
    }
    out.sort_by_key(|r| crate::server::builds::version_key(&r.version));
    Ok(out)
}

/// Downloads `release`'s packages and the libraries they need with apt, and unpacks them into
/// `part` (the packages' `usr/` as its top), the programs patched to run on the tree's own
/// libraries.
pub(super) fn unpack(release: &Release, builds: &Path, part: &Path) -> Result<(), String> {
    let (names, _) = packages(release.kind).ok_or("not a Debian build")?;
    let suite = release.url.as_str();
    let state = state(suite)?;
    let mut args = apt_options(&state.dir);
    args.extend(
        [
            "depends",
            "--recurse",
            "--no-recommends",
            "--no-suggests",
            "--no-conflicts",
            "--no-breaks",
            "--no-replaces",
            "--no-enhances",
            "--no-pre-depends",
        ]
        .map(String::from),
    );
    args.extend(names.iter().map(|n| n.to_string()));
    let closure = run("apt-cache", &args, None, APT_TIMEOUT)?;
    let mut wanted: Vec<String> = closure
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()))
        .map(|l| l.trim().to_string())
        .filter(|p| {
            !LEFT_OUT.contains(&p.as_str())
                && p != "coreutils"
                && !LEFT_OUT_START.iter().any(|x| p.starts_with(x))
        })
        .collect();
    wanted.sort();
    wanted.dedup();
    let debs = part.join(".debs");
    std::fs::create_dir_all(&debs).map_err(|e| format!("{}: {e}", debs.display()))?;
    let mut args = apt_options(&state.dir);
    args.push("-qq".into());
    args.push("download".into());
    args.extend(wanted);
    run("apt-get", &args, Some(&debs), APT_TIMEOUT)?;
    drop(state);
    let tree = part.join(".tree");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&debs)
        .map_err(|e| format!("{}: {e}", debs.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    files.sort();
    for deb in &files {
        run(
            "dpkg-deb",
            &[
                "-x".into(),
                deb.display().to_string(),
                tree.display().to_string(),
            ],
            None,
            APT_TIMEOUT,
        )?;
    }
    // The packages' usr/ becomes the tree's top.
    let usr = tree.join("usr");
    for e in std::fs::read_dir(&usr)
        .map_err(|e| format!("{}: {e}", usr.display()))?
        .flatten()
    {
        std::fs::rename(e.path(), part.join(e.file_name()))
            .map_err(|err| format!("{}: {err}", e.path().display()))?;
    }
    let _ = std::fs::remove_dir_all(&tree);
    let _ = std::fs::remove_dir_all(&debs);
    // Where the programs are moved to at the end: their interpreter and libraries must be
    // named where they will be.
    let dest = super::tree(builds, release);
    let libs = dest.join("lib/x86_64-linux-gnu");
    for dir in ["bin", "sbin"] {
        let Ok(entries) = std::fs::read_dir(part.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if !p.is_file() || std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_symlink()) {
                continue;
            }
            // Programs only (those with an interpreter), not scripts.
            if run(
                "patchelf",
                &["--print-interpreter".into(), p.display().to_string()],
                None,
                APT_TIMEOUT,
            )
            .is_err()
            {
                continue;
            }
            run(
                "patchelf",
                &[
                    "--set-interpreter".into(),
                    libs.join("ld-linux-x86-64.so.2").display().to_string(),
                    "--force-rpath".into(),
                    "--set-rpath".into(),
                    format!("{}:{}", libs.display(), dest.join("lib").display()),
                    p.display().to_string(),
                ],
                None,
                APT_TIMEOUT,
            )?;
        }
    }
    readable_tree(part)
}

/// Everything under `dir` readable by the servers' unprivileged users.
fn readable_tree(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if meta.is_symlink() {
        return Ok(());
    }
    super::readable(dir)?;
    if meta.is_dir() {
        for e in std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .flatten()
        {
            readable_tree(&e.path())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_versions_become_upstream_versions() {
        assert_eq!(upstream("1:11.8.3-1+b1").as_deref(), Some("11.8.3"));
        assert_eq!(upstream("9.7.4-2").as_deref(), Some("9.7.4"));
        assert_eq!(upstream("8.4.6-0+deb13u1").as_deref(), Some("8.4.6"));
        assert_eq!(upstream("1:10.11.14~rc1-1").as_deref(), Some("10.11.14"));
        assert_eq!(upstream("garbage"), None);
        assert_eq!(upstream("1:../x-1"), None);
    }
}
