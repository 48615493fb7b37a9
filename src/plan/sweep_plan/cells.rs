//! A checked sweep: its targets, configurations and steps, and the cells (target x configuration
//! x clients x repeat) a step runs.

use std::path::PathBuf;

use super::file::{Class, PlanFile};
use crate::db::Dialect;
use crate::error::Error;
use crate::server::ServerKind;
use crate::server::builds::Build;

/// Where a cell runs.
#[derive(Clone, Debug, PartialEq)]
pub enum TargetSpec {
    /// Embedded SQLite, a fresh file per cell in the sweep directory.
    Sqlite,
    Url(String),
    Managed(ServerKind),
}

impl TargetSpec {
    /// The dialect of the database the target is; None for a URL of no known scheme.
    pub fn dialect(&self) -> Option<Dialect> {
        match self {
            TargetSpec::Sqlite => Some(Dialect::Sqlite),
            TargetSpec::Url(u) => crate::db::dialect_of(u),
            TargetSpec::Managed(kind) => Some(crate::plan::server_dialect(*kind)),
        }
    }
}

#[derive(Clone, Debug)]
pub struct SweepTarget {
    pub name: String,
    pub spec: TargetSpec,
    /// A managed server's clients connect over its Unix socket.
    pub socket: bool,
    /// Where a managed server's data directories are made (default TMPDIR).
    pub datadir_in: Option<PathBuf>,
    /// A managed server with TLS on.
    pub tls: bool,
    /// The managed server's build; None: the system's (or, with `fetch`, one to fetch).
    pub build: Option<Build>,
    /// A release not here yet that the sweep fetches before it starts.
    pub fetch: Option<crate::server::fetch::Release>,
    /// The target's own server settings (the configuration's come after them).
    pub settings: Vec<(String, String)>,
    /// The database host's node_exporter (`metrics = "..."`).
    pub metrics: Option<String>,
}

impl SweepTarget {
    /// The settings of `config` on this target: the target's, then the configuration's.
    pub fn settings_with(&self, config: &Config) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .settings
            .iter()
            .filter(|(k, _)| !config.settings.iter().any(|(c, _)| c == k))
            .cloned()
            .collect();
        out.extend(config.settings.iter().cloned());
        out
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    pub name: String,
    pub settings: Vec<(String, String)>,
    pub drop_caches: bool,
    pub memory_limit: Option<u64>,
    pub tls: bool,
    pub profile: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Pause {
    Postwrite,
    Seconds(f64),
}

#[derive(Clone, Debug)]
pub enum StepKind {
    /// Loads the tables of this workload with these options (the plan's that it takes, then
    /// the step's own).
    Load(String, super::StepOptions),
    Run {
        workload: String,
        class: Class,
        /// Its options, without the ones the sweep sets.
        options: super::StepOptions,
    },
    Pause(Pause),
}

#[derive(Clone, Debug)]
pub struct Step {
    pub name: String,
    pub kind: StepKind,
    /// A crash-recovery step: seconds into the measured part at which the server is killed.
    pub crash: Option<f64>,
    /// Left out when its workload's files are not given (`optional = true`).
    pub optional: bool,
    /// A capacity search instead of one run.
    pub search: Option<crate::plan::Search>,
}

/// One configuration of one target at one client count: a fresh server (or SQLite file) that
/// runs every step in order.
#[derive(Clone, Copy, Debug)]
pub struct Cell<'a> {
    pub target: &'a SweepTarget,
    pub config: &'a Config,
    pub clients: u32,
    /// Which run of the cell this is (1-based) of the plan's `repeats`.
    pub repeat: u32,
    pub repeats: u32,
}

impl Cell<'_> {
    /// `target.config.cN` (and `.rK` when the plan repeats cells): the cell's directory name.
    pub fn id(&self) -> String {
        let id = format!(
            "{}.{}.c{}",
            self.target.name, self.config.name, self.clients
        );
        if self.repeats > 1 {
            format!("{id}.r{}", self.repeat)
        } else {
            id
        }
    }
}

