//! What a managed server made of the settings it was asked for: each requested setting read
//! back from the running server (pg_settings, SHOW GLOBAL VARIABLES), compared with units
//! normalised, and the server log's warnings about them from its start. A server that accepts
//! an option and ignores it (MariaDB 10.11's `innodb_buffer_pool_instances`) must not be
//! recorded as configured by it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::kind::ServerKind;
use crate::results::diagnosis::Effective;

/// The unit of a number, to compare `256MB` with `32768` pages of `8kB`.
#[derive(Clone, Copy, PartialEq)]
enum Dim {
    Bytes,
    Millis,
}

/// A PostgreSQL unit (`kB`, `8kB`, `MB`, `ms`, `s`, `min`...) as a multiple of bytes or
/// milliseconds; PostgreSQL's units are case-sensitive and memory units are 1024-based.
fn pg_unit(unit: &str) -> Option<(Dim, f64)> {
    let digits = unit.chars().take_while(|c| c.is_ascii_digit()).count();
    let factor: f64 = if digits == 0 {
        1.0
    } else {
        unit[..digits].parse().ok()?
    };
    let (dim, scale) = match &unit[digits..] {
        "B" => (Dim::Bytes, 1.0),
        "kB" => (Dim::Bytes, 1024.0),
        "MB" => (Dim::Bytes, 1024.0 * 1024.0),
        "GB" => (Dim::Bytes, 1024.0 * 1024.0 * 1024.0),
        "TB" => (Dim::Bytes, 1024.0_f64.powi(4)),
        "us" => (Dim::Millis, 0.001),
        "ms" => (Dim::Millis, 1.0),
        "s" => (Dim::Millis, 1000.0),
        "min" => (Dim::Millis, 60_000.0),
        "h" => (Dim::Millis, 3_600_000.0),
        "d" => (Dim::Millis, 86_400_000.0),
        _ => return None,
    };
    Some((dim, factor * scale))
}

/// `value` (a number with an optional PostgreSQL unit) in bytes or milliseconds, a bare number
/// taking the setting's own `unit`.
fn pg_quantity(value: &str, unit: &str) -> Option<(Dim, f64)> {
    let v = value.trim();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(v.len());
    let number: f64 = v[..split].trim().parse().ok()?;
    let u = v[split..].trim();
    let (dim, scale) = pg_unit(if u.is_empty() { unit } else { u })?;
    Some((dim, number * scale))
}

/// A MySQL option value with its `K`/`M`/`G`/`T` suffix (1024-based, any case) as a number.
fn mysql_number(value: &str) -> Option<f64> {
    let v = value.trim();
    let (digits, scale) = match v.chars().last()?.to_ascii_uppercase() {
        'K' => (&v[..v.len() - 1], 1024.0),
        'M' => (&v[..v.len() - 1], 1024.0 * 1024.0),
        'G' => (&v[..v.len() - 1], 1024.0_f64.powi(3)),
        'T' => (&v[..v.len() - 1], 1024.0_f64.powi(4)),
        'P' => (&v[..v.len() - 1], 1024.0_f64.powi(5)),
        _ => (v, 1.0),
    };
    digits.trim().parse::<f64>().ok().map(|n| n * scale)
}

