//! Finding a sysbench script as sysbench does, and telling a script's command line apart from
//! dbsweep's.

use std::path::{Path, PathBuf};

use crate::error::Error;

/// Where sysbench's own scripts live (Debian's package).
pub const SYSBENCH_DIR: &str = "/usr/share/sysbench";

/// The words of the process where a personality set them (sysbench's `argv`), with its name.
static PROCESS_ARGV: std::sync::OnceLock<(String, Vec<String>)> = std::sync::OnceLock::new();

/// Says which words the process was started with, for `sysbench.cmdline.argv`.
pub fn set_process_argv(argv0: &str, words: &[String]) {
    let _ = PROCESS_ARGV.set((argv0.to_string(), words.to_vec()));
}

/// Whether sysbench's NOTICE lines print (`--verbosity` 3 or above; dbsweep's own: yes).
static NOTICES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// sysbench's `--verbosity` (3 where no personality set it): the SQL API's ALERT lines print
/// from 1, its FATAL lines always.
static VERBOSITY: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(3);

/// Says what `--verbosity` the sysbench personality was given.
pub fn set_verbosity(level: u8) {
    VERBOSITY.store(level, std::sync::atomic::Ordering::Relaxed);
    set_notices(level >= 3);
}

pub(super) fn verbosity() -> u8 {
    VERBOSITY.load(std::sync::atomic::Ordering::Relaxed)
}

/// Says whether sysbench's NOTICE lines print.
pub fn set_notices(on: bool) {
    NOTICES.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub(super) fn notices() -> bool {
    NOTICES.load(std::sync::atomic::Ordering::Relaxed)
}

pub(super) fn process_argv() -> Option<&'static (String, Vec<String>)> {
    PROCESS_ARGV.get()
}

/// Finds script `name` as sysbench does: a file of that name; otherwise a module of that name
/// on LUA_PATH's patterns (Lua's `./?.lua` where LUA_PATH is not set), then sysbench's
/// directory.
pub fn find_script(name: &str) -> Option<PathBuf> {
    let given = Path::new(name);
    if name.contains('/') {
        return given.is_file().then(|| given.to_path_buf());
    }
    let file = if name.ends_with(".lua") {
        name.to_string()
    } else {
        format!("{name}.lua")
    };
    let mut candidates = vec![PathBuf::from(name)];
    let stem = file.trim_end_matches(".lua");
    match std::env::var("LUA_PATH") {
        Ok(path) => {
            for pattern in path.split(';').filter(|p| p.contains('?')) {
                candidates.push(PathBuf::from(pattern.replace('?', stem)));
            }
            // Lua's own default, which `;;` in LUA_PATH stands for.
            candidates.push(PathBuf::from(&file));
        }
        Err(_) => candidates.push(PathBuf::from(&file)),
    }
    candidates.push(Path::new(SYSBENCH_DIR).join(&file));
    candidates.into_iter().find(|p| p.is_file())
}

/// Whether `name` names a script rather than a built-in workload: it ends in `.lua` or holds a
/// slash, or it is no built-in workload and a script of that name exists.
pub fn is_script(name: &str) -> bool {
    if name.ends_with(".lua") || name.contains('/') {
        return true;
    }
    !crate::workload::is_builtin(name) && find_script(name).is_some()
}

/// The script of a command line, found, or exit 2.
pub fn resolve(name: &str) -> Result<PathBuf, Error> {
    // sysbench's tests written in C, not Lua: nothing of dbsweep's runs them.
    const C_TESTS: [&str; 5] = ["cpu", "memory", "fileio", "threads", "mutex"];
    if C_TESTS.contains(&name) && find_script(name).is_none() {
        return Err(Error::Usage(format!(
            "sysbench's '{name}' test is written in C inside sysbench, not a Lua script: dbsweep \
             runs sysbench's database scripts (oltp_read_write, oltp_point_select, ...) and \
             scripts of your own, not its {} tests",
            C_TESTS.join("/")
        )));
    }
    find_script(name).ok_or_else(|| {
        Error::Usage(format!(
            "script '{name}' not found (looked for it as a path, in the current directory, in LUA_PATH and in {SYSBENCH_DIR})"
        ))
    })
}

