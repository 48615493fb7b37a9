//! A script's command line: its own options parsed as sysbench does, the rest handed on as a
//! dbsweep `run` line for the plan, and the script's context settled once the plan is known.

use std::sync::Arc;

use super::api::new_state;
use super::options::declared_options;
use super::options::print_help;
use super::options::split_args;
use super::options::split_legacy;
use super::state::Ctx;
use super::state::MYSQL_IGNORE_DEFAULT;
use super::state::OptValue;
use super::state::lua_fail;
use crate::error::Error;
use crate::runner::RunnerOptions;
use crate::workload::WorkloadOptions;
use crate::workload::rand::{RandOptions, RandType};

/// A script's command line, read as sysbench reads it: the script, its own options (defaults,
/// then the line's), and the rest, the run's options, for the plan.
pub struct ScriptLine {
    ctx: Ctx,
    /// The options that are not the script's own (dbsweep run's).
    pub general: Vec<String>,
}

impl ScriptLine {
    /// The line of `command` of `script`; None for `help` (printed here).
    pub fn read(command: &str, script: &str, args: &[String]) -> Result<Option<ScriptLine>, Error> {
        read_line(command, script, args)
    }

    /// The script's path: the name of its workload.
    pub fn path(&self) -> String {
        self.ctx.path.display().to_string()
    }

    /// The script's context for a run with these options: `sysbench.opt` says what the run
    /// does (threads, time, the generator ...), except where the script declares an option
    /// of the same name: that keeps the script's default, as in sysbench 1.0.20 (the command
    /// line's `--threads` is sysbench's own).
    pub fn settle(self, r: &RunnerOptions, w: &WorkloadOptions) -> Ctx {
        let mut ctx = self.ctx;
        let mut opts = std::mem::take(&mut ctx.opts);
        for (n, v) in [
            ("threads", OptValue::Num(f64::from(r.threads))),
            // sysbench's 0 for "none".
            ("time", OptValue::Num(r.time.unwrap_or(0.0))),
            (
                "events",
                OptValue::Num(r.events.map_or(0.0, |n| n.get() as f64)),
            ),
            ("rate", OptValue::Num(r.rate.unwrap_or(0.0))),
            (
                "report_interval",
                OptValue::Num(r.report_interval.unwrap_or(0.0)),
            ),
            ("warmup_time", OptValue::Num(r.warmup)),
            (
                "rand_type",
                OptValue::Str(format!("{:?}", w.rand.rand_type).to_lowercase()),
            ),
            ("rand_seed", OptValue::Num(w.rand.rand_seed as f64)),
        ] {
            if !opts.iter().any(|(m, _)| m == n) {
                opts.push((n.to_string(), v));
            }
        }
        opts.push((
            "mysql_ignore_errors".into(),
            OptValue::List(ctx.mysql_ignore_errors.clone()),
        ));
        ctx.opts = opts;
        ctx.rand = w.rand.clone();
        ctx.threads = r.threads;
        ctx
    }
}

/// A script's context before its options are known: its source, the command and the words.
fn new_ctx(path: std::path::PathBuf, source: String, command: &str, argv: Vec<String>) -> Ctx {
    Ctx {
        path,
        source,
        command: command.to_string(),
        argv,
        opts: Vec::new(),
        target: None,
        rand: RandOptions {
            rand_type: RandType::Uniform,
            rand_seed: 1,
            rand_zipfian_exp: 0.8,
            rand_pareto_h: 0.2,
            rand_spec_pct: 1.0,
            rand_spec_res: 75.0,
        },
        threads: 1,
        mysql_ignore_errors: MYSQL_IGNORE_DEFAULT.map(String::from).to_vec(),
        legacy: Vec::new(),
        sql_used: Default::default(),
    }
}

/// Loads a script and runs its top level once, as sysbench does with a script and no command,
/// or with a script on standard input (`script` None): nothing else of it runs.
pub fn load_only(
    script: Option<&str>,
    target: Option<Arc<dyn crate::db::Target>>,
) -> Result<(), Error> {
    let (path, source) = match script {
        Some(name) => {
            let path = super::scripts::resolve(name)?;
            let source = crate::input::read_text(&path, crate::input::SCRIPT)
                .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
            (path, source)
        }
        None => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                println!("Reading the script from the standard input:\n");
            }
            let mut source = String::new();
            std::io::Read::read_to_string(
                &mut std::io::Read::take(std::io::stdin(), crate::input::SCRIPT),
                &mut source,
            )
            .map_err(|e| Error::Usage(format!("the script on standard input: {e}")))?;
            (std::path::PathBuf::from("(stdin)"), source)
        }
    };
    let argv = vec![script.unwrap_or("").to_string()];
    let mut ctx = new_ctx(path, source, "", argv);
    ctx.target = target;
    new_state(&Arc::new(ctx), None).map_err(|e| lua_fail(&e))?;
    Ok(())
}

fn read_line(command: &str, script: &str, args: &[String]) -> Result<Option<ScriptLine>, Error> {
    let path = super::scripts::resolve(script)?;
    let source = crate::input::read_text(&path, crate::input::SCRIPT)
        .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    let argv = std::iter::once(script.to_string())
        .chain(args.iter().cloned())
        .collect();
    let mut ctx = new_ctx(path, source, command, argv);
    // The deprecated `--test=SCRIPT` is a legacy script's global `test` from its first line,
    // also while its top level declares its options (it declares none).
    if let Some(test) = args.iter().rev().find_map(|a| a.strip_prefix("--test=")) {
        ctx.legacy = vec![("test".into(), OptValue::Str(test.to_string()))];
    }
    // The top level declares the options; it runs once before they are known.
    let (main, _) = if command == "help" {
        new_state(&Arc::new(ctx.clone()), None)
    } else {
        super::api::declaring_state(&Arc::new(ctx.clone()))
    }
    .map_err(|e| lua_fail(&e))?;
    let declared = declared_options(&main).map_err(|e| lua_fail(&e))?;
    if command == "help" {
        let initial: Vec<(String, OptValue)> =
            declared.iter().map(|o| (o.key(), o.initial())).collect();
        super::options::fill_opts(&main, &initial).map_err(|e| lua_fail(&e))?;
        print_help(&main, script, &declared)?;
        return Ok(None);
    }
    let (script_opts, general) = split_args(args, &declared)?;
    let (mut general, ignore) = crate::cli::sysbench::sysbench_connection(general)?;
    // A script that declares options takes no other but sysbench's and dbsweep's own; one
    // that declares none sees the rest as its globals (below).
    if !declared.is_empty()
        && let Some(bad) = super::options::unknown_option(&general)
    {
        return Err(Error::Worded(format!("invalid option: {bad}")));
    }
    if let Some(list) = ignore {
        ctx.mysql_ignore_errors = list;
    }
    if declared.is_empty() {
        (ctx.legacy, general) = split_legacy(general);
    } else {
        // sysbench's deprecated `--test=SCRIPT` named the script: only a legacy script (one
        // without declared options) sees it, as its global `test`.
        general.retain(|a| !a.starts_with("--test="));
    }
    // The script's defaults, then its options on the command line.
    let mut opts: Vec<(String, OptValue)> =
        declared.iter().map(|o| (o.key(), o.initial())).collect();
    for (n, v) in script_opts {
        opts.retain(|(m, _)| *m != n);
        opts.push((n, v));
    }
    ctx.opts = opts;
    Ok(Some(ScriptLine { ctx, general }))
}
