//! A script's options as sysbench parses them: `sysbench.cmdline.options`, the command line's
//! `--name=value` arguments (and sysbench 1.0's legacy spellings), `sysbench.opt`, and the help.

use mlua::{Function, Lua, Table, Value};

use super::state::OptValue;
use super::state::lua_fail;
use crate::error::Error;

/// An option a script declares in `sysbench.cmdline.options`.
#[derive(Clone, Debug)]
pub struct ScriptOption {
    /// The name as declared (dashes or underscores); `sysbench.opt` has it with underscores.
    pub name: String,
    pub description: String,
    pub default: Option<OptValue>,
    /// The declared type (sysbench.cmdline.ARG_*), else the default's, else a string.
    pub kind: ArgKind,
}

/// sysbench's option types, numbered as its `sysbench.cmdline.ARG_*` are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgKind {
    Bool = 1,
    Int = 2,
    Size = 3,
    Double = 4,
    Str = 5,
    List = 6,
    File = 7,
}

impl ArgKind {
    /// `sysbench.cmdline.ARG_*`'s names and numbers (ARG_NULL 0, ARG_MAX 8 beside them).
    pub const ALL: [(&'static str, ArgKind); 7] = [
        ("ARG_BOOL", ArgKind::Bool),
        ("ARG_INT", ArgKind::Int),
        ("ARG_SIZE", ArgKind::Size),
        ("ARG_DOUBLE", ArgKind::Double),
        ("ARG_STRING", ArgKind::Str),
        ("ARG_LIST", ArgKind::List),
        ("ARG_FILE", ArgKind::File),
    ];

    fn from_number(n: i64) -> Option<ArgKind> {
        Self::ALL
            .iter()
            .find(|(_, k)| *k as i64 == n)
            .map(|(_, k)| *k)
    }

    /// The value of an option of this kind that has no default, as `sysbench.opt` holds it
    /// (sysbench 1.0.20: on for a flag, 0 for a number, an empty list or string).
    fn unset(self) -> OptValue {
        match self {
            ArgKind::Bool => OptValue::Bool(true),
            ArgKind::Int | ArgKind::Size | ArgKind::Double => OptValue::Num(0.0),
            ArgKind::List => OptValue::List(Vec::new()),
            ArgKind::Str | ArgKind::File => OptValue::Str(String::new()),
        }
    }
}

impl ScriptOption {
    /// The option's key in `sysbench.opt`: sysbench turns dashes into underscores.
    pub fn key(&self) -> String {
        self.name.replace('-', "_")
    }

    /// How `help` shows the option's value, as sysbench does.
    fn kind(&self) -> &'static str {
        match self.kind {
            ArgKind::Bool => "[=on|off]",
            ArgKind::Int | ArgKind::Double => "=N",
            ArgKind::Size => "=SIZE",
            ArgKind::List => "=[LIST,...]",
            ArgKind::Str => "=STRING",
            ArgKind::File => "=FILENAME",
        }
    }

    /// What `sysbench.opt` holds when the command line does not give it.
    pub fn initial(&self) -> OptValue {
        self.default.clone().unwrap_or_else(|| self.kind.unset())
    }
}

/// Sets `sysbench.opt` from the parsed options.
pub fn fill_opts(lua: &Lua, opts: &[(String, OptValue)]) -> mlua::Result<()> {
    let sb: Table = lua.globals().get("sysbench")?;
    let opt: Table = sb.get("opt")?;
    for (name, v) in opts {
        opt.set(name.as_str(), opt_value(lua, v)?)?;
    }
    Ok(())
}

pub(super) fn opt_value(lua: &Lua, v: &OptValue) -> mlua::Result<Value> {
    Ok(match v {
        OptValue::Bool(b) => Value::Boolean(*b),
        OptValue::Num(n) => {
            if n.fract() == 0.0 && n.abs() < 9e15 {
                Value::Integer(*n as i64)
            } else {
                Value::Number(*n)
            }
        }
        OptValue::Str(s) => Value::String(lua.create_string(s)?),
        OptValue::List(items) => Value::Table(lua.create_sequence_from(items.clone())?),
    })
}

