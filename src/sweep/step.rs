//! One step of a sweep on its cell's database: the database opened (or the server started with
//! the cell's configuration, or reloaded after a crash), the workload measured here or on the
//! client hosts with a crash or a pause after it, and the load step.

use std::fs;
use std::sync::atomic::Ordering;

use crate::db::{self, OpenOptions};
use crate::error::Error;
use crate::interrupt::INTERRUPT;
use crate::measure::{self, Db};
use crate::metrics::hw::Sampler;
use crate::output::{self, Said, Warning};
use crate::plan::sweep_plan::{Cell, Class, Step, StepKind, TargetSpec};
use crate::results::StepRecord;
use crate::server::{ManagedServer, ServerKind, ServerSpec};

use super::cell::{CellDb, limit_memory};
use super::run::SweepRun;
use super::{crash, hosts};
impl<'a> SweepRun<'a> {
    /// A step's capacity search on the cell's database: its probes one after another, the
    /// answer's probe as the step's results (with the search in its `capacity` section).
    fn search(
        &mut self,
        cell: &Cell,
        db: &mut CellDb,
        step: &Step,
        search: &crate::plan::Search,
        rec: &mut StepRecord,
    ) -> Result<(), Error> {
        let StepKind::Run {
            workload,
            class,
            options,
        } = &step.kind
        else {
            return Err(Error::Run(format!(
                "step {}: a search runs a workload",
                step.name
            )));
        };
        let mut args = self
            .sweep
            .run_args(cell.clients, self.sweep.class_time(*class), options)?;
        args.db.target = db.url.clone();
        let (plan, built) = self
            .sweep
            .step_workload(step, cell.clients, Some(&db.url))?;
        db.follow(&plan);
        self.progress.say(&format!(
            "[{} {}] capacity search: p{} <= {} ms",
            cell.id(),
            step.name,
            search.percentile(),
            search.limit_ms()
        ));
        let (results, figures) = measure::search_on(
            workload,
            &args,
            search,
            &db.db,
            built.as_ref(),
            crate::output::Style::Own,
        )?;
        self.progress.say(&format!(
            "[{} {}] capacity: {}",
            cell.id(),
            step.name,
            figures
                .rate_per_s
                .map_or("no rate probed kept the limit".into(), |r| format!(
                    "{r:.1} events/s under the limit"
                ))
        ));
        self.finish_workload(cell, step, results, rec)
    }

    /// `--metrics-listen`: the step's series begin, and its run adds to them.
    fn live_begins(&self, cell: &Cell, step: &Step, plan: &mut crate::plan::RunPlan) {
        if let Some(live) = &self.live {
            live.begin(crate::metrics::live::StepLabels {
                step: step.name.clone(),
                target: cell.target.name.clone(),
                configuration: cell.config.name.clone(),
                clients: cell.clients,
            });
            plan.runner.live = Some(live.clone());
        }
    }

    pub(super) fn run_workload(
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
        if let Some(search) = &step.search {
            return self.search(cell, db, step, search, rec);
        }
        self.live_begins(cell, step, &mut plan);
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
        let once = matches!(
            step.kind,
            StepKind::Run {
                class: Class::Once,
                ..
            }
        );
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
                    &mut |report| {
                        // A sweep's steps have no checkpoints (sysbench's drop-in has them).
                        let crate::runner::Report::Interval(iv) = report else {
                            return;
                        };
                        progress.within_step(iv.t, estimate);
                        if once {
                            // One event timed whole: a rate of it would read 0 until its end.
                            progress.say(&format!(
                                "[{label}] [ {:.0}s ] its event runs (one, timed per test; \
                                 estimated {estimate:.0} s in all)",
                                iv.t
                            ));
                        } else {
                            progress.say(&format!("[{label}] {}", output::interval_line(iv)));
                        }
                        let _ = ticks.send(iv.t);
                    },
                    &|s| {
                        // After the crash, samplers that lost the server say what the crash
                        // did, not news.
                        let lost = matches!(s, Said::Warning(Warning::ServerLost, _));
                        if !(crash_at.is_some() && lost && stop.load(Ordering::Relaxed)) {
                            progress.say(&s.line());
                        }
                    },
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
        if let Some(live) = &self.live {
            live.end();
        }
        let mut results = results?;
        if let Some(crashed) = crashed {
            let crash = crashed.map_err(Error::Run)?;
            // The run ended because the crasher stopped it, not by Ctrl-C.
            results.interrupted = INTERRUPT.load(Ordering::Relaxed);
            results.error = None;
            let recovery = crash::recover(db, &crash, workload.as_ref())?;
            self.progress.say(&recovery_line(&cell.id(), &recovery));
            rec.recovery = Some(recovery);
        }
        self.finish_workload(cell, step, results, rec)
    }

    /// A workload step on the plan's client hosts (ssh), merged.
    pub(super) fn run_on_hosts(
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
            .map(|h| crate::plan::sweep_plan::Host::parse(h).map_err(Error::Usage))
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
        // The sweep's connection bounds, where they are not the defaults, bound the hosts'
        // connections too.
        let t = self.sweep.timeouts;
        if t != crate::db::Timeouts::default() {
            argv.push(format!("--connect-timeout={}", t.connect.as_secs_f64()));
            argv.push(format!(
                "--query-timeout={}",
                t.query.map_or(0.0, |q| q.as_secs_f64())
            ));
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
            // A sweep step always runs for its class's time (the plan refuses less than 0.1 s).
            time: plan.runner.time.unwrap_or_default(),
            record: &record,
        };
        let progress = &self.progress;
        hosts::run(&remote, &INTERRUPT, &|s| {
            progress.say(&format!("[{} {}] {s}", cell.id(), step.name));
        })
    }