/// A validated plan, ready to run.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The plan with the overrides applied: what `plan.toml` in the sweep directory holds.
    pub file: PlanFile,
    pub targets: Vec<SweepTarget>,
    pub configs: Vec<Config>,
    pub steps: Vec<Step>,
    /// The connections' bounds (the command line's `--connect-timeout`, `--query-timeout`).
    pub timeouts: crate::db::Timeouts,
}

/// Where a plan's text came from, for error messages.
pub(crate) struct Source<'a> {
    pub(crate) name: &'a str,
    pub(crate) text: &'a str,
    /// The plan keys the command line set (`--detect` for `detect`): an error in one names
    /// the option, not a line of the plan.
    pub(crate) given: Vec<&'static str>,
}

impl Source<'_> {
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .bytes()
            .filter(|b| *b == b'\n')
            .count()
            + 1
    }

    pub(crate) fn error(&self, span: std::ops::Range<usize>, why: impl std::fmt::Display) -> Error {
        self.at_line(self.line_of(span.start), why)
    }

    /// An error at `line` of the plan.
    pub(crate) fn at_line(&self, line: usize, why: impl std::fmt::Display) -> Error {
        Error::Plan {
            file: self.name.to_string(),
            line,
            why: why.to_string(),
        }
    }

    /// The line of a top-level `key =` (or line 1 when the key is not written).
    pub(crate) fn key_error(&self, key: &str, why: impl std::fmt::Display) -> Error {
        if self.given.contains(&key) {
            return Error::Option {
                option: key.replace('_', "-"),
                why: why.to_string(),
            };
        }
        let line = self.key_line(key).map_or(1, |i| i + 1);
        self.at_line(line, format!("{key}: {why}"))
    }

    /// The index of the line of a top-level `key =`.
    fn key_line(&self, key: &str) -> Option<usize> {
        self.text.lines().position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
        })
    }

    /// An error at the line of string `value` in the array of top-level `key` (one entry per
    /// line or all on the key's line); the key's line when the value is not found as written.
    pub(crate) fn entry_error(&self, key: &str, value: &str, why: impl std::fmt::Display) -> Error {
        let from = self.key_line(key).unwrap_or(0);
        let quoted = [format!("\"{value}\""), format!("'{value}'")];
        let line = self
            .text
            .lines()
            .enumerate()
            .skip(from)
            .find(|(_, l)| quoted.iter().any(|q| l.contains(q.as_str())))
            .map_or(from, |(i, _)| i)
            + 1;
        self.at_line(line, format!("{key}: {why}"))
    }
}

/// A client host: `ssh://[user@]host[:port]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    /// `user@host` or `host`, as ssh takes it.
    pub dest: String,
    pub port: Option<u16>,
    /// The host's name in results (its `--client-id`).
    pub id: String,
}

impl Host {
    pub fn parse(s: &str) -> Result<Host, String> {
        // Shown with any password hidden (ssh takes none in its destination: keys do that).
        let shown = crate::db::redact_url(s);
        let form = "is not ssh://[user@]host[:port] (letters, digits, '.', '-', '_'; not \
                    starting with '-', which ssh would read as an option)";
        let rest = s
            .strip_prefix("ssh://")
            .ok_or_else(|| format!("'{shown}' {form}"))?;
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        if user.is_some_and(|u| u.contains(':')) {
            return Err(format!(
                "'{shown}': ssh:// takes no password; let ssh authenticate with a key or an agent"
            ));
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h,
                Some(
                    p.parse::<u16>()
                        .map_err(|_| format!("'{shown}': '{p}' is not a port"))?,
                ),
            ),
            None => (hostport, None),
        };
        let fine = |t: &str| {
            !t.is_empty()
                && !t.starts_with('-')
                && t.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        };
        if !fine(host) || user.is_some_and(|u| !fine(u)) {
            return Err(format!("'{shown}' {form}"));
        }
        let dest = match user {
            Some(u) => format!("{u}@{host}"),
            None => host.to_string(),
        };
        Ok(Host {
            dest,
            port,
            id: host.to_string(),
        })
    }
}
