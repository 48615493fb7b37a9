//! Running a sweep: the directory and its lock, the builds it fetches, the servers it checks, the cells in order.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::run::{SweepRun, now_s};
use crate::cli::SweepOpts;
use crate::db::{self, Dialect, OpenOptions};
use crate::error::Error;
use crate::error::Outcome;
use crate::plan::sweep_plan::{Sweep, TargetSpec};
use crate::results::write_atomic;

const PLAN_FILE: &str = "plan.toml";

/// `YYYYmmdd-HHMMSS` in UTC, for default directory names.
fn stamp(epoch: u64) -> String {
    let (y, m, d, hh, mm, ss) = crate::results::utc_parts(epoch);
    format!("{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}")
}

/// Runs (or, with `--dry-run`, shows) a sweep.
pub fn run(args: &SweepOpts) -> Result<Outcome, Error> {
    // Held for the sweep's life: one writer per sweep directory.
    let mut lock = None;
    let (sweep, dir) = match &args.resume {
        Some(dir) => {
            if args.plan.is_some() || args.output.is_some() {
                return Err(Error::Usage(
                    "--resume DIR: the plan and the directory are the saved ones; give neither a PLAN nor --output".into(),
                ));
            }
            let path = dir.join(PLAN_FILE);
            if !path.is_file() {
                return Err(Error::Usage(format!(
                    "--resume {}: not a sweep directory (no {PLAN_FILE})",
                    dir.display()
                )));
            }
            let o = &args.overrides;
            if o.target.is_some()
                || !o.server.is_empty()
                || o.clients.is_some()
                || o.tables.is_some()
                || o.table_size.is_some()
                || !o.option.is_empty()
                || !o.server_set.is_empty()
            {
                return Err(Error::Usage(
                    "--resume DIR: the targets, their settings, client counts, tables and options are the saved plan's; only durations (--read-time, --write-time, --warmup-time, --postwrite-pause) may change for the steps still to run".into(),
                ));
            }
            let text = crate::input::read_text(&path, crate::input::SMALL)
                .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
            let sweep = Sweep::parse(&path.display().to_string(), &text, o)?;
            if !args.dry_run {
                lock = Some(lock_dir(dir, "--resume")?);
                // The saved plan says what the remaining steps run with.
                let text = toml::to_string(&sweep.file).expect("a plan serialises");
                fs::write(&path, text)
                    .map_err(|e| Error::Run(format!("cannot write {}: {e}", path.display())))?;
            }
            (sweep, dir.clone())
        }
        None => {
            let plan = args.plan.as_deref().unwrap_or("quick");
            let sweep = Sweep::load(plan, &args.overrides)?;
            let dir = args.output.clone().unwrap_or_else(|| {
                PathBuf::from(format!("sweep-{}-{}", sweep.file.name, stamp(now_s())))
            });
            (sweep, dir)
        }
    };
    let mut sweep = sweep;
    sweep.timeouts = args.timeouts;
    for line in sweep.leave_out_unavailable() {
        eprintln!("{line}");
    }
    if args.dry_run {
        print!("{}", sweep.schedule());
        return Ok(Outcome::Done);
    }
    // The live metrics' port is taken before anything runs, or the sweep does not start.
    let listen = match (&args.metrics_listen, &sweep.file.metrics_listen) {
        (Some(spec), _) => Some((spec, "--metrics-listen")),
        (None, Some(spec)) => Some((spec, "the plan's metrics_listen")),
        (None, None) => None,
    };
    let endpoint = match listen {
        Some((spec, what)) => {
            let e = crate::metrics::live::listen(spec, what)?;
            eprintln!("live metrics at http://{}/metrics", e.addr);
            Some(e)
        }
        None => None,
    };
    sweep.check_inputs()?;
    fetch_builds(&mut sweep)?;
    let servers = check_servers(&sweep)?;
    if args.resume.is_none() {
        lock = Some(create_dir(&dir)?);
        // Passwords are not saved: a resumed sweep takes them from PGPASSWORD / MYSQL_PWD.
        let mut file = sweep.file.clone();
        for t in &mut file.targets {
            if let Some(url) = &mut t.get_mut().url {
                *url = db::redact_url(url);
            }
        }
        let text = toml::to_string(&file).expect("a plan serialises");
        crate::results::ResultsFile::create(&dir.join(PLAN_FILE))?.commit_bytes(text.as_bytes())?;
    }
    let started_at = now_s();
    let env_name = if dir.join("environment.json").exists() {
        format!("environment.resumed-{started_at}.json")
    } else {
        "environment.json".into()
    };
    write_atomic(
        &dir.join(env_name),
        &super::env::gather(&dir, servers, started_at),
    )?;
    let ceilings = match super::limits::of_targets(&sweep, &dir)? {
        super::limits::Ceilings::Of(c) => c,
        super::limits::Ceilings::Interrupted => return Ok(Outcome::Interrupted),
    };
    let mut run = SweepRun::new(&sweep, &dir, args);
    run.limits = ceilings;
    run.live = endpoint.as_ref().map(|e| e.live.clone());
    // Said before the first cell, and again with the summary at the end.
    for w in run.compare_durability() {
        run.summary.push(format!("{w}\n"));
    }
    let outcome = run.run();
    drop(lock);
    outcome
}

