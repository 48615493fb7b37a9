//! Running a sweep cell by cell and step by step: what is done is skipped on resume, each step's
//! record is saved as it finishes, and the summary says what ran, failed and was skipped.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::cell::{CellDb, drop_caches, out_of_space};
use super::detect::resolvable;
use super::pause;
use super::progress::Progress;
use crate::cli::SweepOpts;
use crate::error::Error;
use crate::error::Outcome;
use crate::interrupt::INTERRUPT;
use crate::plan::sweep_plan::{Cell, Class, Pause, Step, StepKind, Sweep};
use crate::results::{SCHEMA_VERSION, StepRecord, write_atomic};
pub(super) struct SweepRun<'a> {
    pub(super) sweep: &'a Sweep,
    pub(super) dir: &'a Path,
    pub(super) args: &'a SweepOpts,
    pub(super) progress: Progress,
    pub(super) ok: usize,
    pub(super) failed: usize,
    pub(super) skipped: usize,
    pub(super) summary: Vec<String>,
    /// `--metrics-listen`'s figures: each step's run adds to them under its labels.
    pub(super) live: Option<std::sync::Arc<crate::metrics::live::Live>>,
    /// The machine's ceilings by target (`limits = true`), put in every step's results.
    pub(super) limits: std::collections::BTreeMap<String, crate::limits::Limits>,
}