/// The long option names of `dbsweep run` (with their aliases).
fn run_option_names() -> Vec<String> {
    use clap::CommandFactory;
    let cli = crate::cli::Cli::command();
    let Some(run) = cli.find_subcommand("run") else {
        return Vec::new();
    };
    run.get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The first word of `general` that names an option neither `dbsweep run` nor sysbench has.
pub(super) fn unknown_option(general: &[String]) -> Option<String> {
    let known = run_option_names();
    general
        .iter()
        .filter(|a| a.starts_with("--"))
        .find(|a| {
            let body = &a[2..];
            let name = body.split('=').next().unwrap_or(body).replace('_', "-");
            !known.contains(&name)
                && !SYSBENCH_OPTIONS.contains(&name.replace('-', "_").as_str())
                && name != "test"
        })
        .cloned()
}

/// For a script that declares no options: takes the options `dbsweep run` does not know out
/// of `general` (numbers as numbers, anything else as text).
pub(super) fn split_legacy(general: Vec<String>) -> (Vec<(String, OptValue)>, Vec<String>) {
    let known = run_option_names();
    let mut legacy = Vec::new();
    let mut rest = Vec::new();
    let mut it = general.into_iter().peekable();
    while let Some(a) = it.next() {
        let Some(body) = a.strip_prefix("--") else {
            rest.push(a);
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n.replace('_', "-"), Some(v.to_string())),
            None => (body.replace('_', "-"), None),
        };
        if known.contains(&name) {
            rest.push(a);
            continue;
        }
        let value = inline
            .or_else(|| it.next_if(|n| !n.starts_with("--")))
            .unwrap_or_else(|| "on".into());
        let v = value
            .parse::<f64>()
            .map_or(OptValue::Str(value), OptValue::Num);
        legacy.retain(|(n, _): &(String, OptValue)| *n != name.replace('-', "_"));
        legacy.push((name.replace('-', "_"), v));
    }
    (legacy, rest)
}

