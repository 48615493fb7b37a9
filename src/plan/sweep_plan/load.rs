//! Loading a plan: a built-in one or a file, parsed, checked and listed (--dry-run).

use std::fmt::Write as _;
use std::path::Path;

use super::StepOptions;
use super::cells::{Cell, Pause, Source, Step, StepKind, Sweep, TargetSpec};
use super::file::{Class, PlanFile, SYSBENCH_LOAD, builtin};
use super::options::apply;
use super::validate::validate;
use crate::cli::{RunArgs, SweepOverrides};
use crate::error::Error;
use crate::plan::RunPlan;

impl Sweep {
    /// Loads `plan`: a built-in plan's name, or a TOML file.
    pub fn load(plan: &str, overrides: &SweepOverrides) -> Result<Sweep, Error> {
        if let Some((_, text)) = builtin().find(|(n, _)| *n == plan) {
            return Sweep::parse(&format!("{plan} (built-in plan)"), text, overrides);
        }
        let path = Path::new(plan);
        if !path.exists() && !plan.contains('/') && !plan.ends_with(".toml") {
            let names: Vec<&str> = builtin().map(|(n, _)| n).collect();
            return Err(Error::Usage(format!(
                "plan {plan}: no such file and no such built-in plan (built-in: {})",
                names.join(", ")
            )));
        }
        let text = crate::input::read_text(path, crate::input::SMALL)
            .map_err(|e| Error::Usage(format!("plan {plan}: cannot read it: {e}")))?;
        Sweep::parse(plan, &text, overrides)
    }

    /// Parses and validates a plan's text; `name` is what errors call it.
    pub fn parse(name: &str, text: &str, overrides: &SweepOverrides) -> Result<Sweep, Error> {
        let mut src = Source {
            name,
            text,
            given: Vec::new(),
        };
        let mut file: PlanFile = toml::from_str(text).map_err(|e| {
            let why = e.message().trim_end().to_string();
            match e.span() {
                Some(span) => src.error(span, why),
                None => Error::Usage(format!("{name}: {why}")),
            }
        })?;
        src.given = apply(&mut file, overrides)?;
        super::series::expand(&mut file)?;
        validate(&src, file)
    }

