//! `dbsweep sweep`: runs a plan's steps for every target x configuration x client count (a
//! "cell": a fresh managed server, or a fresh SQLite file), writing one record per step as it
//! ends, so that a crash loses at most the step that was running and `--resume` goes on from
//! there.
//!
//! A sweep directory holds `plan.toml` (the resolved plan), `environment.json`, and
//! `steps/CELL/NN-NAME.json` for every step.

mod crash;
mod env;
pub mod hosts;
mod pause;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::db::{self, OpenOptions};
use crate::error::Error;
use crate::error::Outcome;
use crate::interrupt::INTERRUPT;
use crate::measure::{self, Db};
use crate::metrics::hw::Sampler;
use crate::output;
use crate::plan::sweep::{Cell, Class, Overrides, Pause, Step, StepKind, Sweep, TargetSpec};
use crate::results::{SCHEMA_VERSION, StepRecord, write_atomic};
use crate::server::cgroup::MemoryCgroup;
use crate::server::{ManagedServer, ServerKind, ServerSpec};

/// What `dbsweep sweep` was asked.
#[derive(Debug, Default)]
pub struct SweepArgs {
    /// A plan file or a built-in plan's name; None: `quick`.
    pub plan: Option<String>,
    pub output: Option<PathBuf>,
    pub resume: Option<PathBuf>,
    pub dry_run: bool,
    pub fail_fast: bool,
    /// Let load steps drop and reload sbtest tables of a database given by URL.
    pub force: bool,
    /// Keep the managed servers' data directories.
    pub keep: bool,
    pub overrides: Overrides,
}