impl<'a> SweepRun<'a> {
    pub(super) fn new(sweep: &'a Sweep, dir: &'a Path, args: &'a SweepOpts) -> SweepRun<'a> {
        let total = total_estimate(sweep);
        SweepRun {
            sweep,
            dir,
            args,
            progress: Progress::new(total),
            ok: 0,
            failed: 0,
            skipped: 0,
            summary: Vec::new(),
            live: None,
            limits: Default::default(),
        }
    }

    pub(super) fn step_path(&self, cell: &Cell, i: usize, step: &Step) -> PathBuf {
        self.dir
            .join("steps")
            .join(cell.id())
            .join(format!("{:02}-{}.json", i + 1, step.name))
    }

    /// Whether a step already has a record that `--resume` keeps (done, or failed for a reason
    /// of its own; not interrupted, and not failed for want of disk space, which the user may
    /// have made since).
    pub(super) fn finished(&self, cell: &Cell, i: usize, step: &Step) -> bool {
        StepRecord::read(&self.step_path(cell, i, step)).is_ok_and(|r| {
            r.status != "interrupted"
                && !r.rerun
                && !(r.status == "failed" && r.error.as_deref().is_some_and(out_of_space))
        })
    }

    pub(super) fn run(mut self) -> Result<Outcome, Error> {
        let sweep = self.sweep;
        self.progress.say(&format!(
            "sweep {} into {}",
            sweep.file.name,
            self.dir.display()
        ));
        let mut stop = false;
        let ran = match sweep.detect() {
            None => {
                let cells = sweep.cells();
                for cell in &cells {
                    self.run_cell(cell, &mut stop)?;
                }
                cells
            }
            Some((detect, min, cap)) => {
                self.progress.say(&format!(
                    "detect {:.1}%: {min} round(s), then more up to {cap} until every step's spread resolves it (about {:.0} s a round)",
                    detect * 100.0,
                    self.round_estimate(min)
                ));
                let all = sweep.cells_repeated(cap);
                let mut last = 0;
                for round in 1..=cap {
                    if stop {
                        break;
                    }
                    last = round;
                    for cell in all.iter().filter(|c| c.repeat == round) {
                        self.run_cell(cell, &mut stop)?;
                    }
                    if round < min {
                        continue;
                    }
                    let (resolved, lines) = self.resolution(&all, round, detect);
                    if resolved || round == cap {
                        for l in &lines {
                            self.progress.say(l);
                        }
                        self.summary.extend(lines.iter().map(|l| format!("{l}\n")));
                        break;
                    }
                    self.progress.add(self.round_estimate(min));
                }
                all.into_iter().filter(|c| c.repeat <= last).collect()
            }
        };
        let first = self.ok + self.failed;
        self.rerun_busy(&ran, &mut stop)?;
        let again = self.ok + self.failed - first;
        self.progress.bar.finish_and_clear();
        // Removed only when empty: the files of unfinished cells stay for --resume.
        let _ = fs::remove_dir(self.dir.join("data"));
        print!("{}", self.summary.join(""));
        let interrupted = INTERRUPT.load(Ordering::Relaxed);
        println!(
            "sweep {}: {} step(s) done, {} failed, {} kept from before{}; results in {}",
            sweep.file.name,
            self.ok,
            self.failed,
            self.skipped,
            if again > 0 {
                format!(" ({again} of them again: a busy machine)")
            } else {
                String::new()
            },
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

    /// Runs the pending steps of one cell (none when it is done already).
    fn run_cell(&mut self, cell: &Cell, stop: &mut bool) -> Result<(), Error> {
        let sweep = self.sweep;
        let cell = *cell;
        let pending: Vec<usize> = (0..sweep.steps.len())
            .filter(|&i| !self.finished(&cell, i, &sweep.steps[i]))
            .collect();
        let cell_estimate: f64 = sweep.steps.iter().map(|s| sweep.estimate(s, &cell)).sum();
        if *stop || pending.is_empty() {
            self.skipped += sweep.steps.len() - pending.len();
            self.progress
                .advance(cell_estimate + Sweep::cell_overhead(&cell));
            return Ok(());
        }
        for i in 0..pending[0] {
            self.skipped += 1;
            self.progress
                .advance(sweep.estimate(&sweep.steps[i], &cell));
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
                *stop |= self.cell_did_not_start(&cell, &pending, &e)?;
                return Ok(());
            }
        };
        self.progress.advance(Sweep::cell_overhead(&cell));
        if pending[0] > 0 {
            self.reload_if_gone(&cell, &mut db, pending[0])?;
        }
        let (stopped, completed) = self.run_cell_steps(&cell, &mut db, &pending)?;
        *stop |= stopped;
        db.finish(completed);
        Ok(())
    }

    /// Cells of `ran` measured on a busy machine run again, up to the plan's `rerun_busy` times
    /// each: the cell's records move to `busy/CELL.N` (kept for a look, and no longer read by
    /// reports) and the cell runs afresh at the end of the sweep, where the interleaving still
    /// ran every other cell on the same machine. A cell still busy after the last stays,
    /// marked in the reports.
    fn rerun_busy(&mut self, ran: &[Cell], stop: &mut bool) -> Result<(), Error> {
        let most = self.sweep.rerun_busy();
        if most == 0 {
            return Ok(());
        }
        let mut still = Vec::new();
        loop {
            still.clear();
            let mut again = Vec::new();
            for cell in ran {
                let Some(why) = self.busy_in(cell) else {
                    continue;
                };
                let before = self.busy_copies(cell);
                if before >= most {
                    still.push(format!(
                        "cell {}: still measured on a busy machine after running again {before} time(s) ({why}): its runs are marked in the reports\n",
                        cell.id()
                    ));
                } else {
                    again.push((*cell, why, before + 1));
                }
            }
            if again.is_empty() || *stop || INTERRUPT.load(Ordering::Relaxed) {
                break;
            }
            for (cell, why, n) in again {
                if *stop {
                    break;
                }
                let aside = self.dir.join("busy").join(format!("{}.{n}", cell.id()));
                let moved = fs::create_dir_all(self.dir.join("busy"))
                    .and_then(|()| fs::rename(self.dir.join("steps").join(cell.id()), &aside));
                if let Err(e) = moved {
                    return Err(Error::Run(format!(
                        "cannot move the busy cell {}'s records to {}: {e}",
                        cell.id(),
                        aside.display()
                    )));
                }
                self.progress.say(&format!(
                    "cell {}: measured on a busy machine ({why}): run again ({n} of at most {most}); the first records are in {}",
                    cell.id(),
                    aside.display()
                ));
                let estimate: f64 = self
                    .sweep
                    .steps
                    .iter()
                    .map(|s| self.sweep.estimate(s, &cell))
                    .sum::<f64>()
                    + Sweep::cell_overhead(&cell);
                self.progress.add(estimate);
                self.run_cell(&cell, stop)?;
            }
        }
        self.summary.append(&mut still);
        Ok(())
    }

    /// How busy the machine was beside a reported step of `cell` that finished, where any was
    /// busy enough to move its figures.
    fn busy_in(&self, cell: &Cell) -> Option<String> {
        self.sweep.steps.iter().enumerate().find_map(|(i, step)| {
            let rec = StepRecord::read(&self.step_path(cell, i, step)).ok()?;
            if !rec.reported || rec.status != "ok" {
                return None;
            }
            let hw = rec
                .load_hw
                .as_ref()
                .or_else(|| rec.results.as_ref()?.hw.as_ref())?;
            let beside = hw.beside.as_ref().filter(|b| b.busy)?;
            Some(format!("step {}: {}", step.name, beside.describe()))
        })
    }

    /// How many times `cell`'s records were moved aside for a busy machine.
    fn busy_copies(&self, cell: &Cell) -> u32 {
        let id = cell.id();
        let Ok(entries) = fs::read_dir(self.dir.join("busy")) else {
            return 0;
        };
        entries
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_prefix(&id)?.strip_prefix('.'))
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count() as u32
    }

    /// The seconds a round of `rounds` takes, from the sweep's estimate.
    fn round_estimate(&self, rounds: u32) -> f64 {
        let total = total_estimate(self.sweep);
        total / f64::from(rounds.max(1))
    }

    /// Whether rounds 1 to `round` resolve a change of `detect` at every measured step of every
    /// cell (a difference between two builds with as many runs each, at 5% and 80% power on
    /// the runs' spread), and a line per step that does not (or one saying all do).
    fn resolution(&self, all: &[Cell], round: u32, detect: f64) -> (bool, Vec<String>) {
        let sweep = self.sweep;
        let mut worst: Vec<(String, f64)> = Vec::new();
        for (i, step) in sweep.steps.iter().enumerate() {
            if !matches!(step.kind, StepKind::Run { .. }) {
                continue;
            }
            let mut smallest: f64 = 0.0;
            for first in all.iter().filter(|c| c.repeat == 1) {
                let tps: Vec<f64> = all
                    .iter()
                    .filter(|c| {
                        c.repeat <= round
                            && c.target.name == first.target.name
                            && c.config.name == first.config.name
                            && c.clients == first.clients
                    })
                    .filter_map(|c| StepRecord::read(&self.step_path(c, i, step)).ok())
                    .filter_map(|r| r.results.map(|r| r.tps))
                    .filter(|t| *t > 0.0)
                    .collect();
                if tps.len() < 2 {
                    continue;
                }
                smallest = smallest.max(resolvable(&tps));
            }
            worst.push((step.name.clone(), smallest));
        }
        let resolved = worst.iter().all(|(_, s)| *s <= detect);
        let lines = if resolved {
            vec![format!(
                "detect {:.1}%: resolved after {round} round(s) (the smallest resolvable change per step: {})",
                detect * 100.0,
                worst
                    .iter()
                    .map(|(n, s)| format!("{n} {:.1}%", s * 100.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            )]
        } else {
            worst
                .iter()
                .filter(|(_, s)| *s > detect)
                .map(|(n, s)| {
                    format!(
                        "detect {:.1}%: step {n} resolves {:.1}% after {round} round(s), the most allowed (max_repeat): smaller changes there are noise",
                        detect * 100.0,
                        s * 100.0
                    )
                })
                .collect()
        };
        (resolved, lines)
    }

    /// Every pending step of a cell whose database did not start fails with the reason; true
    /// when the sweep stops (--fail-fast).
    fn cell_did_not_start(
        &mut self,
        cell: &Cell,
        pending: &[usize],
        e: &Error,
    ) -> Result<bool, Error> {
        let sweep = self.sweep;
        self.failed += pending.len();
        self.progress.say(&format!(
            "cell {}: the database did not start, its {} step(s) failed: {e}",
            cell.id(),
            pending.len()
        ));
        for &i in pending {
            let mut rec = self.record(cell, i, now_s());
            rec.status = "failed".into();
            rec.error = Some(format!("the cell's database did not start: {e}"));
            rec.rerun = true;
            self.save(cell, i, &rec)?;
            self.progress.advance(sweep.estimate(&sweep.steps[i], cell));
        }
        Ok(self.args.fail_fast)
    }

    /// Runs the pending steps of a cell on its database; whether the sweep stops, and whether
    /// every step ran.
    fn run_cell_steps(
        &mut self,
        cell: &Cell,
        db: &mut CellDb,
        pending: &[usize],
    ) -> Result<(bool, bool), Error> {
        let sweep = self.sweep;
        let mut stop = false;
        let mut completed = true;
        for &i in pending {
            let rec = match self.run_step(cell, db, i) {
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
            self.progress.advance(sweep.estimate(&sweep.steps[i], cell));
            if rec.rerun {
                // The cell's server failed: its other steps would run against a dead or
                // recovering server. They are recorded as not run; --resume runs the
                // cell's steps again on a fresh server.
                self.fail_rest_of_cell(cell, pending, i, &rec)?;
                if self.args.fail_fast {
                    stop = true;
                }
                completed = false;
                break;
            }
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
        Ok((stop, completed))
    }

    pub(super) fn record(&self, cell: &Cell, i: usize, started_at: u64) -> StepRecord {
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
            rerun: false,
        }
    }

    /// After step `failed` of `cell` failed with its server: the failure is said, counted, and
    /// every later pending step of the cell is recorded as not run, for `--resume` to run.
    fn fail_rest_of_cell(
        &mut self,
        cell: &Cell,
        pending: &[usize],
        failed: usize,
        rec: &StepRecord,
    ) -> Result<(), Error> {
        let why = rec.error.as_deref().unwrap_or("");
        self.failed += 1;
        self.progress.say(&format!(
            "step {} of {} failed: {why}; the cell's other steps are not run (--resume runs \
             them on a fresh server)",
            rec.name, rec.cell
        ));
        for &j in pending.iter().filter(|&&j| j > failed) {
            let mut later = self.record(cell, j, now_s());
            later.status = "failed".into();
            later.error = Some(format!(
                "not run: the cell's server failed at step {}: {why}",
                rec.name
            ));
            later.rerun = true;
            self.save(cell, j, &later)?;
            self.failed += 1;
            self.progress
                .advance(self.sweep.estimate(&self.sweep.steps[j], cell));
        }
        Ok(())
    }

    pub(super) fn save(&self, cell: &Cell, i: usize, rec: &StepRecord) -> Result<(), Error> {
        let path = self.step_path(cell, i, &self.sweep.steps[i]);
        match (self.limits.get(&rec.target), &rec.results) {
            (Some(l), Some(r)) if r.limits.is_none() => {
                let mut with = rec.clone();
                if let Some(r) = with.results.as_mut() {
                    r.limits = Some(Box::new(l.clone()));
                }
                write_atomic(&path, &with)
            }
            _ => write_atomic(&path, rec),
        }
    }

    pub(super) fn run_step(
        &mut self,
        cell: &Cell,
        db: &mut CellDb,
        i: usize,
    ) -> Result<StepRecord, Error> {
        let sweep = self.sweep;
        let step = &sweep.steps[i];
        let estimate = sweep.estimate(step, cell);
        self.progress.bar.set_message(format!(
            "{} {}/{} {}",
            cell.id(),
            i + 1,
            sweep.steps.len(),
            step.name
        ));
        let mut rec = self.record(cell, i, now_s());
        if let Some(why) = self.load_failed_before(cell, i) {
            // Its tables are whatever was there before: measuring them would report another
            // table's figures under this plan's name.
            rec.status = "failed".into();
            rec.error = Some(format!("not run: {why}"));
            rec.rerun = true;
            self.save(cell, i, &rec)?;
            return Ok(rec);
        }
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
        let log_mark = db.log_mark();
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
            rec.error = Some(match db.server_failure(log_mark) {
                Some(why) => {
                    rec.rerun = true;
                    format!("{e}; {why}")
                }
                None => e.to_string(),
            });
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
}

impl SweepRun<'_> {
    /// Why step `i` of `cell` cannot run: the cell's last load step before it failed (or was
    /// interrupted or not run), as its saved record says. Pauses need no tables and run.
    fn load_failed_before(&self, cell: &Cell, i: usize) -> Option<String> {
        if !matches!(self.sweep.steps[i].kind, StepKind::Run { .. }) {
            return None;
        }
        let j = (0..i)
            .rev()
            .find(|&j| matches!(self.sweep.steps[j].kind, StepKind::Load(..)))?;
        let load = &self.sweep.steps[j];
        let why = match StepRecord::read(&self.step_path(cell, j, load)) {
            Ok(r) if r.status == "ok" => return None,
            Ok(r) => format!(
                "{} ({})",
                r.status,
                r.error.as_deref().unwrap_or("no error recorded")
            ),
            Err(_) => "not recorded".into(),
        };
        Some(format!(
            "the load step {} of this cell {why}, so the tables are not the plan's",
            load.name
        ))
    }
}

pub(super) fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The seconds every cell of the sweep (its first `repeat` rounds) is estimated to take.
fn total_estimate(sweep: &Sweep) -> f64 {
    sweep
        .cells()
        .iter()
        .map(|c| {
            Sweep::cell_overhead(c)
                + sweep
                    .steps
                    .iter()
                    .map(|s| sweep.estimate(s, c))
                    .sum::<f64>()
        })
        .sum()
}