    /// Every cell, in the order they run: each client count in turn, and at each every target
    /// and configuration once, so that a drift of the machine over the sweep (warming disks,
    /// a neighbour's load, idle wake-ups) falls on every column alike instead of on the one
    /// that ran last.
    pub fn cells(&self) -> Vec<Cell<'_>> {
        match self.detect() {
            Some((_, min, _)) => self.cells_repeated(min),
            None => self.cells_repeated(self.file.repeat),
        }
    }

    /// `detect`: the least change to resolve (a fraction), the rounds to run at least, and the
    /// most (validated with the plan).
    pub fn detect(&self) -> Option<(f64, u32, u32)> {
        let d = super::validate::detect_fraction(self.file.detect.as_deref()?).ok()?;
        let min = self.file.repeat.max(3);
        Some((d, min, self.file.max_repeat.unwrap_or(10).max(min)))
    }

    /// How many times a cell measured on a busy machine runs again at the end.
    pub fn rerun_busy(&self) -> u32 {
        self.file
            .rerun_busy
            .unwrap_or(if self.detect().is_some() { 2 } else { 0 })
    }

    /// Every cell of rounds 1 to `repeats`, named as one of `detect`'s rounds when it is set.
    pub fn cells_repeated(&self, repeats: u32) -> Vec<Cell<'_>> {
        let mut out = Vec::new();
        // Repeats interleave too: every cell once, then every cell again.
        let named = self.detect().map_or(repeats, |(_, _, cap)| cap);
        for repeat in 1..=repeats {
            for &clients in &self.file.clients {
                for target in &self.targets {
                    for config in &self.configs {
                        out.push(Cell {
                            target,
                            config,
                            clients,
                            repeat,
                            repeats: named,
                        });
                    }
                }
            }
        }
        out
    }

    /// The run's options of a step with `options` at `clients` clients running `time` seconds:
    /// the step's, then the sweep's own (tables, rows, clients unless the step's roles fix them,
    /// time).
    pub(crate) fn run_args(
        &self,
        clients: u32,
        time: f64,
        options: &StepOptions,
    ) -> Result<RunArgs, Error> {
        let mut args = options.run_args().map_err(Error::Usage)?;
        args.tables = self.file.tables;
        args.table_size = self.file.table_size;
        args.threads = Some(options.clients.unwrap_or(clients));
        args.time = time;
        args.db.timeouts = self.timeouts;
        Ok(args)
    }

    /// The words of `dbsweep run` for a step as a command line: what a client host runs in its
    /// own process, and what a sysbench Lua script reads its options from.
    fn run_words(
        &self,
        workload: &str,
        clients: u32,
        time: f64,
        options: &StepOptions,
    ) -> Vec<String> {
        let mut out: Vec<String> = vec![
            "run".into(),
            workload.into(),
            format!("--tables={}", self.file.tables),
            format!("--table-size={}", self.file.table_size),
            format!("--threads={clients}"),
            format!("--time={time}"),
        ];
        out.extend(options.words());
        out
    }

    /// The command line (after the program's name) of a workload step at `clients`: what a
    /// client host runs; None for other steps.
    pub fn step_argv(&self, step: &Step, clients: u32) -> Option<Vec<String>> {
        let StepKind::Run {
            workload,
            class,
            options,
        } = &step.kind
        else {
            return None;
        };
        Some(self.run_words(workload, clients, self.class_time(*class), options))
    }

    /// The resolved options of a workload step in a cell whose database is at `target_url`.
    pub fn step_plan(&self, step: &Step, clients: u32, target_url: &str) -> Result<RunPlan, Error> {
        let none = StepOptions::default();
        let (workload, time, options) = match &step.kind {
            StepKind::Run {
                workload,
                class,
                options,
            } => (workload.as_str(), self.class_time(*class), options),
            // A load prepares the tables with the plan's options.
            StepKind::Load(workload, options) => (workload.as_str(), 0.0, options),
            StepKind::Pause(_) => ("oltp_read_write", 0.0, &none),
        };
        let mut plan = RunPlan::from_args(workload, &self.run_args(clients, time, options)?)?;
        plan.target = target_url.to_string();
        Ok(plan)
    }

    /// A workload step's plan and workload, on `target_url` (None: only checked, as the plan's
    /// validation does). A sysbench Lua script (`workload = "x.lua"`) runs in dbsweep's Lua
    /// states, with the step's options parsed as the script's command line.
    pub fn step_workload(
        &self,
        step: &Step,
        clients: u32,
        target_url: Option<&str>,
    ) -> Result<(RunPlan, Box<dyn crate::workload::Workload>), Error> {
        let (mut plan, workload) = if let StepKind::Run {
            workload,
            class,
            options,
        } = &step.kind
            && crate::lua::is_script(workload)
        {
            let words = self.run_words(workload, clients, self.class_time(*class), options);
            crate::plan::script_step(workload, &words[2..], target_url, self.timeouts)?
        } else {
            let plan = self.step_plan(step, clients, target_url.unwrap_or("sqlite://check.db"))?;
            let workload = crate::workload::build(&plan.workload, &plan.workload_opts)?;
            (plan, workload)
        };
        // The sweep's own bar holds the terminal's last line: no step draws one of its own.
        plan.without_bars();
        Ok((plan, workload))
    }

    /// The files of the user's that the steps' workloads read (LinkBench's Distribution.dat,
    /// sql-bench's data), checked before a sweep starts: a wrong path is one line then, not a
    /// failed step later. (A plan without them still validates, and `--dry-run` shows it.)
    /// Leaves out the optional steps whose workloads' files are not given (sql-bench's ATIS
    /// without a checkout); returns a line for each, saying why.
    pub fn leave_out_unavailable(&mut self) -> Vec<String> {
        let clients = self.file.clients.first().copied().unwrap_or(1);
        let mut said = Vec::new();
        let mut kept = Vec::new();
        for step in std::mem::take(&mut self.steps) {
            if step.optional
                && matches!(step.kind, StepKind::Run { .. })
                && let Ok((_, workload)) = self.step_workload(&step, clients, None)
                && let Err(e) = workload.inputs()
            {
                said.push(format!("step {} left out: {e}", step.name));
                continue;
            }
            kept.push(step);
        }
        self.steps = kept;
        said
    }

    pub fn check_inputs(&self) -> Result<(), Error> {
        let clients = self.file.clients.first().copied().unwrap_or(1);
        for step in &self.steps {
            if !matches!(step.kind, StepKind::Run { .. }) {
                continue;
            }
            let (_, workload) = self.step_workload(step, clients, None)?;
            workload
                .inputs()
                .map_err(|e| Error::Usage(format!("step {}: {e}", step.name)))?;
        }
        Ok(())
    }

    pub fn class_time(&self, class: Class) -> f64 {
        match class {
            Class::Read => self.file.read_time,
            Class::Write => self.file.write_time,
            Class::Warmup => self.file.warmup_time,
            Class::Once => 0.0,
        }
    }

    /// Seconds of the postwrite pause.
    pub fn postwrite_seconds(&self) -> f64 {
        self.file.postwrite_pause.unwrap_or_else(|| {
            let rows = f64::from(self.file.tables) * self.file.table_size as f64;
            (60.0 + rows / 1e6).min(1200.0)
        })
    }

    /// A guess of a step's seconds in `cell`, for the schedule and the progress bar's ETA.
    pub fn estimate(&self, step: &Step, cell: &Cell) -> f64 {
        match &step.kind {
            StepKind::Run {
                workload,
                options,
                class,
            } => crate::workload::families::family_of(workload)
                .and_then(|(f, w)| {
                    let args = options.run_args().map(|a| a.families).unwrap_or_default();
                    f.estimate_seconds(w, &args, cell.target.spec.dialect())
                })
                .unwrap_or_else(|| self.class_time(*class) + 0.5),
            // A family's own tables, as it guesses; else about 150,000 rows/s, and the
            // secondary index.
            StepKind::Load(w, options) => crate::workload::families::family_of(w)
                .and_then(|(f, _)| {
                    let args = options.run_args().map(|a| a.families).unwrap_or_default();
                    f.estimate_load_seconds(&args)
                })
                .unwrap_or_else(|| {
                    2.0 + f64::from(self.file.tables) * self.file.table_size as f64 / 150_000.0
                }),
            StepKind::Pause(Pause::Postwrite) => self.postwrite_seconds(),
            StepKind::Pause(Pause::Seconds(s)) => *s,
        }
    }

    /// Seconds to start a cell's server (or create its file): measured here, a managed
    /// PostgreSQL 15 about 1.5 s (initdb and start), a MariaDB 10.11 under 1 s.
    pub fn cell_overhead(cell: &Cell) -> f64 {
        match cell.target.spec {
            TargetSpec::Managed(crate::server::ServerKind::Postgres) => 2.0,
            TargetSpec::Managed(_) => 1.0,
            _ => 0.0,
        }
    }

    /// The schedule, as `--dry-run` prints it.
    pub fn schedule(&self) -> String {
        let cells = self.cells();
        let mut out = String::new();
        // The sbtest tables' size matters only to a plan that loads them.
        let sbtest = self
            .steps
            .iter()
            .any(|s| matches!(&s.kind, StepKind::Load(w, _) if w == SYSBENCH_LOAD));
        let tables = if sbtest {
            format!(
                "; {} table(s) of {} rows",
                self.file.tables, self.file.table_size
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "plan {}: {} target(s) x {} configuration(s) x {} client count(s){} = {} cell(s) of {} step(s){tables}",
            self.file.name,
            self.targets.len(),
            self.configs.len(),
            self.file.clients.len(),
            match self.detect() {
                Some((d, min, cap)) => format!(
                    " x {min} to {cap} runs (interleaved; rounds added until a {:.1}% change is resolved; the estimate is of {min})",
                    d * 100.0
                ),
                None if self.file.repeat > 1 => {
                    format!(" x {} runs (interleaved)", self.file.repeat)
                }
                None => String::new(),
            },
            cells.len(),
            self.steps.len(),
        );
        let mut total = 0.0;
        for cell in &cells {
            let _ = writeln!(out, "\n{}: {}", cell.id(), describe_cell(cell));
            total += Sweep::cell_overhead(cell);
            for (i, step) in self.steps.iter().enumerate() {
                let secs = self.estimate(step, cell);
                total += secs;
                let what = match &step.kind {
                    StepKind::Load(w, _) if w != SYSBENCH_LOAD => {
                        format!("load the {w} tables ({} at once)", cell.clients)
                    }
                    StepKind::Load(..) => format!(
                        "load {} x {} rows ({} at once)",
                        self.file.tables, self.file.table_size, cell.clients
                    ),
                    StepKind::Pause(Pause::Postwrite) => "postwrite pause".to_string(),
                    StepKind::Pause(Pause::Seconds(s)) => format!("pause {s} s"),
                    StepKind::Run {
                        workload,
                        class,
                        options,
                    } => {
                        let class = match class {
                            Class::Read => "R",
                            Class::Write => "W",
                            Class::Warmup => "warm-up, not reported",
                            Class::Once => "its events, no time limit",
                        };
                        let words = options.describe();
                        if words.is_empty() {
                            format!("{workload} ({class})")
                        } else {
                            format!("{workload} ({class}) {words}")
                        }
                    }
                };
                let _ = writeln!(
                    out,
                    "  {:>3} {:<26} {:>8}  {what}",
                    i + 1,
                    step.name,
                    format_seconds(secs)
                );
            }
        }
        let _ = writeln!(out, "\nestimated duration: {}", format_seconds(total));
        if self.rerun_busy() > 0 {
            let _ = writeln!(
                out,
                "a cell measured on a busy machine runs again at the end, up to {} time(s) (rerun_busy): not in the estimate",
                self.rerun_busy()
            );
        }
        out
    }
}

/// `90` -> `1m30s`.
pub fn format_seconds(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, sec) => format!("{h}h{m:02}m{sec:02}s"),
    }
}

pub(crate) fn describe_cell(cell: &Cell) -> String {
    let target = match &cell.target.spec {
        TargetSpec::Sqlite => "embedded SQLite (a fresh file)".to_string(),
        TargetSpec::Url(u) => crate::db::redact_url(u),
        TargetSpec::Managed(k) => {
            let mut s = format!("a fresh managed {k:?} server");
            if let Some(d) = &cell.target.datadir_in {
                let _ = write!(s, " in {}", d.display());
            }
            if cell.target.socket {
                s.push_str(" over its Unix socket");
            }
            if cell.target.tls || cell.config.tls {
                s.push_str(" over TLS (verify-ca)");
            }
            s
        }
    };
    let mut s = format!("{target}, {} client(s)", cell.clients);
    if !cell.config.settings.is_empty() {
        let set: Vec<String> = cell
            .config
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = write!(s, ", {}", set.join(" "));
    }
    if cell.config.drop_caches {
        s.push_str(", page cache dropped before each step");
    }
    if let Some(m) = cell.config.memory_limit {
        let _ = write!(s, ", memory limit {} MB", m >> 20);
    }
    s
}
