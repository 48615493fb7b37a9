//! sysbench's command line read as sysbench reads it: aliases, options without effect, config files, and the built-in test or script it names.

use std::path::Path;

use super::output::SysbenchStyle;
use crate::cli::RunArgs;
use crate::cli::sysbench::connection;
use crate::error::{Error, Outcome};
use crate::lua;
use crate::output::Style;

/// Whether the program was started under sysbench's name (`argv[0]` is a `sysbench` link).
pub fn invoked_as_sysbench(argv0: &str) -> bool {
    Path::new(argv0)
        .file_name()
        .is_some_and(|n| n == "sysbench")
}

/// The words of a sysbench command line, taken apart.
#[derive(Debug, Default, PartialEq)]
struct Words {
    options: Vec<String>,
    /// Given as `--test=NAME` (a legacy script sees it as its global `test`).
    by_test_option: bool,
    script: Option<String>,
    command: Option<String>,
}

/// sysbench's grammar: every word starting with `--` is an option (its value only after `=`),
/// the first other word is the script, the second the command; a third is refused as sysbench
/// refuses it. The deprecated `--test=NAME` names the script, with sysbench's warning.
fn words(args: &[String]) -> Result<Words, String> {
    let mut w = Words::default();
    for a in args {
        if let Some(name) = a.strip_prefix("--test=") {
            eprintln!(
                "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options."
            );
            w.script = Some(name.to_string());
            w.by_test_option = true;
        } else if a.starts_with("--") {
            w.options.push(a.clone());
        } else if w.script.is_none() {
            w.script = Some(a.clone());
        } else if w.command.is_none() {
            w.command = Some(a.clone());
        } else {
            return Err(format!("Unrecognized command line argument: {a}"));
        }
    }
    Ok(w)
}

/// An option's name (dashes, not underscores) and its value, if given.
fn split_option(a: &str) -> (String, Option<&str>) {
    let body = a.trim_start_matches("--");
    match body.split_once('=') {
        Some((n, v)) => (n.replace('_', "-"), Some(v)),
        None => (body.replace('_', "-"), None),
    }
}

/// sysbench's older names for options that dbsweep spells as sysbench 1.x does.
const ALIASES: &[(&str, &str)] = &[
    ("max-time", "time"),
    ("max-requests", "events"),
    ("num-threads", "threads"),
    ("tx-rate", "rate"),
    ("db-ps-mode", "ps-mode"),
    ("warmup-time", "warmup"),
];

/// sysbench options that only change what sysbench itself logs or checks, with nothing to
/// change in dbsweep's run: taken and left alone. (`--forced-shutdown`: a dbsweep run ends
/// at its deadline by itself, statements in flight bounded by --query-timeout.)
const NO_EFFECT: &[&str] = &[
    "forced-shutdown",
    "thread-stack-size",
    "debug",
    "validate",
    "db-debug",
    "mysql-debug",
];

/// sysbench options that would change what is measured and that dbsweep does not have.
const UNSUPPORTED: &[&str] = &["mysql-compression", "mysql-ssl-cipher", "rand-spec-iter"];

/// The most checkpoints sysbench takes.
const MAX_CHECKPOINTS: usize = 256;

/// `--report-checkpoints=N[,N...]`: whole seconds, in order; sysbench's words for a bad one.
fn checkpoints(list: &str) -> Result<Vec<u32>, Error> {
    let mut out = Vec::new();
    for v in list.split(',').filter(|v| !v.is_empty()) {
        let n = v
            .parse::<u32>()
            .ok()
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| {
                Error::Usage(format!("Invalid value for --report-checkpoints: '{v}'"))
            })?;
        if out.len() == MAX_CHECKPOINTS {
            return Err(Error::Usage(format!(
                "Too many checkpoints in --report-checkpoints (up to {MAX_CHECKPOINTS} can be defined)"
            )));
        }
        out.push(n);
    }
    out.sort_unstable();
    Ok(out)
}

/// Reads sysbench's `--config-file`: one `name=value` (or `name`) per line, `#` comments.
fn config_file(path: &str) -> Result<Vec<String>, Error> {
    let text = crate::input::read_text(std::path::Path::new(path), crate::input::SMALL)
        .map_err(|e| Error::Usage(format!("--config-file={path}: {e}")))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| format!("--{}", l.trim_start_matches("--")))
        .collect())
}

