//! The plan's configurations: settings, memory limits, TLS and profiles, each checked against
//! every target it runs on.

use toml::Spanned;

use super::super::cells::{Config, Source, SweepTarget, TargetSpec};
use super::super::file::ConfigDef;
use super::super::options::{parse_size, settings_of};
use super::{MAX_CELL_PART, check_name_length, is_label, sqlite_url};
use crate::db::Dialect;
use crate::error::Error;

/// Every configuration of the plan; `default` (no settings) when it names none.
pub(super) fn configs(
    src: &Source,
    defs: &std::collections::BTreeMap<String, Spanned<ConfigDef>>,
    targets: &[SweepTarget],
) -> Result<Vec<Config>, Error> {
    let mut configs = Vec::new();
    for (name, c) in defs {
        configs.push(config(src, name, c, targets)?);
    }
    if configs.is_empty() {
        configs.push(Config {
            name: "default".into(),
            settings: Vec::new(),
            drop_caches: false,
            memory_limit: None,
            tls: false,
            profile: false,
        });
    }
    Ok(configs)
}

fn config(
    src: &Source,
    name: &str,
    c: &Spanned<ConfigDef>,
    targets: &[SweepTarget],
) -> Result<Config, Error> {
    let span = c.span();
    let def = c.get_ref();
    if !is_label(name) {
        return Err(src.error(
            span,
            format!("configuration name {name:?}: use letters, digits, - and _ only"),
        ));
    }
    check_name_length(src, &span, "configuration", name, MAX_CELL_PART)?;
    let settings = settings_of(src, &span, &format!("configs.{name}"), &def.settings)?;
    let memory_limit = match &def.memory_limit {
        None => None,
        Some(m) => Some(parse_size(m).filter(|b| *b >= 16 << 20).ok_or_else(|| {
            src.error(
                span.clone(),
                format!(
                    "configs.{name}: memory_limit {m:?}: use a size of 16M or more, like 512M or 2G"
                ),
            )
        })?),
    };
    for t in targets {
        fits_target(src, c.span(), name, def, &settings, memory_limit, t)?;
    }
    Ok(Config {
        name: name.to_string(),
        settings,
        drop_caches: def.drop_caches,
        memory_limit,
        tls: def.tls,
        profile: def.profile,
    })
}

/// Whether configuration `name` can run on target `t`.
fn fits_target(
    src: &Source,
    span: std::ops::Range<usize>,
    name: &str,
    def: &ConfigDef,
    settings: &[(String, String)],
    memory_limit: Option<u64>,
    t: &SweepTarget,
) -> Result<(), Error> {
    let managed_only = !settings.is_empty() || memory_limit.is_some();
    if def.tls && !matches!(t.spec, TargetSpec::Managed(_)) {
        return Err(src.error(
            span.clone(),
            format!(
                "configs.{name}: tls = true needs a managed server (server = \"...\"), not {}",
                t.name
            ),
        ));
    }
    if def.tls && t.socket {
        return Err(src.error(
            span.clone(),
            format!(
                "configs.{name}: tls = true and target {}'s socket = true do not go together",
                t.name
            ),
        ));
    }
    let sqlite = match &t.spec {
        TargetSpec::Sqlite => Some("sqlite://check.db"),
        TargetSpec::Url(u) if t.spec.dialect() == Some(Dialect::Sqlite) => Some(u.as_str()),
        _ => None,
    };
    if let (Some(url), false) = (sqlite, settings.is_empty()) {
        // On SQLite the settings are PRAGMAs on the URL.
        crate::db::check_url(&sqlite_url(url, settings))
            .map_err(|e| src.error(span.clone(), format!("configs.{name}: {e}")))?;
    }
    // A setting the target's server no longer has, with what replaced it, before
    // any cell starts (MySQL 8+ has no query cache, no innodb_log_file_size since 9).
    let version = t.build.as_ref().map(|b| b.version.as_str());
    if let TargetSpec::Managed(kind) = &t.spec
        && let Some((setting, why)) = settings
            .iter()
            .find_map(|(k, _)| crate::server::effective::removed(*kind, version, k).map(|r| (k, r)))
    {
        return Err(src.error(
            span.clone(),
            format!("configs.{name}: {setting} on target {}: {why}", t.name),
        ));
    }
    if let TargetSpec::Url(_) = &t.spec {
        let sqlite = t.spec.dialect() == Some(Dialect::Sqlite);
        if memory_limit.is_some() || (managed_only && !sqlite) {
            return Err(src.error(
                span.clone(),
                format!(
                    "configs.{name}: settings and memory_limit need a managed server (server = \"...\"), not the running database {}",
                    t.name
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{ONE_STEP, refused};

    #[test]
    fn a_configuration_fits_every_target_it_runs_on() {
        let url = "[[targets]]\nurl = \"postgres://u@h/db\"\n";
        let e = refused(&format!(
            "{url}[configs.big]\nsettings = {{ shared_buffers = \"1GB\" }}\n{ONE_STEP}"
        ));
        assert!(
            e.starts_with("p.toml:3:") && e.contains("managed server"),
            "{e}"
        );
        let e = refused(&format!("{url}[configs.t]\ntls = true\n{ONE_STEP}"));
        assert!(
            e.contains("configs.t: tls = true needs a managed server"),
            "{e}"
        );
        let e = refused(&format!("[configs.m]\nmemory_limit = \"1M\"\n{ONE_STEP}"));
        assert!(e.contains("16M or more"), "{e}");
    }
}
