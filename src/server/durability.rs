//! What a server does per commit to keep a transaction, read from its settings: whether the log
//! is synced at commit, a binary log and its sync, torn-page protection (doublewrite, full-page
//! writes), page checksums and the character set. Two targets that differ in one of these do
//! different work per commit: a comparison between them says so before it starts and in its
//! report, rather than show one server "faster" for keeping less.

use std::collections::BTreeMap;

/// PostgreSQL's settings read for this, whatever their source (the results' settings list
/// only the non-default ones otherwise).
pub const POSTGRES_SETTINGS: &[&str] = &[
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "data_checksums",
    "server_encoding",
];

/// One aspect of a server's durability: `key` is compared between targets, `text` says it.
#[derive(Clone, Debug, PartialEq)]
pub struct Aspect {
    pub name: &'static str,
    pub key: String,
    pub text: String,
}

fn aspect(name: &'static str, key: &str, text: String) -> Aspect {
    Aspect {
        name,
        key: key.into(),
        text,
    }
}

/// The aspects that the settings of a server of dialect `kind` ("postgres", "mysql") show;
/// one it does not show is left out (an old results file, a setting not read). None for
/// other dialects.
pub fn profile(kind: &str, settings: &BTreeMap<String, String>) -> Option<Vec<Aspect>> {
    let get = |n: &str| settings.get(n).map(|v| v.trim().to_ascii_lowercase());
    match kind {
        "postgres" => Some(postgres_profile(&get)),
        "mysql" => Some(mysql_profile(&get)),
        _ => None,
    }
}

/// PostgreSQL's aspects, from its settings (`get`: a setting's value, lower case).
fn postgres_profile(get: &dyn Fn(&str) -> Option<String>) -> Vec<Aspect> {
    let mut out = Vec::new();
    let fsync = get("fsync");
    let sync = get("synchronous_commit");
    if fsync.as_deref() == Some("off") {
        out.push(aspect(
            "log synced at commit",
            "never",
            "never: fsync=off".into(),
        ));
    } else if let Some(s) = sync {
        out.push(if s == "off" {
            aspect(
                "log synced at commit",
                "no",
                "no: written in the background (synchronous_commit=off)".into(),
            )
        } else {
            aspect(
                "log synced at commit",
                "yes",
                format!("yes (synchronous_commit={s})"),
            )
        });
    }
    if fsync.is_some() {
        out.push(aspect(
            "binary log",
            "off",
            "none (PostgreSQL has none)".into(),
        ));
    }
    if let Some(v) = get("full_page_writes") {
        out.push(aspect(
            "torn-page protection",
            if v == "on" { "on" } else { "off" },
            format!("{v} (full_page_writes)"),
        ));
    }
    if let Some(v) = get("data_checksums") {
        out.push(aspect(
            "page checksums",
            if v == "on" { "on" } else { "off" },
            format!("{v} (data_checksums)"),
        ));
    }
    if let Some(v) = get("server_encoding") {
        out.push(aspect(
            "character set",
            &charset(&v),
            format!("{v} (server_encoding)"),
        ));
    }
    out
}

/// MySQL's and MariaDB's aspects, from their settings.
fn mysql_profile(get: &dyn Fn(&str) -> Option<String>) -> Vec<Aspect> {
    let mut out = Vec::new();
    if let Some(v) = get("innodb_flush_log_at_trx_commit") {
        out.push(match v.as_str() {
            "1" => aspect(
                "log synced at commit",
                "yes",
                "yes (innodb_flush_log_at_trx_commit=1)".into(),
            ),
            "2" => aspect(
                "log synced at commit",
                "no",
                "no: written at commit, synced each second (innodb_flush_log_at_trx_commit=2)"
                    .into(),
            ),
            _ => aspect(
                "log synced at commit",
                "no",
                format!("no: written and synced each second (innodb_flush_log_at_trx_commit={v})"),
            ),
        });
    }
    if let Some(v) = get("log_bin") {
        out.push(if v == "off" || v == "0" {
            aspect("binary log", "off", "off (log_bin=OFF)".into())
        } else {
            match get("sync_binlog").as_deref() {
                Some("1") => aspect(
                    "binary log",
                    "on, synced at every commit",
                    "on, synced at every commit (sync_binlog=1)".into(),
                ),
                Some("0") => aspect(
                    "binary log",
                    "on, not synced",
                    "on, synced when the OS writes it (sync_binlog=0)".into(),
                ),
                Some(n) => aspect(
                    "binary log",
                    &format!("on, synced every {n} commits"),
                    format!("on, synced every {n} commits (sync_binlog={n})"),
                ),
                None => aspect("binary log", "on", "on (log_bin=ON)".into()),
            }
        });
    }
    if let Some(v) = get("innodb_doublewrite") {
        let on = !(v == "off" || v == "0" || v == "detect_only");
        out.push(aspect(
            "torn-page protection",
            if on { "on" } else { "off" },
            format!("{v} (innodb_doublewrite)"),
        ));
    }
    if let Some(v) = get("innodb_checksum_algorithm") {
        let on = !v.ends_with("none");
        out.push(aspect(
            "page checksums",
            if on { "on" } else { "off" },
            format!("{v} (innodb_checksum_algorithm)"),
        ));
    }
    if let Some(v) = get("character_set_server") {
        out.push(aspect(
            "character set",
            &charset(&v),
            format!("{v} (character_set_server)"),
        ));
    }
    out
}

