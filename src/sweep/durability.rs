//! Before a sweep of several server targets starts: what each does per commit to keep a
//! transaction (server::durability), read from the running server with each configuration,
//! and a warning for every way in which they differ.

use std::collections::BTreeMap;

use super::run::SweepRun;
use crate::db::Dialect;
use crate::error::Error;
use crate::plan::sweep_plan::{Cell, SweepTarget, TargetSpec};
use crate::server::ManagedServer;
use crate::server::durability::{differences, profile};

impl SweepRun<'_> {
    /// The warnings, each said as it is found: a line per aspect in which the server targets
    /// of a configuration differ. Nothing for fewer than two server targets.
    pub(super) fn compare_durability(&self) -> Vec<String> {
        let sweep = self.sweep;
        let servers: Vec<&SweepTarget> = sweep
            .targets
            .iter()
            .filter(|t| matches!(t.spec.dialect(), Some(Dialect::Postgres | Dialect::Mysql)))
            .collect();
        if servers.len() < 2 {
            return Vec::new();
        }
        let mut warnings = Vec::new();
        for config in &sweep.configs {
            let mut profiles = Vec::new();
            for target in &servers {
                if crate::interrupt::interrupted() {
                    return warnings;
                }
                let cell = Cell {
                    target,
                    config,
                    clients: sweep.file.clients.first().copied().unwrap_or(1),
                    repeat: 1,
                    repeats: 1,
                };
                self.progress
                    .bar
                    .set_message(format!("{}: reading its durability settings", target.name));
                match self.settings_of(&cell) {
                    Ok((kind, settings)) => {
                        if let Some(p) = profile(kind, &settings) {
                            profiles.push((target.name.clone(), p));
                        }
                    }
                    Err(e) => {
                        let line = format!(
                            "warning: {}: its durability is not compared with the other targets': {e}",
                            target.name
                        );
                        self.progress.say(&line);
                        warnings.push(line);
                    }
                }
            }
            let of = if sweep.configs.len() > 1 {
                format!(" (configuration {})", config.name)
            } else {
                String::new()
            };
            for d in differences(&profiles) {
                let line = format!(
                    "warning: the targets do different work per commit{of}: {d}; their figures \
                     compare servers that keep a transaction differently (set them alike with \
                     --server-set, or say so where they are shown)"
                );
                self.progress.say(&line);
                warnings.push(line);
            }
        }
        warnings
    }

    /// The settings of `cell`'s server: a managed one started for the reading (and stopped),
    /// or the running one of a URL. With its dialect's name.
    fn settings_of(&self, cell: &Cell) -> Result<(&'static str, BTreeMap<String, String>), Error> {
        let (url, _server) = match &cell.target.spec {
            TargetSpec::Managed(kind) => {
                let spec = crate::server::ServerSpec {
                    keep: false,
                    ..self.server_spec(*kind, cell)
                };
                let server = ManagedServer::start(&spec)?;
                (server.url.clone(), Some(server))
            }
            TargetSpec::Url(u) => (u.clone(), None),
            TargetSpec::Sqlite => unreachable!("server targets only"),
        };
        let options = crate::db::OpenOptions::bounded(self.sweep.timeouts);
        let target = crate::db::open(&url, options)?;
        let mut conn = target
            .connect()
            .map_err(|e| Error::db(target.display_url(), e))?;
        let settings = conn
            .server_settings()
            .map_err(|e| Error::db(target.display_url(), e))?;
        Ok((target.kind(), settings))
    }
}
