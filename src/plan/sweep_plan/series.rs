//! A target whose managed server names a series of versions (`server = "postgres:15.*"`,
//! `--server postgres:15.2..15.8`) becomes a target per version in the series, oldest first:
//! the builds here and the releases that can be fetched on demand (`crate::server::fetch`),
//! which the sweep fetches before it starts. Without the registry (no network), the builds
//! here make the series, and a line says so.

use toml::Spanned;

use super::file::{PlanFile, TargetDef};
use crate::error::Error;
use crate::server::builds::{self, ServerChoice};
use crate::server::fetch;

/// Replaces each series target with its versions' targets.
pub(crate) fn expand(file: &mut PlanFile) -> Result<(), Error> {
    if !file.targets.iter().any(|t| {
        t.get_ref()
            .server
            .as_ref()
            .is_some_and(|c| c.series().is_some())
    }) {
        return Ok(());
    }
    let mut out = Vec::new();
    for t in std::mem::take(&mut file.targets) {
        let span = t.span();
        let def = t.into_inner();
        let Some((choice, pattern)) = def.server.clone().and_then(|c| c.series().map(|p| (c, p)))
        else {
            out.push(Spanned::new(span, def));
            continue;
        };
        if def.name.is_some() || def.basedir.is_some() {
            return Err(Error::Usage(format!(
                "server = \"{choice}\": a series makes a target of each version (named after it); leave out name and basedir"
            )));
        }
        for version in versions(&choice, &pattern)? {
            out.push(Spanned::new(
                span.clone(),
                TargetDef {
                    server: Some(ServerChoice {
                        kind: choice.kind,
                        version: Some(version),
                    }),
                    ..def.clone()
                },
            ));
        }
    }
    file.targets = out;
    Ok(())
}

/// The versions of `pattern`: the builds here and the releases the registry has.
fn versions(choice: &ServerChoice, pattern: &builds::Pattern) -> Result<Vec<String>, Error> {
    let here: Vec<String> = builds::find_all()
        .into_iter()
        .filter(|b| b.kind == choice.kind)
        .map(|b| b.version)
        .collect();
    let fetchable: Vec<String> = match fetch::cached_available(choice.kind) {
        Ok(r) => r.into_iter().map(|r| r.version).collect(),
        Err(_) if crate::interrupt::interrupted() => {
            return Err(Error::Run("interrupted".into()));
        }
        Err(why) => {
            eprintln!("{choice}: {why}; the series is the builds here");
            Vec::new()
        }
    };
    let all: Vec<&str> = here.iter().chain(&fetchable).map(String::as_str).collect();
    let versions: Vec<String> = builds::in_pattern(pattern, &all)
        .into_iter()
        .map(String::from)
        .collect();
    if versions.is_empty() {
        return Err(Error::Usage(format!(
            "--server {choice}: no version of the series is here or can be fetched (`dbsweep servers --available {}` lists what can)",
            builds::kind_name(choice.kind)
        )));
    }
    Ok(versions)
}