/// A character set's name, the same for both families where it is the same encoding.
fn charset(v: &str) -> String {
    match v {
        "utf8" | "utf-8" | "utf8mb4" => "utf8".into(),
        "utf8mb3" => "utf8mb3".into(),
        "latin1" | "iso_8859_1" => "latin1".into(),
        other => other.into(),
    }
}

/// Where targets (named, with their profiles) differ: one line per aspect, naming each
/// target's value. Targets that do not show an aspect are left out of its comparison.
pub fn differences(targets: &[(String, Vec<Aspect>)]) -> Vec<String> {
    let mut names: Vec<&'static str> = Vec::new();
    for (_, p) in targets {
        for a in p {
            if !names.contains(&a.name) {
                names.push(a.name);
            }
        }
    }
    let mut out = Vec::new();
    for name in names {
        let seen: Vec<(&str, &Aspect)> = targets
            .iter()
            .filter_map(|(t, p)| p.iter().find(|a| a.name == name).map(|a| (t.as_str(), a)))
            .collect();
        if seen.iter().all(|(_, a)| a.key == seen[0].1.key) {
            continue;
        }
        let each: Vec<String> = seen
            .iter()
            .map(|(t, a)| format!("{t} {}", a.text))
            .collect();
        out.push(format!("{name}: {}", each.join("; ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_binary_log_synced_at_commit_on_one_side_is_a_difference() {
        let maria = map(&[
            ("log_bin", "OFF"),
            ("sync_binlog", "0"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_doublewrite", "ON"),
            ("character_set_server", "utf8mb4"),
        ]);
        let mysql = map(&[
            ("log_bin", "ON"),
            ("sync_binlog", "1"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_doublewrite", "ON"),
            ("character_set_server", "utf8mb4"),
        ]);
        let d = differences(&[
            ("mariadb".into(), profile("mysql", &maria).unwrap()),
            ("mysql".into(), profile("mysql", &mysql).unwrap()),
        ]);
        assert_eq!(
            d,
            [
                "binary log: mariadb off (log_bin=OFF); mysql on, synced at every commit (sync_binlog=1)"
            ]
        );
    }

    #[test]
    fn the_same_durability_in_both_families_is_no_difference() {
        let pg = map(&[
            ("fsync", "on"),
            ("synchronous_commit", "on"),
            ("full_page_writes", "on"),
            ("server_encoding", "UTF8"),
        ]);
        let my = map(&[
            ("log_bin", "OFF"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("innodb_doublewrite", "ON"),
            ("character_set_server", "utf8mb4"),
        ]);
        let d = differences(&[
            ("pg".into(), profile("postgres", &pg).unwrap()),
            ("my".into(), profile("mysql", &my).unwrap()),
        ]);
        assert!(d.is_empty(), "{d:?}");
        let lazy = map(&[("fsync", "on"), ("synchronous_commit", "off")]);
        let d = differences(&[
            ("pg".into(), profile("postgres", &pg).unwrap()),
            ("lazy".into(), profile("postgres", &lazy).unwrap()),
        ]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].starts_with("log synced at commit: pg yes"), "{d:?}");
    }
}