/// The lock file of a sweep directory: a sweep holds an exclusive lock on it (flock, released
/// by the kernel however the process ends) and writes its pid in it.
const LOCK_FILE: &str = ".dbsweep.lock";

/// Locks sweep directory `dir` for this process, or refuses because another dbsweep holds it:
/// two sweeps writing one directory would interleave their records.
fn lock_dir(dir: &Path, option: &str) -> Result<fs::File, Error> {
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsRawFd;
    let path = dir.join(LOCK_FILE);
    let bad = |why: String| Error::Usage(format!("{option} {}: {why}", dir.display()));
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| bad(format!("cannot lock it ({}: {e})", path.display())))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = file.take(64).read_to_string(&mut holder);
        return Err(bad(format!(
            "another dbsweep (pid {}) is running a sweep there; wait for it to end, or stop it \
             and then --resume",
            holder.trim()
        )));
    }
    let pid = std::process::id().to_string();
    let written = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(pid.as_bytes()));
    written.map_err(|e| bad(format!("cannot write {}: {e}", path.display())))?;
    Ok(file)
}

/// Every managed server kind of the plan must be installed: found out before anything runs.
/// Fetches the releases the targets name that are not here yet (a series' point releases), into
/// the first builds directory, each once, before anything starts: a fetch that fails ends the
/// sweep with one line and leaves no half tree.
fn fetch_builds(sweep: &mut Sweep) -> Result<(), Error> {
    let dir = crate::server::builds::builds_dirs()
        .into_iter()
        .next()
        .ok_or_else(|| Error::Usage("DBSWEEP_BUILDS names no directory".into()))?;
    for t in &mut sweep.targets {
        let Some(release) = t.fetch.take() else {
            continue;
        };
        let tree = crate::server::fetch::fetch(&release, &dir, &|line| eprintln!("{line}"))
            .map_err(|e| Error::Run(format!("target {}: {e}", t.name)))?;
        t.build = Some(
            crate::server::builds::Build::at(&tree, Some(release.kind))
                .map_err(|e| Error::Run(format!("target {}: {e}", t.name)))?,
        );
    }
    Ok(())
}

fn check_servers(sweep: &Sweep) -> Result<BTreeMap<String, String>, Error> {
    let mut out = BTreeMap::new();
    for t in &sweep.targets {
        match &t.spec {
            TargetSpec::Managed(kind) => {
                let version = match &t.build {
                    Some(b) => b.line.clone(),
                    None => crate::server::binary_version(*kind)?,
                };
                out.insert(t.name.clone(), version);
            }
            // A running server is asked; the sweep says later if it cannot be reached.
            TargetSpec::Url(url) if t.spec.dialect() != Some(Dialect::Sqlite) => {
                let version = db::open(url, OpenOptions::bounded(sweep.timeouts))
                    .and_then(|target| {
                        let mut conn = target
                            .connect()
                            .map_err(|e| Error::db(target.display_url(), e))?;
                        let v = target
                            .version(conn.as_mut())
                            .map_err(|e| Error::db(target.display_url(), e))?;
                        Ok(format!("{} {v}", target.kind()))
                    })
                    .unwrap_or_else(|e| format!("not reached: {e}"));
                out.insert(t.name.clone(), version);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Creates sweep directory `dir` (or takes an empty one) and locks it. Emptiness is checked
/// before anything is written there and again under the lock, so that of two sweeps started
/// on one directory at once one runs and the other is refused.
fn create_dir(dir: &Path) -> Result<fs::File, Error> {
    let bad = |why: String| Error::Usage(format!("--output {}: {why}", dir.display()));
    let check_empty = || -> Result<(), Error> {
        let Ok(entries) = fs::read_dir(dir) else {
            return Ok(()); // not there yet (or not a directory: creating it says so)
        };
        if entries.flatten().all(|e| e.file_name() == LOCK_FILE) {
            return Ok(());
        }
        if dir.join(PLAN_FILE).exists() {
            // A sweep running there says so rather than the advice to resume it.
            lock_dir(dir, "--output")?;
        }
        Err(bad(if dir.join(PLAN_FILE).exists() {
            "a sweep is already there; continue it with --resume".into()
        } else {
            "the directory is not empty".into()
        }))
    };
    check_empty()?;
    fs::create_dir_all(dir).map_err(|e| bad(format!("cannot create it: {e}")))?;
    let lock = lock_dir(dir, "--output")?;
    check_empty()?;
    fs::create_dir_all(dir.join("steps")).map_err(|e| bad(format!("cannot create it: {e}")))?;
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_dates() {
        assert_eq!(stamp(0), "19700101-000000");
        assert_eq!(stamp(1_795_305_600 + 3_723), "20261122-010203");
        assert_eq!(stamp(951_782_400), "20000229-000000");
    }
}