    /// What every workload step's results go through: the status, the summary line, the
    /// profile's files.
    pub(super) fn finish_workload(
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
        // A step measured on a busy machine says so on its line.
        let busy = results
            .hw
            .as_ref()
            .and_then(|h| h.beside.as_ref())
            .filter(|b| b.busy)
            .map_or(String::new(), |b| {
                format!("  [busy machine: {}]", b.describe())
            });
        if rec.reported && crate::workload::families::seconds_per_test(&results.workload) {
            // Seconds per test (sql-bench's groups): a group runs once, tps says nothing.
            let tests: Vec<String> = results
                .statements
                .iter()
                .map(|t| format!("{} {:.2} s", t.name, t.latency_ms.avg / 1e3))
                .collect();
            self.summary.push(format!(
                "{:<28} {:<26} {:>10.2} s for the group: {}{busy}\n",
                cell.id(),
                step.name,
                results.latency_ms.avg / 1e3,
                tests.join(", ")
            ));
        } else if rec.reported {
            self.summary.push(format!(
                "{:<28} {:<26} {:>12.1} qps {:>10.1} tps {:>12.0} rows/s  p99 {:>8.3} ms  cpu {} us/op{busy}\n",
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

    pub(super) fn run_load(
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
        let sampler = Sampler::start(
            db.db.hw_subject(),
            crate::metrics::MeasureStart::at(std::time::Instant::now()),
        );
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

impl<'a> SweepRun<'a> {
    /// Starts the cell's managed server (or names its SQLite file).
    pub(super) fn open_cell(&self, cell: &Cell) -> Result<CellDb, Error> {
        let options = OpenOptions {
            create: true,
            timeouts: self.sweep.timeouts,
            ..OpenOptions::default()
        };
        let mut notes = Vec::new();
        let (url, server, sqlite_file, own) = match &cell.target.spec {
            TargetSpec::Sqlite => {
                let data = self.dir.join("data");
                fs::create_dir_all(&data)
                    .map_err(|e| Error::Run(format!("cannot create {}: {e}", data.display())))?;
                let file = data.join(format!("{}.db", cell.id()));
                let url = crate::plan::sweep_plan::sqlite_url(
                    &format!("sqlite://{}", file.display()),
                    &cell.config.settings,
                );
                (url, None, Some(file), true)
            }
            TargetSpec::Url(u) => {
                let url = if cell.target.spec.dialect() == Some(crate::db::Dialect::Sqlite) {
                    crate::plan::sweep_plan::sqlite_url(u, &cell.config.settings)
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

    pub(super) fn start_server(
        &self,
        kind: ServerKind,
        cell: &Cell,
    ) -> Result<ManagedServer, Error> {
        let server = ManagedServer::start(&self.server_spec(kind, cell))?;
        self.progress.say(&format!(
            "{}: {} at {} in {}",
            cell.id(),
            server.version,
            server.url,
            server.dir.display()
        ));
        Ok(server)
    }

    /// What the managed server of `cell` is started with.
    pub(super) fn server_spec(&self, kind: ServerKind, cell: &Cell) -> ServerSpec {
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
        ServerSpec {
            settings,
            build: cell.target.build.clone(),
            keep: self.args.keep,
            socket: cell.target.socket,
            datadir_in: cell.target.datadir_in.clone(),
            tls: cell.target.tls || cell.config.tls,
            ..ServerSpec::new(kind)
        }
    }

    /// On resume, a cell whose earlier steps are done but whose data is gone (a fresh managed
    /// server) is loaded again before its first pending step.
    pub(super) fn reload_if_gone(
        &self,
        cell: &Cell,
        db: &mut CellDb,
        first: usize,
    ) -> Result<(), Error> {
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
}

/// What a crash step's recovery says on the progress line of `cell`.
fn recovery_line(cell: &str, recovery: &crate::results::Recovery) -> String {
    format!(
        "{}: the server recovered in {:.2} s from a crash with {} of redo since its checkpoint{}{}",
        cell,
        recovery.seconds,
        recovery
            .redo_bytes
            .map_or("an unknown amount".into(), |b| format!(
                "{:.1} MB",
                b as f64 / 1e6
            )),
        match (
            recovery.recovered_txns,
            recovery.rollback_s,
            recovery.rollback_left
        ) {
            (Some(n), Some(s), None) if n > 0 =>
                format!(", and rolled back the {n} transaction(s) it left open {s:.2} s later"),
            (Some(n), Some(s), Some(left)) => format!(
                "; of the {n} transaction(s) it left open, {left} still show as rolling back with no progress since {s:.2} s after it answered (the checks went on: reads see them as uncommitted)"
            ),
            _ => String::new(),
        },
        recovery
            .checks
            .as_deref()
            .map_or(String::new(), |c| format!("; TPC-C checks {c}"))
    )
}