/// Where the command is among a script's arguments (after the script): sysbench takes it in
/// any position, as in `sysbench SCRIPT [options] run`. A bare word is an option's value when
/// it follows `--name` without `=`, unless it is one of sysbench's commands (`--skip-trx run`
/// is a boolean and a command).
fn command_position(rest: &[String]) -> Option<usize> {
    (0..rest.len()).find(|&i| {
        let word = &rest[i];
        if word.starts_with('-') {
            return false;
        }
        let after_option = i > 0 && rest[i - 1].starts_with("--") && !rest[i - 1].contains('=');
        !after_option || COMMANDS.contains(&word.as_str())
    })
}

/// The command line of a script run: `dbsweep COMMAND [options] SCRIPT [options]` or
/// `dbsweep lua SCRIPT [options] COMMAND [options]`. Returns None when `args` is not about a
/// script.
pub fn script_command(args: &[String]) -> Option<(String, String, Vec<String>)> {
    let without = |rest: &[String], i: usize| -> Vec<String> {
        rest.iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, a)| a.clone())
            .collect()
    };
    match args.get(1).map(String::as_str) {
        Some("lua") => {
            let script = args.get(2)?.clone();
            let rest = args.get(3..).unwrap_or_default();
            Some(match command_position(rest) {
                Some(i) => (rest[i].clone(), script, without(rest, i)),
                None => ("help".into(), script, rest.to_vec()),
            })
        }
        Some(c @ ("run" | "prepare" | "cleanup" | "help")) => {
            let rest = args.get(2..).unwrap_or_default();
            // The script comes first, or after options: the first bare word that names one,
            // a word after `--name` being that option's value unless it is a `.lua` file;
            // `help NAME` is a script's help even where a built-in workload has that name.
            let wanted = |w: &str| is_script(w) || (c == "help" && find_script(w).is_some());
            let i = if rest.first().is_some_and(|w| !w.starts_with('-')) {
                0
            } else {
                (0..rest.len()).find(|&i| {
                    let w = &rest[i];
                    let value = i > 0
                        && rest[i - 1].starts_with("--")
                        && !rest[i - 1].contains('=')
                        && !w.ends_with(".lua");
                    !w.starts_with('-') && !value
                })?
            };
            if !wanted(&rest[i]) {
                return None;
            }
            // A built-in workload named before it is the command's subject, not a script.
            let builtin_first = rest[..i].iter().any(|w| crate::workload::is_builtin(w));
            (!builtin_first).then(|| (c.to_string(), rest[i].clone(), without(rest, i)))
        }
        _ => None,
    }
}

/// sysbench's own commands: never an option's value.
pub(crate) const COMMANDS: &[&str] = &["prepare", "run", "cleanup", "help", "prewarm"];

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_command_may_come_after_the_options_as_in_sysbench() {
        let (c, s, rest) = script_command(&args("dbsweep lua x.lua --threads=2 run")).unwrap();
        assert_eq!(
            (c.as_str(), s.as_str(), rest),
            ("run", "x.lua", args("--threads=2"))
        );
        let (c, _, rest) = script_command(&args("dbsweep lua x.lua run --threads=2")).unwrap();
        assert_eq!((c.as_str(), rest), ("run", args("--threads=2")));
        // A separate value is the option's; a sysbench command after a boolean is the command.
        let (c, _, rest) =
            script_command(&args("dbsweep lua x.lua --threads 4 --skip-trx run")).unwrap();
        assert_eq!((c.as_str(), rest), ("run", args("--threads 4 --skip-trx")));
        let (c, _, _) = script_command(&args("dbsweep lua x.lua --threads=2")).unwrap();
        assert_eq!(c, "help");
        // Options before the script.
        let (c, s, rest) = script_command(&args("dbsweep run --threads=2 x.lua --time=1")).unwrap();
        assert_eq!(
            (c.as_str(), s.as_str(), rest),
            ("run", "x.lua", args("--threads=2 --time=1"))
        );
        assert!(script_command(&args("dbsweep run oltp_point_select --threads=2")).is_none());
        // A URL after --target is the option's value, not a script.
        assert!(script_command(&args("dbsweep run oltp_nope --target sqlite:///x.db")).is_none());
        assert!(script_command(&args("dbsweep run --target sqlite:///x.db oltp_nope")).is_none());
        let (_, s, _) = script_command(&args("dbsweep run --target sqlite:///x.db y.lua")).unwrap();
        assert_eq!(s, "y.lua");
    }
}
