//! sysbench Lua scripts, unmodified (WORKLOADS.md section 8): finding a script as sysbench
//! does, parsing its options as sysbench does, and running its commands in embedded LuaJIT
//! states over dbsweep's own targets. `api` builds the `sysbench` table of a state; `workload`
//! runs a script's `event` as a dbsweep workload, one state per client thread.

mod api;
mod workload;

use std::path::{Path, PathBuf};

use crate::error::Error;

/// Where sysbench's own scripts live (Debian's package).
pub const SYSBENCH_DIR: &str = "/usr/share/sysbench";

/// Finds script `name` as sysbench does: a path as given; otherwise `name` or `name.lua` in the
/// current directory, the directories of LUA_PATH's patterns, and sysbench's directory.
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
    let mut candidates = vec![PathBuf::from(&file), PathBuf::from(name)];
    if let Ok(path) = std::env::var("LUA_PATH") {
        for pattern in path.split(';').filter(|p| p.contains('?')) {
            let stem = file.trim_end_matches(".lua");
            candidates.push(PathBuf::from(pattern.replace('?', stem)));
        }
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
    let builtin = crate::workload::WORKLOADS.iter().any(|(n, _)| *n == name);
    !builtin && find_script(name).is_some()
}

/// The script of a command line, found, or exit 2.
pub fn resolve(name: &str) -> Result<PathBuf, Error> {
    find_script(name).ok_or_else(|| {
        Error::Usage(format!(
            "script '{name}' not found (looked for it as a path, in the current directory, in LUA_PATH and in {SYSBENCH_DIR})"
        ))
    })
}

/// The command line of a script run: `dbsweep COMMAND SCRIPT [options]` or
/// `dbsweep lua SCRIPT COMMAND [options]`. Returns None when `args` is not about a script.
pub fn script_command(args: &[String]) -> Option<(String, String, Vec<String>)> {
    match args.get(1).map(String::as_str) {
        Some("lua") => {
            let script = args.get(2)?.clone();
            let command = args.get(3).cloned().unwrap_or_else(|| "help".into());
            Some((command, script, args.get(4..).unwrap_or_default().to_vec()))
        }
        Some(c @ ("run" | "prepare" | "cleanup" | "help")) => {
            let script = args.get(2)?;
            // `help NAME` is a script's help even where a built-in workload has that name.
            let wanted = is_script(script) || (c == "help" && find_script(script).is_some());
            (!script.starts_with('-') && wanted).then(|| {
                (
                    c.to_string(),
                    script.clone(),
                    args.get(3..).unwrap_or_default().to_vec(),
                )
            })
        }
        _ => None,
    }
}

pub use api::{run_command, step_workload};