/// What the sysbench-level options say, and the options left for the run.
struct Options {
    style: SysbenchStyle,
    /// The run's options as the user wrote them (sysbench's names).
    rest: Vec<String>,
    /// A target or a driver named (else sysbench's default driver, MySQL).
    has_target: bool,
    /// `--mysql-dry-run`'s target, in place of the connection options.
    dry_target: Option<&'static str>,
}

fn options(given: Vec<String>) -> Result<Options, Error> {
    let mut style = SysbenchStyle {
        percentile: 95,
        histogram: false,
        seed_given: false,
        verbosity: super::output::NOTICE,
        validate: false,
        checkpoints: &[],
    };
    let mut expanded = Vec::new();
    for a in given {
        match split_option(&a) {
            (n, Some(path)) if n == "config-file" => expanded.extend(config_file(path)?),
            _ => expanded.push(a),
        }
    }
    let mut rest = Vec::new();
    let mut has_target = false;
    let mut dry_run = false;
    for a in expanded {
        let (name, value) = split_option(&a);
        let bad = |what: &str| Error::Usage(format!("{a}: {what}"));
        match name.as_str() {
            "percentile" => {
                style.percentile = value
                    .and_then(|v| v.parse().ok())
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| bad("a whole number from 0 to 100"))?;
            }
            "histogram" => {
                style.histogram = match value.map(str::to_ascii_lowercase).as_deref() {
                    None | Some("on" | "true" | "1") => true,
                    Some("off" | "false" | "0") => false,
                    _ => return Err(bad("not a boolean (on or off)")),
                };
            }
            "mysql-dry-run" => {
                dry_run = !matches!(value, Some("off" | "false" | "0"));
            }
            "validate" => {
                style.validate = !matches!(value, Some("off" | "false" | "0"));
            }
            "report-checkpoints" => {
                // One process, one run: the list lives as long as the process.
                style.checkpoints = Box::leak(checkpoints(value.unwrap_or(""))?.into_boxed_slice());
            }
            "verbosity" => {
                style.verbosity = value
                    .and_then(|v| v.parse().ok())
                    .filter(|v| *v <= 5)
                    .ok_or_else(|| bad("a whole number from 0 to 5"))?;
            }
            n if NO_EFFECT.contains(&n) => {}
            n if UNSUPPORTED.contains(&n) => {
                return Err(bad("sysbench's option is not supported by dbsweep"));
            }
            n => {
                if n == "rand-seed" && value.is_some_and(|v| v != "0") {
                    style.seed_given = true;
                }
                has_target |= n == "target" || n == "db-driver";
                rest.push(a.clone());
            }
        }
    }
    // --mysql-dry-run: every call succeeds without a server (dbsweep's mock target, whose
    // statements answer at once with no rows), whatever the connection options say.
    let mut dry_target = None;
    if dry_run {
        rest = crate::cli::sysbench::connection(rest, false)?.rest;
        rest.retain(|a| split_option(a).0 != "target");
        dry_target = Some("mock://?rows=0");
        has_target = true;
    }
    Ok(Options {
        style,
        rest,
        has_target,
        dry_target,
    })
}

/// dbsweep's name of a sysbench option (`max-time` is `time`).
fn renamed(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new)
}

/// The command line a script or one of sysbench's C tests reads (theirs is one): the options
/// by dbsweep's names, and the dry run's target.
fn script_words(rest: &[String], dry_target: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = rest
        .iter()
        .map(|a| {
            let (name, value) = split_option(a);
            let new = renamed(&name);
            match value {
                _ if new == name => a.clone(),
                Some(v) => format!("--{new}={v}"),
                None => format!("--{new}"),
            }
        })
        .collect();
    if let Some(t) = dry_target {
        out.push(format!("--target={t}"));
    }
    out
}

/// sysbench's built-in tests that dbsweep's workloads of the same name run statement for
/// statement. Another name runs sysbench's script where one is found (`bulk_insert`: dbsweep's
/// sends a statement per row, sysbench's script multi-row statements), else dbsweep's workload.
const SAME_AS_SYSBENCH: &[&str] = &[
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
];

/// What a sysbench command line comes to.
pub enum Dropin {
    /// Answered here: help, version, a script's command.
    Done(Outcome),
    /// A built-in test's prepare, run or cleanup, its options typed.
    Run(Box<Builtin>),
}

