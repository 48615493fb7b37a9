//! Managed servers never outlive dbsweep: each server process gets the kernel's parent-death
//! signal, and each data directory dbsweep creates holds a pid file naming the dbsweep process
//! that owns it, so that the next start removes the directories of owners that died (SIGKILL,
//! a crash, the machine's OOM killer) without the chance to clean up.

use std::fs;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The file in a managed directory that names its owner: `PID STARTTIME` (the start time tells
/// a live owner from an unrelated process that reuses its pid).
pub const OWNER_FILE: &str = "dbsweep.owner";

/// The file in a managed directory kept with `--keep`: the next start leaves it alone even
/// when its owner is gone (the user removes it).
pub const KEPT_FILE: &str = "dbsweep.kept";

/// Prefix of the directories dbsweep creates for managed servers.
pub const DIR_PREFIX: &str = "dbsweep-";

/// Makes the process that `cmd` starts receive SIGKILL when dbsweep dies, however it dies.
///
/// PR_SET_PDEATHSIG follows the thread that forks: servers are started from the main thread,
/// which lives as long as dbsweep. It is set after the child's change of user (the kernel
/// clears it on a change of credentials), and a parent that died before the call is caught by
/// comparing the parent's pid.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    // SAFETY: prctl, getppid and _exit are async-signal-safe; nothing is allocated.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// The start time of process `pid` in clock ticks since boot (field 22 of /proc/PID/stat).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Writes the owner file of `dir`: this process; with `keep`, marks it kept first, so that a
/// dbsweep killed before its end does not leave it to the next start's removal either.
pub fn claim(dir: &Path, keep: bool) -> io::Result<()> {
    if keep {
        fs::write(
            dir.join(KEPT_FILE),
            "kept with --keep: dbsweep never removes this directory; remove it when done\n",
        )?;
    }
    let me = std::process::id();
    let text = format!("{me} {}\n", start_time(me).unwrap_or(0));
    fs::write(dir.join(OWNER_FILE), text)
}

/// Whether the owner named in `dir`'s owner file is gone. A directory without the file (an
/// older dbsweep's, or one being created) is not judged.
fn owner_is_dead(dir: &Path) -> bool {
    let Ok(text) = fs::read_to_string(dir.join(OWNER_FILE)) else {
        return false;
    };
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    let (Some(Ok(pid)), Some(Ok(started))) = (fields.next(), fields.next()) else {
        return false;
    };
    let Ok(pid) = u32::try_from(pid) else {
        return false;
    };
    start_time(pid) != Some(started)
}

/// Removes the managed directories in `parent` whose dbsweep died; returns them. Their servers
/// died with their owner (see [`die_with_parent`]).
pub fn remove_dead(parent: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let ours = e.file_name().to_string_lossy().starts_with(DIR_PREFIX);
        // Kept with --keep: the user's until they remove it.
        let kept = fs::symlink_metadata(path.join(KEPT_FILE)).is_ok();
        // The entry's own type: a link named like a managed directory is not followed.
        let dir = e.file_type().is_ok_and(|t| t.is_dir());
        if ours && dir && !kept && owner_is_dead(&path) && fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_of_a_live_owner_stays_and_of_a_dead_one_goes() {
        let parent = tempfile::tempdir().unwrap();
        let live = parent.path().join("dbsweep-postgres-live");
        let dead = parent.path().join("dbsweep-postgres-dead");
        let foreign = parent.path().join("dbsweep-postgres-noowner");
        let kept = parent.path().join("dbsweep-postgres-kept");
        for d in [&live, &dead, &foreign, &kept] {
            fs::create_dir(d).unwrap();
        }
        claim(&live, false).unwrap();
        claim(&kept, true).unwrap();
        // A pid that exists with another start time: its owner is gone.
        for gone in [&dead, &kept] {
            fs::write(gone.join(OWNER_FILE), format!("{} 1\n", std::process::id())).unwrap();
        }
        assert_eq!(remove_dead(parent.path()), vec![dead.clone()]);
        assert!(live.exists() && foreign.exists() && kept.exists() && !dead.exists());
    }
}
