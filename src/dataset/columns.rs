//! A report's columns beside each other: the version each column runs, and which column is
//! the base that the others are relative to.

use std::collections::BTreeSet;

use super::model::{Dataset, short_version};
use super::tables::Slice;
use crate::error::Error;

/// Picks the base column: `--base` by its label, else the first.
pub fn base_index(ds: &Dataset, slice: &Slice, base: Option<&str>) -> Result<usize, Error> {
    match base {
        None => Ok(oldest_version(ds, slice).unwrap_or(0)),
        Some(given) => {
            // `--server postgres:13` named its target `postgres-13` (and 11.4 `11_4`): the
            // shorthand picks that column too.
            let spelled = given.replacen(':', "-", 1).replace('.', "_");
            let name = if slice.columns.iter().any(|(l, _)| l == given)
                || !slice
                    .columns
                    .iter()
                    .any(|(l, _)| l == &spelled || l.split('/').any(|p| p == spelled))
            {
                given
            } else {
                spelled.as_str()
            };
            let exact = slice.columns.iter().position(|(l, _)| l == name);
            // Or the one column that has `name` as a part of its label (a source or config).
            let parts: Vec<usize> = (0..slice.columns.len())
                .filter(|&i| slice.columns[i].0.split('/').any(|p| p == name))
                .collect();
            exact.or((parts.len() == 1).then(|| parts[0]))
        }
        .ok_or_else(|| {
            let names: Vec<&str> = slice.columns.iter().map(|(l, _)| l.as_str()).collect();
            Error::Usage(format!(
                "--base {}: no such column; the columns are {}",
                base.unwrap_or_default(),
                names.join(", ")
            ))
        }),
    }
}

/// The server version of each column (`13.23`, `11.4.5`), from its results; empty where the
/// columns do not differ in version.
pub fn column_versions(ds: &Dataset, slice: &Slice) -> Vec<String> {
    let versions: Vec<String> = slice
        .columns
        .iter()
        .map(|(_, places)| {
            let mut vs: Vec<String> = ds
                .at(places)
                .filter_map(|e| e.results.as_ref())
                .filter_map(|r| short_version(&r.target.version))
                .collect();
            vs.sort();
            vs.dedup();
            vs.join(",")
        })
        .collect();
    let distinct: BTreeSet<&String> = versions.iter().filter(|v| !v.is_empty()).collect();
    if distinct.len() > 1 {
        versions
    } else {
        Vec::new()
    }
}

/// The default base where the columns are one server kind at different versions (a version
/// study): the oldest version's column.
fn oldest_version(ds: &Dataset, slice: &Slice) -> Option<usize> {
    let versions = column_versions(ds, slice);
    if versions.is_empty() || versions.iter().any(|v| v.is_empty() || v.contains(',')) {
        return None;
    }
    // One product: MariaDB and MySQL share a protocol (and a target kind) but not their
    // version numbers, so a forks study keeps its first column as the base.
    let kinds: BTreeSet<&str> = ds
        .entries
        .iter()
        .filter_map(|e| e.results.as_ref())
        .map(|r| {
            if r.target.version.contains("MariaDB") {
                "mariadb"
            } else {
                r.target.kind.as_str()
            }
        })
        .collect();
    if kinds.len() != 1 {
        return None;
    }
    (0..versions.len()).min_by_key(|&i| crate::server::builds::version_key(&versions[i]))
}