/// A built-in test's command, its workload and options, their text in sysbench's style.
pub struct Builtin {
    pub command: BuiltinCommand,
    pub opts: crate::cli::Opts,
    pub style: Style,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BuiltinCommand {
    Prepare,
    Run,
    Cleanup,
}

/// Reads a sysbench command line (the words after `sysbench`) in sysbench's order: its
/// grammar, `--help` and `--version`, the header, then the test (a script on standard input,
/// one of its tests written in C, a built-in workload or a Lua script) and its command.
/// sysbench's own refusals are printed here in its words, with its exit status (1).
pub fn main(args: &[String]) -> Result<Dropin, Error> {
    line_buffered_c_stdout();
    lua::set_process_argv("sysbench", args);
    let failed = || Ok(Dropin::Done(Outcome::Failed));
    let w = match words(args) {
        Ok(w) => w,
        Err(said) => {
            eprintln!("{said}");
            return failed();
        }
    };
    let flag = |name: &str| {
        w.options.iter().any(|a| {
            let (n, v) = split_option(a);
            n == name && !matches!(v, Some("off" | "false" | "0"))
        })
    };
    if flag("help") {
        print!("{}", super::help::usage());
        return Ok(Dropin::Done(Outcome::Done));
    }
    if flag("version") {
        println!("sysbench {}", super::output::VERSION);
        return Ok(Dropin::Done(Outcome::Done));
    }
    let Options {
        style,
        rest: given,
        has_target,
        dry_target,
    } = options(w.options)?;
    let rest = script_words(&given, dry_target);
    // sysbench warns of its deprecated names before its log takes --verbosity.
    for (old, new) in [
        ("num-threads", "threads"),
        ("max-requests", "events"),
        ("max-time", "time"),
        ("tx-rate", "rate"),
    ] {
        if args
            .iter()
            .any(|a| a.starts_with("--") && split_option(a).0 == old)
        {
            println!("WARNING: --{old} is deprecated, use --{new} instead");
        }
    }
    lua::set_verbosity(style.verbosity);
    if style.verbosity >= super::output::NOTICE {
        println!("{}", super::output::banner());
    }
    // No script, or `-`: the script is read from standard input and its top level runs.
    let script = match w.script.as_deref() {
        None | Some("-") => {
            lua::load_only(None, None)?;
            return Ok(Dropin::Done(Outcome::Done));
        }
        Some(s) => s.to_string(),
    };
    let style_ref: &'static SysbenchStyle = Box::leak(Box::new(style));
    if super::ctests::is_ctest(&script) && lua::find_script(&script).is_none() {
        let Some(command) = w.command else {
            eprintln!(
                "The '{script}' test requires a command argument. See 'sysbench {script} help'"
            );
            return failed();
        };
        return super::ctests::main(&script, &command, &rest, style_ref).map(Dropin::Done);
    }
    let script_found = lua::find_script(&script).is_some();
    let builtin_name = crate::workload::is_builtin(&script);
    if !script_found && !builtin_name {
        println!("FATAL: Cannot find benchmark '{script}': no such built-in test, file or module");
        return failed();
    }
    // A script and no command: sysbench loads it (its top level runs) and stops there.
    let Some(command) = w.command else {
        if script_found {
            lua::load_only(Some(&script), script_target(&rest, has_target)?)?;
        }
        return Ok(Dropin::Done(Outcome::Done));
    };
    // One voice for the process's one command.
    let style = Style::As(style_ref);
    // dbsweep's workloads retry what sysbench's default --mysql-ignore-errors ignores; another
    // list is the Lua API's to honour, with sysbench's own script.
    let own_ignore = rest.iter().any(|a| {
        let (n, v) = split_option(a);
        n == "mysql-ignore-errors" && v.is_some_and(|v| v != lua::MYSQL_IGNORE_DEFAULT.join(","))
    });
    let builtin = (SAME_AS_SYSBENCH.contains(&script.as_str()) && !(own_ignore && script_found))
        || (!script_found && builtin_name);
    if builtin && own_ignore {
        return Err(Error::Usage(format!(
            "--mysql-ignore-errors: dbsweep's {script} retries deadlocks and lock wait timeouts only; for another list, install sysbench's {script}.lua (looked in {})",
            lua::SYSBENCH_DIR
        )));
    }
    match command.as_str() {
        "prepare" | "run" | "cleanup" if builtin => {
            let command = match command.as_str() {
                "prepare" => BuiltinCommand::Prepare,
                "run" => BuiltinCommand::Run,
                _ => BuiltinCommand::Cleanup,
            };
            let connection = connection(given, !has_target)?;
            let url = dry_target.map(String::from).or(connection.url);
            let args = run_args(&connection.rest, url)?;
            Ok(Dropin::Run(Box::new(Builtin {
                command,
                opts: crate::cli::Opts {
                    workload: script,
                    args,
                },
                style,
            })))
        }
        // `help` of a built-in shows its sysbench script's options where sysbench is
        // installed (the same options); other commands of a script run in the Lua API.
        _ => {
            let mut rest = rest;
            // sysbench's driver by default (MySQL: a script that never connects leaves no
            // file behind), and no interval lines unless asked.
            if let Some(bad) = rest
                .iter()
                .map(|a| split_option(a))
                .find(|(n, v)| n == "db-driver" && !matches!(*v, Some("mysql" | "pgsql")))
            {
                println!(
                    "FATAL: invalid database driver name: '{}'",
                    bad.1.unwrap_or("")
                );
                println!(
                    "FATAL: `{command}' function failed: {script}: failed to initialize the DB driver"
                );
                return failed();
            }
            let connection = ["mysql-", "pgsql-", "db-driver"];
            if !has_target
                && !rest
                    .iter()
                    .any(|a| connection.iter().any(|c| split_option(a).0.starts_with(c)))
            {
                rest.push("--db-driver=mysql".into());
            }
            if w.by_test_option {
                rest.push(format!("--test={script}"));
            }
            if !rest.iter().any(|a| split_option(a).0 == "report-interval") {
                rest.push("--report-interval=0".into());
            }
            crate::measure::run_script(&command, &script, &rest, style).map(Dropin::Done)
        }
    }
}

/// sysbench's log and a script's `print` share stdout: C's stdio (LuaJIT's `print` and
/// `io.write`) is made line-buffered as Rust's is, so that their lines come out in the order
/// they were written when stdout is a pipe, as sysbench's do.
fn line_buffered_c_stdout() {
    unsafe extern "C" {
        static stdout: *mut libc::FILE;
    }
    // SAFETY: glibc's `stdout` stream, before anything has been written to it.
    unsafe {
        libc::setvbuf(stdout, std::ptr::null_mut(), libc::_IOLBF, 0);
    }
}

/// The run's options from sysbench's, read once into the run's types: each `--name[=value]`
/// by dbsweep's name as a plan's option is read (its value's text as the command line reads
/// it), dbsweep's own connection options (`--target`, `--server`, ...) as the command line
/// reads them, with sysbench's defaults where dbsweep's differ and the user gave none (no
/// interval lines, the special distribution of ids, no ANALYZE after prepare), and the target
/// the connection options describe.
fn run_args(words: &[String], url: Option<String>) -> Result<RunArgs, Error> {
    use clap::{Args, FromArgMatches};
    let run = RunArgs::augment_args(clap::Command::new("run"));
    let db = crate::cli::DbArgs::augment_args(clap::Command::new("sysbench").no_binary_name(true));
    let is = |c: &clap::Command, name: &str| c.get_arguments().any(|a| a.get_long() == Some(name));
    let appends = |name: &str| {
        run.get_arguments().any(|a| {
            a.get_long() == Some(name) && matches!(a.get_action(), clap::ArgAction::Append)
        })
    };
    let mut table = toml::Table::new();
    let mut db_words = Vec::new();
    let mut roles = Vec::new();
    let mut metrics_listen = None;
    let (mut connect, mut query) = (crate::cli::CONNECT_TIMEOUT, crate::cli::QUERY_TIMEOUT);
    for a in words {
        let (name, value) = split_option(a);
        let name = renamed(&name);
        let seconds = |v: Option<&str>| {
            v.and_then(|v| v.trim().parse::<f64>().ok())
                .ok_or_else(|| Error::Usage(format!("--{name}: give a number of seconds")))
        };
        match name {
            "connect-timeout" => connect = seconds(value)?,
            "query-timeout" => query = seconds(value)?,
            "role" => roles.push(
                crate::cli::parse_role(value.unwrap_or_default())
                    .map_err(|e| Error::Usage(format!("--role: {e}")))?,
            ),
            "metrics-listen" => metrics_listen = value.map(String::from),
            n if is(&db, n) => db_words.push(a.clone()),
            n => {
                let v = toml::Value::String(value.unwrap_or("on").to_string());
                match table.get_mut(n) {
                    Some(toml::Value::Array(list)) => list.push(v),
                    _ if appends(n) => {
                        table.insert(n.to_string(), toml::Value::Array(vec![v]));
                    }
                    // The last of a repeated option wins, as on dbsweep's command line.
                    _ => {
                        table.insert(n.to_string(), v);
                    }
                }
            }
        }
    }
    let given = |name: &str| table.contains_key(name);
    let (report_interval, rand_type, analyze) = (
        given("report-interval"),
        given("rand-type"),
        given("analyze"),
    );
    let mut args = crate::plan::sweep_plan::StepOptions {
        table,
        ..Default::default()
    }
    .run_args()
    .map_err(Error::Usage)?;
    if !db_words.is_empty() {
        let matches = db
            .try_get_matches_from(db_words)
            .map_err(|e| crate::cli::one_line(&e))?;
        args.db =
            crate::cli::DbArgs::from_arg_matches(&matches).map_err(|e| crate::cli::one_line(&e))?;
    }
    args.db.timeouts = crate::db::Timeouts::from_seconds(connect, query)?;
    args.role = roles;
    args.metrics_listen = metrics_listen;
    if !report_interval {
        args.report_interval = 0.0;
    }
    if !rand_type {
        args.rand_type = crate::workload::rand::RandType::Special;
    }
    if !analyze {
        args.analyze = false;
    }
    if let Some(url) = url {
        args.db.target = url;
    }
    Ok(args)
}

/// The database a script run with no command reaches (its top level may connect, as under
/// sysbench): the one its connection options name, sysbench's default driver (MySQL) else.
/// Nothing connects until the script does.
fn script_target(
    rest: &[String],
    has_target: bool,
) -> Result<Option<std::sync::Arc<dyn crate::db::Target>>, Error> {
    let given = rest
        .iter()
        .rev()
        .find_map(|a| a.strip_prefix("--target="))
        .map(String::from);
    let Some(url) = connection(rest.to_vec(), !has_target)?.url.or(given) else {
        return Ok(None);
    };
    let o = crate::db::OpenOptions {
        create: true,
        ..Default::default()
    };
    Ok(Some(std::sync::Arc::from(crate::db::open(&url, o)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rand::RandType;

    fn builtin(line: &str) -> Builtin {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        match main(&args).expect("a sysbench line") {
            Dropin::Run(b) => *b,
            Dropin::Done(_) => panic!("not a built-in's command"),
        }
    }

    #[test]
    fn a_builtin_commands_options_are_typed_with_sysbenchs_defaults_where_not_given() {
        let b = builtin("oltp_point_select run --threads=4 --max-time=7");
        assert_eq!(b.command, BuiltinCommand::Run);
        assert_eq!(b.opts.workload, "oltp_point_select");
        assert_eq!((b.opts.threads, b.opts.time), (Some(4), 7.0));
        assert_eq!(b.opts.report_interval, 0.0);
        assert_eq!(b.opts.rand_type, RandType::Special);
        assert!(!b.opts.analyze);
        assert_eq!(b.opts.db.target, "mysql://sbtest@localhost:3306/sbtest");
        let b = builtin(
            "--pgsql-host=/tmp --report-interval=2 --rand-type=uniform --analyze=on \
             --connect-timeout=3 oltp_read_only prepare",
        );
        assert_eq!(b.command, BuiltinCommand::Prepare);
        assert_eq!(b.opts.report_interval, 2.0);
        assert_eq!(b.opts.rand_type, RandType::Uniform);
        assert!(b.opts.analyze);
        assert_eq!(
            b.opts.args.db.timeouts.connect,
            std::time::Duration::from_secs(3)
        );
        // sysbench's default driver is MySQL's, whatever other driver's options are given.
        assert!(
            b.opts.db.target.starts_with("mysql://"),
            "{}",
            b.opts.db.target
        );
        let b = builtin("--db-driver=pgsql --pgsql-port=5433 oltp_delete cleanup");
        assert_eq!(b.opts.db.target, "postgres://sbtest@localhost:5433/sbtest");
        let b = builtin("--target=sqlite://x.db oltp_insert run");
        assert_eq!(b.opts.db.target, "sqlite://x.db");
    }
}
