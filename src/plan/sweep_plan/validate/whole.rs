//! A sweep plan file judged whole: the fraction and name checks, the SQLite URL a configuration's settings make.

use std::fmt::Write as _;

use super::super::cells::{Source, Sweep};
use super::super::file::PlanFile;
use crate::error::Error;

/// `detect = "2%"`: the least change between builds a series' runs must resolve, as a fraction
/// (0.1% to 50%).
pub(crate) fn detect_fraction(s: &str) -> Result<f64, String> {
    let pct: f64 = s
        .trim()
        .strip_suffix('%')
        .and_then(|n| n.trim().parse().ok())
        .filter(|p: &f64| (0.1..=50.0).contains(p))
        .ok_or_else(|| format!("{s:?}: a change in percent, from 0.1% to 50% (\"2%\")"))?;
    Ok(pct / 100.0)
}

pub(crate) fn validate(src: &Source, file: PlanFile) -> Result<Sweep, Error> {
    super::keys::plan_keys(src, &file)?;
    let targets = super::targets::targets(src, &file.targets)?;
    super::keys::client_hosts(src, &file, &targets)?;
    let configs = super::configs::configs(src, &file.configs, &targets)?;
    let mut sweep = Sweep {
        file,
        targets,
        configs,
        steps: Vec::new(),
        // The defaults until the sweep's command hands down the command line's.
        timeouts: Default::default(),
    };
    super::steps::steps(src, &mut sweep)?;
    Ok(sweep)
}

pub(crate) fn configs_have_profile(file: &PlanFile) -> bool {
    file.configs.values().any(|c| c.get_ref().profile)
}

/// A SQLite URL with `settings` added as PRAGMAs.
pub fn sqlite_url(url: &str, settings: &[(String, String)]) -> String {
    let mut out = url.to_string();
    for (i, (k, v)) in settings.iter().enumerate() {
        let sep = if i == 0 && !url.contains('?') {
            '?'
        } else {
            '&'
        };
        let _ = write!(out, "{sep}{k}={v}");
    }
    out
}

pub(crate) fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The longest step name: its record `NNN-NAME.json` and the temporary file beside it
/// (`.NNN-NAME.json.tmp-PID`) must fit a file name (255 bytes on Linux file systems).
pub(super) const MAX_STEP_NAME: usize = 200;
/// The longest target or configuration name: a cell's directory is `TARGET.CONFIG.cN[.rN]`.
pub(super) const MAX_CELL_PART: usize = 100;

/// Refuses a name too long to be part of a file name in the sweep directory, before anything
/// runs (not after a step has run in full and cannot be recorded).
pub(super) fn check_name_length(
    src: &Source,
    span: &std::ops::Range<usize>,
    what: &str,
    name: &str,
    max: usize,
) -> Result<(), Error> {
    if name.len() <= max {
        return Ok(());
    }
    Err(src.error(
        span.clone(),
        format!(
            "{what} name {}... is {} characters long: the sweep directory's file names hold \
             {max} at most; give it a shorter name",
            &name[..24],
            name.len()
        ),
    ))
}

/// A plan's first error (tests of the parts).
#[cfg(test)]
pub(super) fn refused(text: &str) -> String {
    match super::super::Sweep::parse("p.toml", text, &crate::cli::SweepOverrides::default()) {
        Err(e) if e.exit_code() == 2 => e.to_string(),
        Err(e) => panic!("not a usage error: {e}"),
        Ok(_) => panic!("accepted: {text}"),
    }
}

#[cfg(test)]
pub(super) const ONE_STEP: &str = "[[steps]]\nworkload = \"oltp_point_select\"\nclass = \"read\"\n";