/// The options a script declares, in name order.
pub fn declared_options(lua: &Lua) -> mlua::Result<Vec<ScriptOption>> {
    let sb: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sb.get("cmdline")?;
    let options = match cmdline.get::<Value>("options")? {
        Value::Nil => return Ok(Vec::new()),
        Value::Table(t) => t,
        other => {
            return Err(structure(&format!(
                "wrong type for sysbench.cmdline.options: {}",
                other.type_name()
            )));
        }
    };
    let mut out = Vec::new();
    for pair in options.pairs::<Value, Value>() {
        let (name, def) = pair?;
        let (Value::String(name), Value::Table(def)) = (name, def) else {
            return Err(structure(
                "wrong table structure in sysbench.cmdline.options",
            ));
        };
        let name = name.to_str()?.to_string();
        let description: Option<String> = def.get(1)?;
        let Some(description) = description else {
            return Err(structure(&format!("nil description for option {name}")));
        };
        let default = match def.get::<Value>(2)? {
            Value::Boolean(b) => Some(OptValue::Bool(b)),
            Value::Integer(i) => Some(OptValue::Num(i as f64)),
            Value::Number(n) => Some(OptValue::Num(n)),
            Value::String(s) => Some(OptValue::Str(s.to_str()?.to_string())),
            Value::Table(t) => Some(OptValue::List(
                t.sequence_values::<String>().collect::<mlua::Result<_>>()?,
            )),
            _ => None,
        };
        let declared = match def.get::<Value>(3)? {
            Value::Integer(n) => ArgKind::from_number(n),
            Value::Number(n) => ArgKind::from_number(n as i64),
            _ => None,
        };
        let kind = declared.unwrap_or(match &default {
            Some(OptValue::Bool(_)) => ArgKind::Bool,
            Some(OptValue::Num(_)) => ArgKind::Double,
            Some(OptValue::List(_)) => ArgKind::List,
            Some(OptValue::Str(_)) | None => ArgKind::Str,
        });
        out.push(ScriptOption {
            name,
            description,
            default,
            kind,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// sysbench's words for a malformed `sysbench.cmdline.options` (its reader is a Lua function
/// of its own, which it names).
fn structure(what: &str) -> mlua::Error {
    mlua::Error::runtime(format!(
        "`sysbench.cmdline.read_cmdline_options' function failed: [string \"sysbench.cmdline.lua\"]:1: {what}"
    ))
}

/// `sysbench.cmdline.print_test_options()`: the declared options, as `help` lays them out.
pub fn print_test_options(lua: &Lua) -> mlua::Result<()> {
    let declared = declared_options(lua)?;
    println!("{}", options_help(&declared));
    Ok(())
}

/// Parses `value` as the type of the option's default (sysbench's rules: on/off booleans,
/// numbers, comma-separated lists).
fn parse_value(opt: &ScriptOption, value: &str) -> Result<OptValue, Error> {
    // sysbench's words for a value its option cannot take.
    let bad = |_what: &str| {
        Error::Worded(format!(
            "invalid option: --{}={value}",
            opt.name.replace('_', "-")
        ))
    };
    Ok(match &Some(opt.initial()) {
        Some(OptValue::Bool(_)) => match value.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" => OptValue::Bool(true),
            "off" | "false" | "no" | "0" => OptValue::Bool(false),
            _ => return Err(bad("not a boolean (use on or off)")),
        },
        Some(OptValue::Num(_)) => OptValue::Num(value.parse().map_err(|_| bad("not a number"))?),
        Some(OptValue::List(_)) => OptValue::List(value.split(',').map(str::to_string).collect()),
        _ => OptValue::Str(value.to_string()),
    })
}

/// Script options as given on the command line, in order.
pub type ScriptOpts = Vec<(String, OptValue)>;

/// Splits a script's command line into its own options (declared by the script) and dbsweep's
/// (everything else, for `dbsweep run`'s parser). `--name=value` and `--name value`, dashes or
/// underscores, as sysbench accepts them.
pub fn split_args(
    args: &[String],
    declared: &[ScriptOption],
) -> Result<(ScriptOpts, Vec<String>), Error> {
    let mut script = Vec::new();
    let mut general = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(rest) = a.strip_prefix("--") else {
            general.push(a.clone());
            continue;
        };
        let (name, inline) = match rest.split_once('=') {
            Some((n, v)) => (n.replace('-', "_"), Some(v.to_string())),
            None => (rest.replace('-', "_"), None),
        };
        let builtin = SYSBENCH_OPTIONS.contains(&name.as_str());
        let Some(opt) = declared.iter().find(|o| !builtin && o.key() == name) else {
            general.push(a.clone());
            if inline.is_none()
                && let Some(next) = args.get(i)
                && !next.starts_with("--")
            {
                general.push(next.clone());
                i += 1;
            }
            continue;
        };
        let boolean = opt.kind == ArgKind::Bool;
        let value = match inline {
            Some(v) => v,
            // A boolean never takes the next word: `--skip-trx run` is on, then the command.
            None if boolean => "on".into(),
            None => match args.get(i) {
                Some(next) if !next.starts_with("--") => {
                    i += 1;
                    next.clone()
                }
                _ => {
                    return Err(Error::Usage(format!(
                        "--{}: needs a value",
                        name.replace('_', "-")
                    )));
                }
            },
        };
        script.retain(|(n, _): &(String, OptValue)| *n != name);
        script.push((name, parse_value(opt, &value)?));
    }
    Ok((script, general))
}

/// `help`: the script's own, or its options under its name as given (sysbench's layout).
pub(super) fn print_help(main: &Lua, script: &str, declared: &[ScriptOption]) -> Result<(), Error> {
    if let Ok(help) = main.globals().get::<Function>("help") {
        help.call::<()>(()).map_err(|e| lua_fail(&e))?;
        return Ok(());
    }
    if declared.is_empty() {
        return Err(Error::Worded(format!(
            "'{script}' test does not implement the 'help' command."
        )));
    }
    let given = std::path::Path::new(script);
    let name = given
        .file_name()
        .unwrap_or(given.as_os_str())
        .to_string_lossy();
    println!("{name} options:");
    println!("{}", options_help(declared));
    Ok(())
}

/// The options of `help`, as sysbench lays them out: `--name` and the kind of value in a
/// column as wide as the widest, the description, the default.
fn options_help(declared: &[ScriptOption]) -> String {
    let heads: Vec<String> = declared
        .iter()
        .map(|o| format!("--{}{}", o.name, o.kind()))
        .collect();
    // Bounded: a script's option name can be of any length (and a format width past 65,535
    // panics); a longer one is printed whole, unaligned.
    let width = (heads.iter().map(String::len).max().unwrap_or(0) + 1).min(80);
    let mut out = String::new();
    for (o, head) in declared.iter().zip(&heads) {
        let default = match &o.default {
            Some(OptValue::Bool(b)) => format!(" [{}]", if *b { "on" } else { "off" }),
            Some(OptValue::Num(n)) => format!(" [{n}]"),
            Some(OptValue::Str(s)) => format!(" [{s}]"),
            Some(OptValue::List(l)) => format!(" [{}]", l.join(",")),
            None => String::new(),
        };
        out.push_str(&format!("  {head:<width$}{}{default}\n", o.description));
    }
    out
}

/// sysbench's own options: a script option of one of these names does not take the value
/// from the command line, which sets sysbench's (`--threads=2` runs two threads).
pub(super) const SYSBENCH_OPTIONS: &[&str] = &[
    "threads",
    "events",
    "time",
    "warmup_time",
    "forced_shutdown",
    "thread_stack_size",
    "rate",
    "report_interval",
    "report_checkpoints",
    "debug",
    "validate",
    "help",
    "version",
    "config_file",
    "tx_rate",
    "max_requests",
    "max_time",
    "num_threads",
    "rand_type",
    "rand_spec_iter",
    "rand_spec_pct",
    "rand_spec_res",
    "rand_seed",
    "rand_pareto_h",
    "rand_zipfian_exp",
    "verbosity",
    "percentile",
    "histogram",
    "db_driver",
    "db_ps_mode",
    "db_debug",
];