/// on/off in any of the spellings servers accept.
fn boolean(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

fn unquote(value: &str) -> &str {
    let v = value.trim();
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Whether PostgreSQL's `setting` (in `unit`, of `vartype`) is what `requested` asked for.
pub fn pg_same(requested: &str, setting: &str, unit: &str, vartype: &str) -> bool {
    let r = unquote(requested);
    match vartype {
        "bool" => boolean(r).is_some() && boolean(r) == boolean(setting),
        "integer" | "real" => {
            if unit.is_empty() {
                match (r.parse::<f64>(), setting.parse::<f64>()) {
                    (Ok(a), Ok(b)) => close(a, b),
                    _ => false,
                }
            } else {
                match (pg_quantity(r, unit), pg_quantity(setting, unit)) {
                    (Some((da, a)), Some((db, b))) => da == db && close(a, b),
                    _ => false,
                }
            }
        }
        // Enums such as synchronous_commit take on/off in any spelling too.
        _ => {
            r.eq_ignore_ascii_case(setting)
                || (boolean(r).is_some() && boolean(r) == boolean(setting))
        }
    }
}

/// Whether MySQL/MariaDB's variable `value` is what `requested` asked for.
pub fn mysql_same(requested: &str, value: &str) -> bool {
    let r = unquote(requested);
    if r.eq_ignore_ascii_case(value) {
        return true;
    }
    if let (Some(a), Some(b)) = (boolean(r), boolean(value)) {
        return a == b;
    }
    match (mysql_number(r), value.trim().parse::<f64>()) {
        (Some(a), Ok(b)) => close(a, b),
        _ => false,
    }
}

/// The name of a MySQL option as the server's variable: dashes as underscores, without the
/// `loose-` prefix that only tells the server not to fail on an unknown option.
pub fn mysql_variable(option: &str) -> String {
    let lower = option.to_ascii_lowercase().replace('-', "_");
    lower
        .strip_prefix("loose_")
        .map(str::to_string)
        .unwrap_or(lower)
}

/// Start-up options that are no variable of their own but show in one: `skip_log_bin` and
/// `disable_log_bin` turn the binary log off, which `log_bin` shows. The variable to read back
/// and the figure the server should show there for `requested`.
pub fn mysql_shown_in(variable: &str, requested: &str) -> Option<(&'static str, &'static str)> {
    match variable {
        "skip_log_bin" | "disable_log_bin" => {
            // A bare option (`skip-log-bin` with no value) asks for it, as does ON.
            let on = boolean(unquote(requested)).unwrap_or(true);
            Some(("log_bin", if on { "OFF" } else { "ON" }))
        }
        _ => None,
    }
}

/// One line a person reads: which setting, what was asked, what the server has.
pub fn describe(name: &str, e: &Effective) -> String {
    match &e.effective {
        Some(v) => format!(
            "setting {name} = {} was requested, the server has {v}",
            e.requested
        ),
        None => format!(
            "setting {name} = {} was requested, the server has no such variable (ignored or a start-up option only)",
            e.requested
        ),
    }
}

/// What replaced a setting that a server of `kind` no longer has, for the refusal's message.
pub fn replacement(kind: ServerKind, name: &str) -> Option<&'static str> {
    let name = mysql_variable(name);
    match (kind, name.as_str()) {
        (ServerKind::Mysql, "innodb_log_file_size" | "innodb_log_files_in_group") => Some(
            "MySQL 8.0.30 and later size the redo log with innodb_redo_log_capacity: set that \
             to the total, innodb_log_file_size x innodb_log_files_in_group",
        ),
        (ServerKind::Mysql, n) if n.starts_with("query_cache") => {
            Some("MySQL 8.0 removed the query cache; MariaDB still has it")
        }
        (ServerKind::Mysql, "innodb_file_format" | "innodb_large_prefix") => {
            Some("MySQL 8.0 removed it: Barracuda and large prefixes are always on")
        }
        _ => None,
    }
}

/// A setting that every build of `kind` from `version` on lacks (None: the build is not
/// known yet, as for the system's), with what replaced it: for refusing a plan before it
/// starts anything.
pub fn removed(kind: ServerKind, version: Option<&str>, name: &str) -> Option<&'static str> {
    let major = version
        .and_then(|v| v.split('.').next()?.parse::<u32>().ok())
        .unwrap_or(0);
    let gone = match (kind, mysql_variable(name).as_str()) {
        (ServerKind::Mysql, n) if n.starts_with("query_cache") => major >= 8,
        (ServerKind::Mysql, "innodb_log_file_size" | "innodb_log_files_in_group") => major >= 9,
        _ => false,
    };
    gone.then(|| replacement(kind, name)).flatten()
}

/// Where the server's log ends now, so that [`log_warnings`] reads only what a start writes.
pub fn log_offset(log: &Path) -> u64 {
    std::fs::metadata(log).map_or(0, |m| m.len())
}

/// The server log's warnings and errors since `from` that name one of `names` (as written, or
/// with dashes for underscores and back): the server's own word on an option it ignored.
pub fn log_warnings(log: &Path, from: u64, names: &[&str]) -> Vec<String> {
    naming(log, from, names)
        .into_iter()
        .filter(|line| {
            let l = line.to_ascii_lowercase();
            // MariaDB's `[Warning]`/`[ERROR]`, PostgreSQL's `WARNING:`/`ERROR:`/`FATAL:`.
            ["[warning]", "[error]", "warning:", "error:", "fatal:"]
                .iter()
                .any(|level| l.contains(level))
        })
        .collect()
}

/// The settings among `settings` that the server log since `from` names, with the first line
/// that names each: what a server that refused to start said about them.
pub fn refused(log: &Path, from: u64, settings: &[(String, String)]) -> Vec<(String, String)> {
    settings
        .iter()
        .filter_map(|(name, _)| {
            let line = naming(log, from, &[name.as_str()]).into_iter().next()?;
            Some((name.clone(), line))
        })
        .collect()
}

