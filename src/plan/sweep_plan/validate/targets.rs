//! The plan's targets: a URL or a managed server each, their names, and what goes with which.

use toml::Spanned;

use super::super::cells::{Source, SweepTarget, TargetSpec};
use super::super::file::TargetDef;
use super::super::options::settings_of;
use super::{MAX_CELL_PART, check_name_length, is_label};
use crate::error::Error;
use crate::server::builds::{kind_name, resolve};

/// Every target of the plan; SQLite (a file of the sweep's own) when it names none.
pub(super) fn targets(
    src: &Source,
    defs: &[Spanned<TargetDef>],
) -> Result<Vec<SweepTarget>, Error> {
    let mut targets = Vec::new();
    for t in defs {
        let target = target(src, t, &targets)?;
        targets.push(target);
    }
    if targets.is_empty() {
        targets.push(SweepTarget {
            name: "sqlite".into(),
            spec: TargetSpec::Sqlite,
            socket: false,
            datadir_in: None,
            tls: false,
            build: None,
            fetch: None,
            settings: Vec::new(),
            metrics: None,
        });
    }
    Ok(targets)
}

/// One target, checked against those before it (`before`).
fn target(
    src: &Source,
    t: &Spanned<TargetDef>,
    before: &[SweepTarget],
) -> Result<SweepTarget, Error> {
    let span = t.span();
    let def = t.get_ref();
    let spec = match (&def.url, &def.server) {
        (Some(url), None) => {
            // The same check as --target, without opening anything.
            crate::db::check_url(url).map_err(|e| src.error(span.clone(), e))?;
            TargetSpec::Url(url.clone())
        }
        (None, Some(choice)) => TargetSpec::Managed(choice.kind),
        _ => {
            return Err(src.error(
                span,
                "a target needs exactly one of url = \"...\" or server = \"postgres|mariadb|mysql\" (with :VERSION where wanted)",
            ));
        }
    };
    let name = def
        .name
        .clone()
        .unwrap_or_else(|| match (&spec, &def.server) {
            (TargetSpec::Url(u), _) => u.split("://").next().unwrap_or("target").to_string(),
            (_, Some(choice)) => match &choice.version {
                Some(v) => format!("{}-{}", kind_name(choice.kind), v.replace('.', "_")),
                None => kind_name(choice.kind).to_string(),
            },
            _ => "sqlite".into(),
        });
    let mut fetch = None;
    let build = match &def.server {
        Some(choice) => match resolve(
            choice.kind,
            choice.version.as_deref(),
            def.basedir.as_deref(),
        ) {
            Ok(b) => b,
            // Not here, but a release that can be fetched: the sweep fetches it first.
            Err(e) => {
                let fetchable = (def.basedir.is_none() && choice.version.is_some())
                    .then(|| crate::server::fetch::cached_available(choice.kind));
                match (&choice.version, fetchable) {
                    (Some(v), Some(Ok(list))) if list.iter().any(|r| r.version == *v) => {
                        fetch = list.iter().find(|r| r.version == *v).cloned();
                        None
                    }
                    (_, Some(found)) => {
                        let why = match found {
                            Ok(_) => format!(
                                "nor is it a release that can be fetched (`dbsweep servers --available {}` lists them)",
                                kind_name(choice.kind)
                            ),
                            Err(why) => format!(
                                "and the releases that can be fetched could not be listed ({why})"
                            ),
                        };
                        return Err(src.error(span.clone(), format!("target {name}: {e}; {why}")));
                    }
                    _ => return Err(src.error(span.clone(), format!("target {name}: {e}"))),
                }
            }
        },
        None if def.basedir.is_some() => {
            return Err(src.error(
                span,
                "basedir is for a managed server (server = \"...\"): the install tree it starts",
            ));
        }
        None => None,
    };
    if !def.settings.is_empty() && !matches!(spec, TargetSpec::Managed(_)) {
        return Err(src.error(
            span,
            format!("target {name}: settings are for a managed server (server = \"...\")"),
        ));
    }
    let target_settings = settings_of(src, &span, &format!("target {name}"), &def.settings)?;
    if !is_label(&name) {
        return Err(src.error(
            span,
            format!("target name {name:?}: use letters, digits, - and _ only"),
        ));
    }
    check_name_length(src, &span, "target", &name, MAX_CELL_PART)?;
    if before.iter().any(|t| t.name == name) {
        return Err(src.error(
            span,
            format!("two targets are called {name}: give them names (name = \"...\")"),
        ));
    }
    managed_only(src, span, def, &spec)?;
    Ok(SweepTarget {
        name,
        spec,
        socket: def.socket,
        datadir_in: def.datadir_in.clone(),
        tls: def.tls,
        build,
        fetch,
        settings: target_settings,
        metrics: def.metrics.clone(),
    })
}

