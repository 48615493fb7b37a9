//! A sweep's `limits = true`: the machine's ceilings where each target keeps its data (and,
//! for a server given by URL, its connection's), measured once before the cells run or taken
//! from the day's cache of the device, kept in `limits.json` and in every step's results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::limits::{self, Limits, Measured, Said, target};
use crate::plan::sweep_plan::{Sweep, SweepTarget, TargetSpec};

pub const LIMITS_FILE: &str = "limits.json";

/// What the limits' measurement came to.
pub enum Ceilings {
    Of(BTreeMap<String, Limits>),
    Interrupted,
}

/// The limits of every target of `sweep` by target name: `limits.json` of `dir` when a
/// resumed sweep has it, else measured (or from the cache) and saved there. Nothing when the
/// plan does not ask. A target whose place cannot be probed gets its one line and the sweep
/// goes on.
pub fn of_targets(sweep: &Sweep, dir: &Path) -> Result<Ceilings, Error> {
    let Some(def) = &sweep.file.limits else {
        return Ok(Ceilings::Of(BTreeMap::new()));
    };
    let path = dir.join(LIMITS_FILE);
    if path.is_file() {
        let text = crate::input::read_text(&path, crate::input::SMALL)
            .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
        let kept: BTreeMap<String, Limits> = serde_json::from_str(&text)
            .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
        return Ok(Ceilings::Of(kept));
    }
    let mut out = BTreeMap::new();
    for t in &sweep.targets {
        let (place, server) = place_of(t, sweep, dir);
        let place = match place {
            Ok(p) => p,
            Err(e) => {
                eprintln!("limits of target {}: {e}", t.name);
                continue;
            }
        };
        let shape = def
            .shape(place.dir.clone().unwrap_or_default(), place.page)
            .map_err(|e| Error::Usage(format!("the plan's limits: {e}")))?;
        let Some(shape) = shape else {
            return Ok(Ceilings::Of(BTreeMap::new()));
        };
        let mut l = match (&place.dir, place.note) {
            (Some(_), _) => match disk(t, &shape)? {
                Some(l) => l,
                None => return Ok(Ceilings::Interrupted),
            },
            (None, note) => {
                let why = note.unwrap_or_default();
                eprintln!("limits of target {}: {why}", t.name);
                Limits::of_network_only(&shape, why)
            }
        };
        if let Some(url) = server {
            match limits::network::probe(&url, shape.seconds, sweep.timeouts) {
                Ok(Some(n)) => {
                    eprintln!("limits: {}", limits::network::line(&n));
                    l.network = Some(n);
                }
                Ok(None) => return Ok(Ceilings::Interrupted),
                Err(e) => eprintln!("limits of target {}: {e}", t.name),
            }
        }
        out.insert(t.name.clone(), l);
    }
    crate::results::write_atomic(&path, &out)?;
    Ok(Ceilings::Of(out))
}

/// The disk's limits of `shape`, from the day's cache or measured; None on Ctrl-C.
fn disk(t: &SweepTarget, shape: &limits::Shape) -> Result<Option<Limits>, Error> {
    if let Some(l) = limits::cached(shape) {
        eprintln!(
            "limits of target {}: {} (measured within the day, from the cache)",
            t.name, l.dir
        );
        return Ok(Some(l));
    }
    eprintln!(
        "limits of target {}: probing {} ({} MiB probe file, {} s per probe)",
        t.name,
        shape.dir.display(),
        shape.size >> 20,
        shape.seconds
    );
    let name = t.name.clone();
    let mut say = |s: Said| match s {
        Said::Figure(f) => eprintln!("limits: {}", limits::line(f)),
        Said::Note(n) => eprintln!("limits of target {name}: {n}"),
    };
    match limits::measure(shape, &mut say) {
        Ok(Measured::Done(l)) => {
            limits::keep(shape, &l);
            Ok(Some(*l))
        }
        Ok(Measured::Interrupted) => Ok(None),
        // A place that cannot be probed (not there, read-only) is a line, not the sweep's end.
        Err(e) => {
            eprintln!("limits of target {}: {e}", t.name);
            Ok(Some(Limits::of_network_only(shape, e.to_string())))
        }
    }
}

/// Where target `t` keeps its data and its page; and the URL whose connection to probe, for
/// a server given by URL (a managed server is on this host by construction).
fn place_of(
    t: &SweepTarget,
    sweep: &Sweep,
    dir: &Path,
) -> (Result<target::Place, Error>, Option<String>) {
    let setting = |name: &str| {
        t.settings
            .iter()
            .chain(sweep.configs.iter().flat_map(|c| c.settings.iter()))
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| crate::plan::sweep_plan::parse_size(v.trim_matches('"')))
    };
    let here = |d: PathBuf, page: u64| {
        Ok(target::Place {
            dir: Some(d),
            page,
            note: None,
        })
    };
    match &t.spec {
        TargetSpec::Sqlite => (
            here(
                dir.to_path_buf(),
                setting("page_size").unwrap_or(target::SQLITE_PAGE),
            ),
            None,
        ),
        TargetSpec::Managed(_) => {
            let d = t.datadir_in.clone().unwrap_or_else(std::env::temp_dir);
            let page = match t.spec.dialect() {
                Some(crate::db::Dialect::Mysql) => {
                    setting("innodb_page_size").unwrap_or(target::INNODB_PAGE)
                }
                _ => target::POSTGRES_PAGE,
            };
            (here(d, page), None)
        }
        TargetSpec::Url(url) => {
            let server = crate::db::sqlite_dir(url).is_none().then(|| url.clone());
            (target::of_url(url, sweep.timeouts), server)
        }
    }
}