const PLAN_FILE: &str = "plan.toml";

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYYYmmdd-HHMMSS` in UTC, for default directory names.
fn stamp(epoch: u64) -> String {
    let (y, m, d, hh, mm, ss) = crate::results::utc_parts(epoch);
    format!("{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}")
}

/// Runs (or, with `--dry-run`, shows) a sweep.
pub fn run(args: SweepArgs) -> Result<Outcome, Error> {
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
            {
                return Err(Error::Usage(
                    "--resume DIR: the targets, client counts and tables are the saved plan's; only durations (--read-time, --write-time, --warmup-time, --postwrite-pause) may change for the steps still to run".into(),
                ));
            }
            let text = fs::read_to_string(&path)
                .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
            let sweep = Sweep::parse(&path.display().to_string(), &text, o)?;
            if !args.dry_run {
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
    if args.dry_run {
        print!("{}", sweep.schedule());
        return Ok(Outcome::Done);
    }
    let servers = check_servers(&sweep)?;
    if args.resume.is_none() {
        create_dir(&dir)?;
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
    write_atomic(&dir.join(env_name), &env::gather(&dir, servers, started_at))?;
    Runner::new(&sweep, &dir, &args).run()
}

/// Every managed server kind of the plan must be installed: found out before anything runs.
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
            TargetSpec::Url(url) if !url.starts_with("sqlite:") => {
                let version = db::open(url, OpenOptions::default())
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

fn create_dir(dir: &Path) -> Result<(), Error> {
    let bad = |why: String| Error::Usage(format!("--output {}: {why}", dir.display()));
    if dir.exists() {
        let empty = fs::read_dir(dir)
            .map_err(|e| bad(e.to_string()))?
            .next()
            .is_none();
        if !empty {
            return Err(bad(if dir.join(PLAN_FILE).exists() {
                "a sweep is already there; continue it with --resume".into()
            } else {
                "the directory is not empty".into()
            }));
        }
    }
    fs::create_dir_all(dir.join("steps")).map_err(|e| bad(format!("cannot create it: {e}")))
}

/// One progress bar for the whole sweep, in estimated seconds; lines go above it.
struct Progress {
    bar: ProgressBar,
    /// Estimated seconds of the steps already done or skipped.
    done: f64,
}

impl Progress {
    fn new(total: f64) -> Progress {
        let bar = ProgressBar::with_draw_target(
            Some(total.ceil().max(1.0) as u64),
            ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {percent:>3}% ETA {eta_precise}  {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(500));
        Progress { bar, done: 0.0 }
    }

    /// Prints a line above the bar (also when stderr is not a terminal and the bar is hidden).
    fn say(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    fn within_step(&self, elapsed: f64, estimate: f64) {
        self.bar
            .set_position((self.done + elapsed.min(estimate)).round() as u64);
    }

    fn advance(&mut self, estimate: f64) {
        self.done += estimate;
        self.bar.set_position(self.done.round() as u64);
    }
}

/// A cell's database: the target (and the managed server behind it), its memory cgroup, and
/// the SQLite file dbsweep created for it.
struct CellDb {
    db: Db,
    /// Held until the server has stopped (dropped after `db`), then removed.
    _cgroup: Option<MemoryCgroup>,
    sqlite_file: Option<PathBuf>,
    url: String,
    /// Whether dbsweep created this database (a load may then drop its sbtest tables).
    own: bool,
    notes: Vec<String>,
    /// The database's version string and the managed build's install tree, for the records.
    version: Option<String>,
    basedir: Option<String>,
}

impl CellDb {
    /// An external server's process and data directory, as a step's options (`server_pid`,
    /// `data_dir`) name them, so that its CPU and IO are sampled as a managed server's are.
    fn follow(&mut self, plan: &crate::plan::RunPlan) {
        if self.db.server.is_none() {
            self.db.server_pid = plan.server_pid;
            self.db.data_dir.clone_from(&plan.data_dir);
        }
    }

    /// Removes the SQLite file of a finished cell.
    fn finish(self, completed: bool) {
        let file = self.sqlite_file.clone();
        drop(self);
        if let (Some(f), true) = (file, completed) {
            for suffix in ["", "-wal", "-shm"] {
                let mut p = f.clone().into_os_string();
                p.push(suffix);
                let _ = fs::remove_file(p);
            }
        }
    }
}

struct Runner<'a> {
    sweep: &'a Sweep,
    dir: &'a Path,
    args: &'a SweepArgs,
    progress: Progress,
    ok: usize,
    failed: usize,
    skipped: usize,
    summary: Vec<String>,
}

impl<'a> Runner<'a> {
    fn new(sweep: &'a Sweep, dir: &'a Path, args: &'a SweepArgs) -> Runner<'a> {
        let total: f64 = sweep
            .cells()
            .iter()
            .map(|c| {
                Sweep::cell_overhead(c) + sweep.steps.iter().map(|s| sweep.estimate(s)).sum::<f64>()
            })
            .sum();
        Runner {
            sweep,
            dir,
            args,
            progress: Progress::new(total),
            ok: 0,
            failed: 0,
            skipped: 0,
            summary: Vec::new(),
        }
    }

    fn step_path(&self, cell: &Cell, i: usize, step: &Step) -> PathBuf {
        self.dir
            .join("steps")
            .join(cell.id())
            .join(format!("{:02}-{}.json", i + 1, step.name))
    }

    /// Whether a step already has a record that `--resume` keeps (done, or failed for a reason
    /// of its own; not interrupted, and not failed for want of disk space, which the user may
    /// have made since).
    fn finished(&self, cell: &Cell, i: usize, step: &Step) -> bool {
        StepRecord::read(&self.step_path(cell, i, step)).is_ok_and(|r| {
            r.status != "interrupted"
                && !(r.status == "failed" && r.error.as_deref().is_some_and(out_of_space))
        })
    }

    fn run(mut self) -> Result<Outcome, Error> {
        let sweep = self.sweep;
        self.progress.say(&format!(
            "sweep {} into {}",
            sweep.file.name,
            self.dir.display()
        ));
        let mut stop = false;
        for cell in sweep.cells() {
            let pending: Vec<usize> = (0..sweep.steps.len())
                .filter(|&i| !self.finished(&cell, i, &sweep.steps[i]))
                .collect();
            let cell_estimate: f64 = sweep.steps.iter().map(|s| sweep.estimate(s)).sum();
            if stop || pending.is_empty() {
                self.skipped += sweep.steps.len() - pending.len();
                self.progress
                    .advance(cell_estimate + Sweep::cell_overhead(&cell));
                continue;
            }
            for i in 0..pending[0] {
                self.skipped += 1;
                self.progress.advance(sweep.estimate(&sweep.steps[i]));
            }
            fs::create_dir_all(self.dir.join("steps").join(cell.id())).map_err(|e| {
                Error::Run(format!(
                    "cannot create the step directory in {}: {e}",
                    self.dir.display()
                ))
            })?;
            self.progress
                .bar
                .set_message(format!("{}: starting", cell.id()));
            let mut db = match self.open_cell(&cell) {
                Ok(db) => db,
                Err(e) => {
                    // Every pending step of the cell fails with the reason.
                    self.failed += pending.len();
                    self.progress.say(&format!(
                        "cell {}: the database did not start, its {} step(s) failed: {e}",
                        cell.id(),
                        pending.len()
                    ));
                    for &i in &pending {
                        let mut rec = self.record(&cell, i, now_s());
                        rec.status = "failed".into();
                        rec.error = Some(format!("the cell's database did not start: {e}"));
                        self.save(&cell, i, &rec)?;
                        self.progress.advance(sweep.estimate(&sweep.steps[i]));
                    }
                    if self.args.fail_fast {
                        stop = true;
                    }
                    continue;
                }
            };
            self.progress.advance(Sweep::cell_overhead(&cell));
            if pending[0] > 0 {
                self.reload_if_gone(&cell, &mut db, pending[0])?;
            }
            let mut completed = true;
            for &i in &pending {
                let rec = match self.run_step(&cell, &mut db, i) {
                    Ok(rec) => rec,
                    Err(e) => {
                        // No record could be written (a full disk): the sweep stops here, with
                        // its summary; --resume runs the step again.
                        self.failed += 1;
                        self.progress.say(&format!("cell {}: {e}", cell.id()));
                        stop = true;
                        completed = false;
                        break;
                    }
                };
                self.progress.advance(sweep.estimate(&sweep.steps[i]));
                match rec.status.as_str() {
                    "ok" => self.ok += 1,
                    "failed" => {
                        self.failed += 1;
                        self.progress.say(&format!(
                            "step {} of {} failed: {}",
                            rec.name,
                            rec.cell,
                            rec.error.as_deref().unwrap_or("")
                        ));
                        if self.args.fail_fast {
                            stop = true;
                            completed = false;
                            break;
                        }
                    }
                    _ => {
                        stop = true;
                        completed = false;
                        break;
                    }
                }
            }
            db.finish(completed);
        }
        self.progress.bar.finish_and_clear();
        // Removed only when empty: the files of unfinished cells stay for --resume.
        let _ = fs::remove_dir(self.dir.join("data"));
        print!("{}", self.summary.join(""));
        let interrupted = INTERRUPT.load(Ordering::Relaxed);
        println!(
            "sweep {}: {} step(s) done, {} failed, {} kept from before; results in {}",
            sweep.file.name,
            self.ok,
            self.failed,
            self.skipped,
            self.dir.display()
        );
        Ok(if interrupted {
            eprintln!(
                "interrupted: continue with dbsweep sweep --resume {}",
                self.dir.display()
            );
            Outcome::Interrupted
        } else if self.failed > 0 {
            Outcome::Failed
        } else {
            Outcome::Done
        })
    }

    /// Starts the cell's managed server (or names its SQLite file).
    fn open_cell(&self, cell: &Cell) -> Result<CellDb, Error> {
        let options = OpenOptions {
            create: true,
            ..OpenOptions::default()
        };
        let mut notes = Vec::new();
        let (url, server, sqlite_file, own) = match &cell.target.spec {
            TargetSpec::Sqlite => {
                let data = self.dir.join("data");
                fs::create_dir_all(&data)
                    .map_err(|e| Error::Run(format!("cannot create {}: {e}", data.display())))?;
                let file = data.join(format!("{}.db", cell.id()));
                let url = crate::plan::sweep::sqlite_url(
                    &format!("sqlite://{}", file.display()),
                    &cell.config.settings,
                );
                (url, None, Some(file), true)
            }
            TargetSpec::Url(u) => {
                let url = if u.starts_with("sqlite:") {
                    crate::plan::sweep::sqlite_url(u, &cell.config.settings)
                } else {
                    u.clone()
                };
                (url, None, None, false)
            }
            TargetSpec::Managed(kind) => {
                let server = self.start_server(*kind, cell)?;
                for w in &server.setting_warnings {
                    let note = format!("warning: {w}");
                    self.progress.say(&format!("{}: {note}", cell.id()));
                    notes.push(note);
                }
                (server.url.clone(), Some(server), None, true)
            }
        };
        let mut cgroup = None;
        if let (Some(bytes), Some(server)) = (cell.config.memory_limit, &server) {
            match limit_memory(server, bytes, &cell.id()) {
                Ok((cg, note)) => {
                    notes.push(note);
                    cgroup = Some(cg);
                }
                Err(e) => {
                    let note = format!("warning: no memory limit: {e}");
                    self.progress.say(&note);
                    notes.push(note);
                }
            }
        }
        let target = db::open(&url, options)?;
        // The database's own word on its version, for every step record of the cell.
        let version = target
            .connect()
            .and_then(|mut c| target.version(c.as_mut()))
            .ok();
        let basedir = server
            .as_ref()
            .and_then(|s| s.build.as_ref())
            .map(|b| b.basedir.display().to_string());
        Ok(CellDb {
            version,
            basedir,
            db: Db {
                target,
                server,
                data_dir: None,
                server_pid: None,
            },
            _cgroup: cgroup,
            sqlite_file,
            url,
            own,
            notes,
        })
    }

    fn start_server(&self, kind: ServerKind, cell: &Cell) -> Result<ManagedServer, Error> {
        let mut settings = cell.target.settings_with(cell.config);
        if cell.config.profile && kind != ServerKind::Postgres {
            // The waits by instrument (performance_schema's summary by event name) need the
            // wait instruments, which are off by default; the plan's own values win.
            for (k, v) in [
                ("performance_schema", "ON"),
                ("performance_schema_instrument", "wait/%=ON"),
            ] {
                if !settings.iter().any(|(s, _)| s == k) {
                    settings.push((k.into(), v.into()));
                }
            }
        }
        let spec = ServerSpec {
            settings,
            build: cell.target.build.clone(),
            keep: self.args.keep,
            socket: cell.target.socket,
            datadir_in: cell.target.datadir_in.clone(),
            tls: cell.target.tls || cell.config.tls,
            ..ServerSpec::new(kind)
        };
        let server = ManagedServer::start(&spec)?;
        self.progress.say(&format!(
            "{}: {} at {} in {}",
            cell.id(),
            server.version,
            server.url,
            server.dir.display()
        ));
        Ok(server)
    }

    /// On resume, a cell whose earlier steps are done but whose data is gone (a fresh managed
    /// server) is loaded again before its first pending step.
    fn reload_if_gone(&self, cell: &Cell, db: &mut CellDb, first: usize) -> Result<(), Error> {
        let sweep = self.sweep;
        let Some(load_step) = sweep.steps[..first]
            .iter()
            .find(|s| matches!(s.kind, StepKind::Load(..)))
        else {
            return Ok(());
        };
        let (plan, workload) = sweep.step_workload(load_step, cell.clients, Some(&db.url))?;
        let url = db.db.target.display_url();
        let mut conn = db.db.target.connect().map_err(|e| Error::db(&url, e))?;
        let present = !workload
            .tables_missing(conn.as_mut())
            .map_err(|e| Error::db(&url, e))?;
        drop(conn);
        if !present {
            let mut plan = plan;
            plan.force = db.own || self.args.force;
            self.progress.say(&format!(
                "{}: resuming: loading the tables again",
                cell.id()
            ));
            measure::load(&plan, db.db.target.as_ref(), workload.as_ref())?;
            workload.verify(db.db.target.as_ref())?;
            db.notes.push(
                "resumed: the tables were loaded again, so the steps before this one did not write to them"
                    .into(),
            );
        }
        Ok(())
    }

    fn record(&self, cell: &Cell, i: usize, started_at: u64) -> StepRecord {
        let step = &self.sweep.steps[i];
        let (kind, class) = match &step.kind {
            StepKind::Load(..) => ("load", None),
            StepKind::Pause(_) => ("pause", None),
            StepKind::Run { class, .. } => ("run", Some(*class)),
        };
        StepRecord {
            schema_version: SCHEMA_VERSION,
            sweep: self.sweep.file.name.clone(),
            cell: cell.id(),
            target: cell.target.name.clone(),
            config: cell.config.name.clone(),
            clients: cell.clients,
            repeat: cell.repeat,
            index: i + 1,
            name: step.name.clone(),
            kind: kind.into(),
            class: class.map(|c| format!("{c:?}").to_lowercase()),
            // A crash step's figures stop at the crash: its record is the recovery.
            reported: kind != "pause" && class != Some(Class::Warmup) && step.crash.is_none(),
            status: "ok".into(),
            error: None,
            started_at,
            seconds: 0.0,
            notes: Vec::new(),
            results: None,
            load: None,
            load_hw: None,
            pause: None,
            server_version: None,
            basedir: None,
            recovery: None,
        }
    }

    fn save(&self, cell: &Cell, i: usize, rec: &StepRecord) -> Result<(), Error> {
        write_atomic(&self.step_path(cell, i, &self.sweep.steps[i]), rec)
    }

    fn run_step(&mut self, cell: &Cell, db: &mut CellDb, i: usize) -> Result<StepRecord, Error> {
        let sweep = self.sweep;
        let step = &sweep.steps[i];
        let estimate = sweep.estimate(step);
        self.progress.bar.set_message(format!(
            "{} {}/{} {}",
            cell.id(),
            i + 1,
            sweep.steps.len(),
            step.name
        ));
        let mut rec = self.record(cell, i, now_s());
        rec.notes.append(&mut db.notes);
        rec.server_version.clone_from(&db.version);
        rec.basedir.clone_from(&db.basedir);
        if cell.config.drop_caches && !matches!(step.kind, StepKind::Pause(_)) {
            match drop_caches() {
                Ok(()) => rec
                    .notes
                    .push("OS page cache dropped before the step".into()),
                Err(e) => {
                    let note = format!("warning: the OS page cache was not dropped: {e}");
                    self.progress.say(&note);
                    rec.notes.push(note);
                }
            }
        }
        let start = Instant::now();
        let outcome = match &step.kind {
            StepKind::Run { .. } => self.run_workload(cell, db, step, estimate, &mut rec),
            StepKind::Load(..) => self.run_load(cell, db, step, &mut rec),
            StepKind::Pause(p) => {
                let seconds = match p {
                    Pause::Postwrite => sweep.postwrite_seconds(),
                    Pause::Seconds(s) => *s,
                };
                pause::postwrite(
                    db.db.target.as_ref(),
                    sweep.file.tables,
                    seconds,
                    &INTERRUPT,
                )
                .map(|r| rec.pause = Some(r))
                .map_err(|e| Error::db(db.db.target.display_url(), e))
            }
        };
        rec.seconds = start.elapsed().as_secs_f64();
        if let Err(e) = outcome {
            rec.status = "failed".into();
            rec.error = Some(e.to_string());
        }
        if INTERRUPT.load(Ordering::Relaxed) {
            rec.status = "interrupted".into();
        }
        if let Err(e) = self.save(cell, i, &rec) {
            // Keep the step's own cause (often the same full disk, as the database saw it).
            return Err(Error::Run(match &rec.error {
                Some(cause) => format!("step {} failed ({cause}), and {e}", step.name),
                None => format!("step {} could not be recorded: {e}", step.name),
            }));
        }
        Ok(rec)
    }

    fn run_workload(
        &mut self,
        cell: &Cell,
        db: &mut CellDb,
        step: &Step,
        estimate: f64,
        rec: &mut StepRecord,
    ) -> Result<(), Error> {
        let (mut plan, workload) = self
            .sweep
            .step_workload(step, cell.clients, Some(&db.url))?;
        if cell.config.profile {
            plan.profile = plan.profile.or(Some(crate::metrics::profile::DEFAULT_HZ));
        }
        if plan.server_metrics.is_none() {
            plan.server_metrics.clone_from(&cell.target.metrics);
        }
        if !self.sweep.file.client_hosts.is_empty() {
            let results = self.run_on_hosts(cell, db, step, &plan, rec)?;
            return self.finish_workload(cell, step, results, rec);
        }
        db.follow(&plan);
        // Text statements and pipelining need a target opened for them; the cell's serves
        // everything else.
        let options = plan.workload_opts.open_options(false);
        let saved = if options.text_statements || options.pipeline {
            let t = db::open(&db.url, options)?;
            Some(std::mem::replace(&mut db.db.target, t))
        } else {
            None
        };
        let progress = &self.progress;
        let label = format!("{} {}", cell.id(), step.name);
        // A crash step: the crasher kills the server at its point and then stops the run.
        let stop = std::sync::atomic::AtomicBool::new(false);
        // Each interval's time into the measured part, for the crasher; closed when the run
        // is over.
        let (ticks, ticks_rx) = std::sync::mpsc::channel::<f64>();
        let crash_at = step.crash;
        let (results, crashed) = std::thread::scope(|scope| {
            let crasher = crash_at.map(|at| {
                let db = &db.db;
                let stop = &stop;
                scope.spawn(move || crash::kill_at(db, at, stop, &ticks_rx))
            });
            let results = workload.around_run(&mut || {
                measure::measure(
                    &plan,
                    &db.db,
                    workload.as_ref(),
                    None,
                    &mut |iv| {
                        progress.within_step(iv.t, estimate);
                        progress.say(&format!("[{label}] {}", output::interval_line(iv)));
                        let _ = ticks.send(iv.t);
                    },
                    &|s| progress.say(s),
                    if crash_at.is_some() {
                        &stop
                    } else {
                        &INTERRUPT
                    },
                )
            });
            drop(ticks);
            let crashed = crasher.map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("the crasher thread panicked".into()))
            });
            (results, crashed)
        });
        if let Some(t) = saved {
            db.db.target = t;
        }
        let mut results = results?;
        if let Some(crashed) = crashed {
            let crash = crashed.map_err(Error::Run)?;
            // The run ended because the crasher stopped it, not by Ctrl-C.
            results.interrupted = INTERRUPT.load(Ordering::Relaxed);
            results.error = None;
            let recovery = crash::recover(db, &crash, workload.as_ref())?;
            self.progress.say(&format!(
                "{}: the server recovered in {:.2} s from a crash with {} of redo since its checkpoint{}",
                cell.id(),
                recovery.seconds,
                recovery
                    .redo_bytes
                    .map_or("an unknown amount".into(), |b| format!("{:.1} MB", b as f64 / 1e6)),
                recovery
                    .checks
                    .as_deref()
                    .map_or(String::new(), |c| format!("; TPC-C checks {c}"))
            ));
            rec.recovery = Some(recovery);
        }
        self.finish_workload(cell, step, results, rec)
    }

    /// A workload step on the plan's client hosts (ssh), merged.
    fn run_on_hosts(
        &mut self,
        cell: &Cell,
        db: &CellDb,
        step: &Step,
        plan: &crate::plan::RunPlan,
        rec: &StepRecord,
    ) -> Result<crate::results::Results, Error> {
        let hosts = self
            .sweep
            .file
            .client_hosts
            .iter()
            .map(|h| hosts::Host::parse(h).map_err(Error::Usage))
            .collect::<Result<Vec<_>, Error>>()?;
        let per_host = cell.clients / hosts.len().max(1) as u32;
        let argv = self
            .sweep
            .step_argv(step, per_host)
            .ok_or_else(|| Error::Usage(format!("step {}: not a workload step", step.name)))?;
        let mut argv = argv;
        if let Some(m) = &plan.server_metrics {
            argv.extend(["--server-metrics".to_string(), m.clone()]);
        }
        let record = self.step_path(cell, rec.index - 1, step);
        let remote = hosts::Remote {
            hosts: &hosts,
            program: self
                .sweep
                .file
                .client_dbsweep
                .as_deref()
                .unwrap_or("dbsweep"),
            argv,
            url: &db.url,
            warmup: plan.runner.warmup,
            time: plan.runner.time,
            record: &record,
        };
        let progress = &self.progress;
        hosts::run(&remote, &INTERRUPT, &|s| {
            progress.say(&format!("[{} {}] {s}", cell.id(), step.name));
        })
    }

    /// What every workload step's results go through: the status, the summary line, the
    /// profile's files.
    fn finish_workload(
        &mut self,
        cell: &Cell,
        step: &Step,
        mut results: crate::results::Results,
        rec: &mut StepRecord,
    ) -> Result<(), Error> {
        if let Some(e) = &results.error {
            rec.status = "failed".into();
            rec.error = Some(e.clone());
        }
        if rec.reported {
            self.summary.push(format!(
                "{:<28} {:<26} {:>12.1} qps {:>10.1} tps {:>12.0} rows/s  p99 {:>8.3} ms  cpu {} us/op\n",
                cell.id(),
                step.name,
                results.qps,
                results.tps,
                results.rows_per_s,
                results.latency_ms.p99,
                results
                    .hw
                    .as_ref()
                    .and_then(|h| h.cpu_us_per_op.machine)
                    .map_or("-".into(), |v| format!("{v:.1}")),
            ));
        }
        if let Some(p) = results.profile.as_mut() {
            let title = format!("{} {} at {} client(s)", cell.id(), step.name, cell.clients);
            if let Err(e) = p.save_beside(&self.step_path(cell, rec.index - 1, step), &title) {
                let note = format!("warning: --profile: {e}");
                self.progress.say(&note);
                rec.notes.push(note);
            }
        }
        rec.results = Some(results);
        Ok(())
    }

    fn run_load(
        &mut self,
        cell: &Cell,
        db: &mut CellDb,
        step: &Step,
        rec: &mut StepRecord,
    ) -> Result<(), Error> {
        let (mut plan, workload) = self
            .sweep
            .step_workload(step, cell.clients, Some(&db.url))?;
        plan.force = db.own || self.args.force;
        db.follow(&plan);
        let sampler = Sampler::start(db.db.hw_subject(), Duration::ZERO);
        let report = measure::load(&plan, db.db.target.as_ref(), workload.as_ref());
        let rows = report.as_ref().map_or(0, |r| r.rows);
        rec.load_hw = sampler.finish(rows);
        let report = report?;
        // After the sampler: the checks are not the load's work.
        workload.verify(db.db.target.as_ref())?;
        self.progress
            .say(&format!("{}: {}", cell.id(), measure::load_line(&report)));
        self.summary.push(format!(
            "{:<28} {:<26} {:>12.0} rows/s\n",
            cell.id(),
            step.name,
            report.rows_per_s
        ));
        rec.load = Some(report);
        Ok(())
    }
}

/// Puts the managed server's processes into a memory cgroup of `bytes`.
fn limit_memory(
    server: &ManagedServer,
    bytes: u64,
    cell: &str,
) -> Result<(MemoryCgroup, String), String> {
    let cg = MemoryCgroup::create(&format!("dbsweep-{}-{cell}", std::process::id()), bytes)?;
    for pid in server.pids() {
        // A helper process may exit between the listing and the move: only live ones count.
        if let Err(e) = cg.add(pid)
            && Path::new(&format!("/proc/{pid}")).exists()
        {
            return Err(e);
        }
    }
    let limit = cg.limit().unwrap_or(bytes);
    Ok((
        cg,
        format!(
            "the server's processes are limited to {} MB of memory (cgroup)",
            limit >> 20
        ),
    ))
}

/// Writes back dirty pages and drops the OS page cache, so that reads come from the device.
/// Whether an error says a disk was full (the system's, SQLite's, PostgreSQL's, InnoDB's words).
fn out_of_space(error: &str) -> bool {
    [
        "No space left on device",
        "database or disk is full",
        "could not extend file",
        "The table is full",
        "Disk full",
    ]
    .iter()
    .any(|m| error.contains(m))
}

fn drop_caches() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("dropping the page cache needs root".into());
    }
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| format!("cannot write /proc/sys/vm/drop_caches: {e}"))
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