/// The server log's lines since `from` that name one of `names`, at most 300 characters each.
fn naming(log: &Path, from: u64, names: &[&str]) -> Vec<String> {
    const MAX: u64 = 1 << 20;
    let mut text = String::new();
    if let Ok(mut f) = File::open(log) {
        let _ = f.seek(SeekFrom::Start(from));
        let _ = f.take(MAX).read_to_string(&mut text);
    }
    let spellings: Vec<String> = names
        .iter()
        .flat_map(|n| {
            let n = n.to_ascii_lowercase();
            [n.replace('-', "_"), n.replace('_', "-")]
        })
        .collect();
    text.lines()
        .filter(|line| {
            let l = line.to_ascii_lowercase();
            spellings.iter().any(|s| mentions(&l, s))
        })
        .map(|l| l.trim().chars().take(300).collect())
        .collect()
}

/// Whether `line` names `word` as a whole word (not `innodb_log_file_size` for `log_file`).
fn mentions(line: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// Checks every requested setting with `read_back` (the server's value, None when it has no
/// such variable) and `same`, and adds the log's warnings.
pub fn check(
    settings: &[(String, String)],
    mut read_back: impl FnMut(&str, &str) -> Result<Option<(String, bool)>, String>,
) -> Result<BTreeMap<String, Effective>, String> {
    let mut out = BTreeMap::new();
    for (name, requested) in settings {
        let (effective, applied) = match read_back(name, requested)? {
            Some((v, same)) => (Some(v), same),
            None => (None, false),
        };
        out.insert(
            name.clone(),
            Effective {
                requested: requested.clone(),
                effective,
                applied,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_units_are_normalised() {
        assert!(pg_same("256MB", "32768", "8kB", "integer"));
        assert!(pg_same("'256MB'", "32768", "8kB", "integer"));
        assert!(!pg_same("2GB", "32768", "8kB", "integer"));
        assert!(pg_same("1GB", "1048576", "kB", "integer"));
        assert!(pg_same("5min", "300", "s", "integer"));
        assert!(pg_same("300", "300", "s", "integer"));
        assert!(!pg_same("200ms", "200", "s", "integer"));
        assert!(pg_same("off", "off", "", "bool"));
        assert!(pg_same("false", "off", "", "bool"));
        assert!(!pg_same("on", "off", "", "bool"));
        assert!(pg_same("0.9", "0.9", "", "real"));
        assert!(pg_same("Minimal", "minimal", "", "enum"));
        assert!(pg_same("false", "off", "", "enum"));
        assert!(!pg_same("local", "off", "", "enum"));
    }

    #[test]
    fn mysql_suffixes_and_booleans_are_normalised() {
        assert!(mysql_same("1G", "1073741824"));
        assert!(mysql_same("64m", "67108864"));
        assert!(!mysql_same("100M", "134217728"));
        assert!(mysql_same("1", "ON"));
        assert!(mysql_same("off", "OFF"));
        assert!(mysql_same("O_DIRECT", "O_DIRECT"));
        assert!(mysql_same("2", "2"));
        assert_eq!(
            mysql_variable("loose-innodb-buffer-pool-instances"),
            "innodb_buffer_pool_instances"
        );
    }

    #[test]
    fn log_lines_naming_a_setting_are_found_by_either_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        std::fs::write(
            &log,
            "old [Warning] 'innodb-buffer-pool-instances' was removed\n",
        )
        .unwrap();
        let from = log_offset(&log);
        std::fs::write(
            &log,
            "old [Warning] 'innodb-buffer-pool-instances' was removed\n\
             2026 [Warning] 'innodb-buffer-pool-instances' was removed. It does nothing now\n\
             2026 [Note] innodb_buffer_pool_instances is named in a note, no warning\n\
             2026 [Warning] innodb_log_file_size_x is another option\n",
        )
        .unwrap();
        let found = log_warnings(&log, from, &["innodb_buffer_pool_instances"]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("does nothing now"));
    }

    #[test]
    fn options_that_turn_the_binary_log_off_are_read_back_in_log_bin() {
        assert_eq!(
            mysql_shown_in("skip_log_bin", "ON"),
            Some(("log_bin", "OFF"))
        );
        assert_eq!(
            mysql_shown_in("disable_log_bin", "'1'"),
            Some(("log_bin", "OFF"))
        );
        assert_eq!(
            mysql_shown_in("disable_log_bin", "OFF"),
            Some(("log_bin", "ON"))
        );
        assert_eq!(mysql_shown_in("sync_binlog", "1"), None);
    }
}