/// What only a managed server takes (TLS, its socket, where its data directories go) and
/// the host metrics' URL.
fn managed_only(
    src: &Source,
    span: std::ops::Range<usize>,
    def: &TargetDef,
    spec: &TargetSpec,
) -> Result<(), Error> {
    if def.tls && !matches!(spec, TargetSpec::Managed(_)) {
        return Err(src.error(
            span,
            "tls = true is for a managed server (server = \"...\"); a url says its TLS itself (sslmode=... or ssl-mode=...)",
        ));
    }
    if def.tls && def.socket {
        return Err(src.error(
            span,
            "tls = true and socket = true do not go together: a managed server's TLS is over TCP",
        ));
    }
    if def.socket && !matches!(spec, TargetSpec::Managed(_)) {
        return Err(src.error(
            span,
            "socket = true is for a managed server (server = \"...\"); a url names its own socket",
        ));
    }
    if let Some(d) = &def.datadir_in {
        if !matches!(spec, TargetSpec::Managed(_)) {
            return Err(src.error(
                span,
                "datadir_in is for a managed server (server = \"...\"): it is where its data directories are made",
            ));
        }
        if !d.is_absolute() {
            return Err(src.error(
                span,
                format!(
                    "datadir_in = {:?}: give an absolute path (the plan is saved with the sweep and may be resumed from elsewhere)",
                    d.display().to_string()
                ),
            ));
        }
        if !d.is_dir() {
            return Err(src.error(
                span,
                format!(
                    "datadir_in = {:?}: no such directory; create it on the disk to measure",
                    d.display().to_string()
                ),
            ));
        }
        if let TargetSpec::Managed(kind) = *spec {
            crate::server::check_datadir_in(kind, d).map_err(|e| {
                src.error(
                    span.clone(),
                    format!("datadir_in = {:?}: {e}", d.display().to_string()),
                )
            })?;
        }
    }
    if let Some(url) = &def.metrics {
        crate::plan::check_metrics_url(url)
            .map_err(|e| src.error(span.clone(), format!("metrics: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{ONE_STEP, refused};

    #[test]
    fn a_target_is_one_database_with_a_name_of_its_own() {
        let e = refused(&format!("[[targets]]\nname = \"a\"\n{ONE_STEP}"));
        assert!(e.contains("exactly one of url"), "{e}");
        let two = "[[targets]]\nurl = \"postgres://u@h/db\"\n";
        let e = refused(&format!("{two}{two}{ONE_STEP}"));
        assert!(
            e.starts_with("p.toml:3:") && e.contains("two targets are called postgres"),
            "{e}"
        );
        let e = refused(&format!(
            "[[targets]]\nurl = \"postgres://u@h/db\"\ntls = true\n{ONE_STEP}"
        ));
        assert!(e.contains("tls = true is for a managed server"), "{e}");
        let e = refused(&format!(
            "[[targets]]\nserver = \"postgres\"\ndatadir_in = \"rel\"\n{ONE_STEP}"
        ));
        assert!(e.contains("absolute path"), "{e}");
    }
}
