//! The `sysbench` table of a Lua state (cmdline, opt, rand, sql, hooks) and sysbench 1.0's
//! old-style globals, over dbsweep's targets; and the commands of a script (help, prepare,
//! cleanup, run, its own).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use clap::Parser;
use mlua::{
    AnyUserData, Function, Lua, MultiValue, Table, UserData, UserDataFields, UserDataMethods,
    Value, Variadic,
};

use crate::db::QueryCounts;
use crate::db::{Conn, DbError, Dialect, ErrorClass, Param, StmtId, Target};
use crate::error::Error;
use crate::workload::rand::{Dist, Rand, RandOptions, RandType};
use crate::workload::{EventLoop, Next};
use crate::{Outcome, plan::RunPlan};

/// A value of `sysbench.opt`.
#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<String>),
}

/// An option a script declares in `sysbench.cmdline.options`.
#[derive(Clone, Debug)]
pub struct ScriptOption {
    /// The name as declared (dashes or underscores); `sysbench.opt` has it with underscores.
    pub name: String,
    pub description: String,
    pub default: Option<OptValue>,
}

impl ScriptOption {
    /// The option's key in `sysbench.opt`: sysbench turns dashes into underscores.
    pub fn key(&self) -> String {
        self.name.replace('-', "_")
    }

    /// How `help` shows the option's value, as sysbench does.
    fn kind(&self) -> &'static str {
        match &self.default {
            Some(OptValue::Bool(_)) => "[=on|off]",
            Some(OptValue::Num(_)) => "=N",
            Some(OptValue::List(_)) => "=[LIST,...]",
            Some(OptValue::Str(_)) | None => "=STRING",
        }
    }
}

/// sysbench's own options: a script option of one of these names does not take the value
/// from the command line, which sets sysbench's (`--threads=2` runs two threads).
const SYSBENCH_OPTIONS: &[&str] = &[
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

/// What every state of a script's run shares: the script, its options, the database.
#[derive(Clone)]
pub struct Ctx {
    pub path: PathBuf,
    pub source: String,
    pub command: String,
    pub argv: Vec<String>,
    /// `sysbench.opt`, dashes as underscores.
    pub opts: Vec<(String, OptValue)>,
    pub target: Option<Arc<dyn Target>>,
    pub rand: RandOptions,
    pub threads: u32,
    /// `--mysql-ignore-errors`: MySQL error numbers that restart the event ("all": any error).
    pub mysql_ignore_errors: Vec<String>,
    /// A script that declares no options (sysbench 0.5 style) gets every option dbsweep does not
    /// know as a global variable, as sysbench exported them.
    pub legacy: Vec<(String, OptValue)>,
}

/// sysbench's default `--mysql-ignore-errors`: deadlock, record changed, lock wait timeout.
pub const MYSQL_IGNORE_DEFAULT: [&str; 3] = ["1213", "1020", "1205"];

/// The PostgreSQL errors sysbench's pgsql driver treats as ignorable: deadlock, serialization
/// failure, duplicate key.
const PGSQL_IGNORABLE: [&str; 3] = ["40P01", "40001", "23505"];

/// sysbench.error.RESTART_EVENT.
const RESTART_EVENT: i64 = 1;

/// The last error that restarted an event: what `before_restart_event` receives.
#[derive(Clone, Debug, Default)]
pub struct Restart {
    pub errno: i64,
    pub state: String,
    pub message: String,
    pub query: String,
}

/// Per-state data the API's functions share (a state lives on one thread).
pub struct StateData {
    pub ctx: Arc<Ctx>,
    pub counts: Cell<QueryCounts>,
    pub rand: RefCell<Rand>,
    dists: RefCell<HashMap<(u8, u64), Dist>>,
    unique: Cell<u64>,
    /// Set when a statement failed with an ignorable error (the event restarts).
    pub restart: RefCell<Option<Restart>>,
    /// The connections this state opened, for their page cache counters.
    conns: RefCell<Vec<std::rc::Weak<RefCell<ConnState>>>>,
}

impl StateData {
    /// The summed page cache counters of this state's open connections (SQLite keeps them
    /// per connection); None where the server keeps them.
    pub fn cache_counters(&self, reset: bool) -> Option<[u64; 3]> {
        let mut sum: Option<[u64; 3]> = None;
        for c in self
            .conns
            .borrow()
            .iter()
            .filter_map(std::rc::Weak::upgrade)
        {
            let mut st = c.borrow_mut();
            if let Some(v) = st.conn.as_mut().and_then(|c| c.cache_counters(reset)) {
                let s = sum.get_or_insert([0; 3]);
                for (a, b) in s.iter_mut().zip(v) {
                    *a += b;
                }
            }
        }
        sum
    }
}

/// The C declarations sysbench's own Lua code makes, which scripts use through `ffi.C`.
const FFI_CDEF: &str = "
typedef enum {
  SB_CNT_OTHER, SB_CNT_READ, SB_CNT_WRITE, SB_CNT_TRX, SB_CNT_ERROR, SB_CNT_RECONNECT, SB_CNT_MAX
} sb_counter_type;
void sb_counter_inc(int thread_id, sb_counter_type type);
bool sb_more_events(int thread_id);
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
int usleep(unsigned int microseconds);
";

thread_local! {
    /// What `sb_counter_inc` counted on this thread since the last look: other, read, write,
    /// transactions, errors, reconnects (sysbench's counter numbers).
    static FFI_COUNTS: Cell<[u64; 6]> = const { Cell::new([0; 6]) };
}

/// sysbench's `sb_counter_inc`, for scripts that count their own queries, transactions,
/// errors (TPC-C scripts count their deliberate New-Order rollbacks so) and reconnects
/// through the FFI: added to dbsweep's own counts, as sysbench adds them to its.
#[unsafe(no_mangle)]
pub extern "C" fn sb_counter_inc(_thread_id: std::ffi::c_int, counter: std::ffi::c_int) {
    if let Ok(i @ 0..=5) = usize::try_from(counter) {
        FFI_COUNTS.with(|c| {
            let mut v = c.get();
            v[i] += 1;
            c.set(v);
        });
    }
}

/// Adds what `sb_counter_inc` counted on this thread into `q`, and starts again from zero.
pub fn take_ffi_counts(q: &mut QueryCounts) {
    let [other, read, write, trx, errors, reconnects] = FFI_COUNTS.with(|c| c.replace([0; 6]));
    q.others += other;
    q.reads += read;
    q.writes += write;
    q.script_events += trx;
    q.script_errors += errors;
    q.script_reconnects += reconnects;
}

/// The loop a script's `thread_run` drives on this thread, while it runs.
struct ScriptLoop {
    /// Valid while `with_own_loop` runs, which is the only time this is set.
    ctl: *mut (dyn EventLoop + 'static),
    data: Rc<StateData>,
}

thread_local! {
    static OWN_LOOP: RefCell<Option<ScriptLoop>> = const { RefCell::new(None) };
}

/// Runs `f` (the script's `thread_run`) with `ctl` behind this thread's `sb_more_events`,
/// `sb_event_start` and `sb_event_stop`, as sysbench's own loop has them.
pub fn with_own_loop<R>(ctl: &mut dyn EventLoop, data: &Rc<StateData>, f: impl FnOnce() -> R) -> R {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            OWN_LOOP.with(|l| l.borrow_mut().take());
        }
    }
    // SAFETY: the pointer is only dereferenced by the FFI functions below, on this thread,
    // while `f` runs; `Clear` removes it before `ctl`'s borrow ends, on every exit path.
    let ctl: *mut (dyn EventLoop + 'static) = unsafe {
        std::mem::transmute::<*mut (dyn EventLoop + '_), *mut (dyn EventLoop + 'static)>(ctl)
    };
    OWN_LOOP.with(|l| {
        *l.borrow_mut() = Some(ScriptLoop {
            ctl,
            data: data.clone(),
        })
    });
    let _clear = Clear;
    f()
}

/// Calls `f` with the loop of this thread's `thread_run`, if one is running.
fn own_loop<R>(f: impl FnOnce(&mut dyn EventLoop, &StateData) -> R) -> Option<R> {
    OWN_LOOP.with(|l| {
        let l = l.borrow();
        let l = l.as_ref()?;
        // SAFETY: see `with_own_loop`: set only while the loop's owner waits for `thread_run`,
        // on this thread; the calls below never re-enter one another.
        Some(f(unsafe { &mut *l.ctl }, &l.data))
    })
}

/// sysbench's `sb_more_events`: whether the script's own loop runs another event (the
/// runner's pacing, deadline and event limit decide). False outside a `thread_run`.
#[unsafe(no_mangle)]
pub extern "C" fn sb_more_events(_thread_id: std::ffi::c_int) -> bool {
    own_loop(|ctl, data| match ctl.next() {
        Next::Done => false,
        Next::Run => true,
        Next::RunFirstMeasured => {
            data.cache_counters(true);
            true
        }
    })
    .unwrap_or(false)
}

/// sysbench's `sb_event_start`: the event's clock starts, its query counts from zero.
#[unsafe(no_mangle)]
pub extern "C" fn sb_event_start(_thread_id: std::ffi::c_int) {
    own_loop(|ctl, data| {
        data.counts.set(QueryCounts::default());
        take_ffi_counts(&mut QueryCounts::default());
        ctl.start();
    });
}

/// sysbench's `sb_event_stop`: the event ends with the queries counted since it started.
#[unsafe(no_mangle)]
pub extern "C" fn sb_event_stop(_thread_id: std::ffi::c_int) {
    own_loop(|ctl, data| {
        let mut q = data.counts.get();
        take_ffi_counts(&mut q);
        ctl.stop(&q);
    });
}

/// sysbench's marker for a command that runs in every thread's state.
const PARALLEL_COMMAND: i64 = 1;

/// Lua's `print` and errors name the script by its path; a leading `#!` line is blanked so that
/// the chunk parses and line numbers stay right.
fn chunk_source(source: &str) -> String {
    if source.starts_with('#') {
        let end = source.find('\n').unwrap_or(source.len());
        format!("--{}", &source[end..])
    } else {
        source.to_string()
    }
}

/// A new state for thread `tid` (None: the main state), with the script's top level run.
pub fn new_state(ctx: &Arc<Ctx>, tid: Option<u32>) -> mlua::Result<(Lua, Rc<StateData>)> {
    // SAFETY: sysbench scripts may use LuaJIT's ffi and jit libraries, which the safe
    // constructor leaves out; the scripts are the user's own code, as with sysbench.
    let lua = unsafe { Lua::unsafe_new() };
    let thread = tid.unwrap_or(0);
    let data = Rc::new(StateData {
        ctx: ctx.clone(),
        counts: Cell::new(QueryCounts::default()),
        rand: RefCell::new(Rand::for_thread(
            ctx.rand.rand_seed,
            tid.map_or(u32::MAX, |t| t),
        )),
        dists: RefCell::new(HashMap::new()),
        unique: Cell::new(u64::from(thread) << 32),
        restart: RefCell::new(None),
        conns: RefCell::new(Vec::new()),
    });
    let dir = ctx
        .path
        .parent()
        .map(|d| d.display().to_string())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ".".into());
    let package: Table = lua.globals().get("package")?;
    let path: String = package.get("path")?;
    package.set(
        "path",
        format!("{dir}/?.lua;./?.lua;{}/?.lua;{path}", super::SYSBENCH_DIR),
    )?;
    install(&lua, &data, thread)?;
    // The symbols must stay in the binary for `ffi.C` to find them.
    std::hint::black_box(sb_counter_inc as extern "C" fn(std::ffi::c_int, std::ffi::c_int));
    std::hint::black_box(sb_more_events as extern "C" fn(std::ffi::c_int) -> bool);
    std::hint::black_box(sb_event_start as extern "C" fn(std::ffi::c_int));
    std::hint::black_box(sb_event_stop as extern "C" fn(std::ffi::c_int));
    lua.load(format!("require('ffi').cdef[[{FFI_CDEF}]]"))
        .set_name("=dbsweep-ffi")
        .exec()?;
    lua.load(chunk_source(&ctx.source))
        .set_name(format!("@{}", ctx.path.display()))
        .exec()?;
    fill_opts(&lua, &ctx.opts)?;
    let g = lua.globals();
    for (name, v) in &ctx.legacy {
        g.set(name.as_str(), opt_value(&lua, v)?)?;
    }
    if let Some(t) = &ctx.target {
        g.set("db_driver", driver_name(t.dialect()))?;
    }
    Ok((lua, data))
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

fn opt_value(lua: &Lua, v: &OptValue) -> mlua::Result<Value> {
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

/// For a script that declares no options: takes the options `dbsweep run` does not know out
/// of `general` (numbers as numbers, anything else as text).
fn split_legacy(general: Vec<String>) -> (Vec<(String, OptValue)>, Vec<String>) {
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

fn install(lua: &Lua, data: &Rc<StateData>, tid: u32) -> mlua::Result<()> {
    let g = lua.globals();
    let sb = lua.create_table()?;
    sb.set("version", "1.0.20 (dbsweep)")?;
    sb.set("tid", tid)?;
    sb.set("opt", lua.create_table()?)?;
    sb.set("hooks", lua.create_table()?)?;
    let err = lua.create_table()?;
    err.set("NONE", 0)?;
    err.set("RESTART_EVENT", 1)?;
    err.set("FAILED", 2)?;
    sb.set("error", err)?;

    let ctx = &data.ctx;
    let cmdline = lua.create_table()?;
    cmdline.set("options", lua.create_table()?)?;
    cmdline.set("commands", lua.create_table()?)?;
    cmdline.set("PARALLEL_COMMAND", PARALLEL_COMMAND)?;
    cmdline.set("script_path", ctx.path.display().to_string())?;
    cmdline.set("argv", lua.create_sequence_from(ctx.argv.clone())?)?;
    if !ctx.command.is_empty() {
        cmdline.set("command", ctx.command.as_str())?;
    }
    sb.set("cmdline", cmdline)?;

    install_rand(lua, &sb, data)?;
    install_sql(lua, &sb, data)?;
    g.set("sysbench", sb)?;
    lua.load(REPORTS).set_name("=dbsweep-reports").exec()?;
    lua.load(OLD_GLOBALS).set_name("=dbsweep-compat").exec()?;
    Ok(())
}

fn install_rand(lua: &Lua, sb: &Table, data: &Rc<StateData>) -> mlua::Result<()> {
    let rand = lua.create_table()?;
    let with = |ty: Option<RandType>| {
        let d = data.clone();
        lua.create_function(move |_, (a, b): (i64, i64)| {
            let opts = &d.ctx.rand;
            let ty = ty.unwrap_or(opts.rand_type);
            let (lo, hi) = (a.min(b), a.max(b));
            let n = (hi - lo) as u64 + 1;
            let mut r = d.rand.borrow_mut();
            if ty == RandType::Uniform {
                return Ok(lo + r.uniform(0, n - 1) as i64);
            }
            let mut dists = d.dists.borrow_mut();
            let dist = dists.entry((ty as u8, n)).or_insert_with(|| {
                let mut o = opts.clone();
                o.rand_type = ty;
                Dist::new(&o, n)
            });
            Ok(lo + r.draw(dist, 1, n) as i64 - 1)
        })
    };
    rand.set("default", with(None)?)?;
    rand.set("uniform", with(Some(RandType::Uniform))?)?;
    rand.set("gaussian", with(Some(RandType::Gaussian))?)?;
    rand.set("special", with(Some(RandType::Special))?)?;
    rand.set("pareto", with(Some(RandType::Pareto))?)?;
    rand.set("zipfian", with(Some(RandType::Zipfian))?)?;
    let d = data.clone();
    rand.set(
        "unique",
        lua.create_function(move |_, ()| {
            // Distinct per state and per call: the thread number in the high bits.
            let v = d.unique.get();
            d.unique.set(v + 1);
            Ok((v & 0xFFFF_FFFF) as i64
                ^ ((v >> 32) as i64).wrapping_mul(0x9E37_79B9) & 0xFFFF_FFFF)
        })?,
    )?;
    let d = data.clone();
    rand.set(
        "string",
        lua.create_function(move |_, template: String| {
            let mut s = String::with_capacity(template.len());
            d.rand.borrow_mut().fill_template(&template, &mut s);
            Ok(s)
        })?,
    )?;
    let d = data.clone();
    rand.set(
        "varstring",
        lua.create_function(move |_, (lo, hi): (u64, u64)| {
            let mut r = d.rand.borrow_mut();
            let n = r.uniform(lo.min(hi), lo.max(hi));
            let template: String = (0..n).map(|_| '@').collect();
            let mut s = String::new();
            r.fill_template(&template, &mut s);
            Ok(s)
        })?,
    )?;
    let d = data.clone();
    rand.set(
        "uniform_double",
        lua.create_function(move |_, ()| Ok(d.rand.borrow_mut().unit()))?,
    )?;
    let d = data.clone();
    rand.set(
        "uniform_uint64",
        lua.create_function(move |_, ()| {
            Ok(d.rand.borrow_mut().uniform(0, i64::MAX as u64) as i64)
        })?,
    )?;
    sb.set("rand", rand)
}

/// Whether a statement returns a result set, by its first word.
fn returns_rows(sql: &str) -> bool {
    let word: String = sql
        .trim_start_matches(|c: char| c.is_whitespace() || c == '(')
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect::<String>()
        .to_ascii_uppercase();
    matches!(
        word.as_str(),
        "SELECT"
            | "SHOW"
            | "WITH"
            | "VALUES"
            | "EXPLAIN"
            | "DESCRIBE"
            | "DESC"
            | "CHECK"
            | "ANALYZE"
    )
}

/// What the script's `sysbench.hooks.sql_error_ignorable(err)` says of an error (false when
/// it has no such hook).
fn hook_says_ignorable(lua: &Lua, r: &Restart) -> mlua::Result<bool> {
    let said = call_hook(lua, "sql_error_ignorable", restart_table(lua, r)?)?;
    Ok(said.is_some_and(|v| !matches!(v, Value::Nil | Value::Boolean(false))))
}

/// Calls `sysbench.hooks.NAME(arg)` if the script set that hook; None when it did not.
pub fn call_hook(lua: &Lua, name: &str, arg: Table) -> mlua::Result<Option<Value>> {
    let hooks: Table = lua.globals().get::<Table>("sysbench")?.get("hooks")?;
    match hooks.get::<Value>(name)? {
        Value::Function(f) => {
            let r = f.call::<Value>(arg).map(Some);
            flush_lua_output();
            r
        }
        _ => Ok(None),
    }
}

/// Lua's `print` and `io.write` go through C's stdio buffer, dbsweep's own output does not:
/// flushing after each script function keeps the two in order when stdout is a pipe or file.
pub fn flush_lua_output() {
    // SAFETY: fflush(NULL) flushes every C output stream; no pointer is dereferenced.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// sysbench's error description table: errcode, sql_errno, sql_state, sql_errmsg, query.
pub fn restart_table(lua: &Lua, r: &Restart) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("errcode", RESTART_EVENT)?;
    t.set("sql_errno", r.errno)?;
    t.set("sql_state", r.state.as_str())?;
    t.set("sql_errmsg", r.message.as_str())?;
    t.set("query", r.query.as_str())?;
    Ok(t)
}

/// The statistics a report hook receives, as sysbench fills them: counts over the interval
/// (or the whole run), seconds, latencies in seconds.
pub struct Stat {
    pub threads_running: u32,
    pub time_interval: f64,
    pub time_total: f64,
    pub events: f64,
    pub reads: f64,
    pub writes: f64,
    pub other: f64,
    pub errors: f64,
    pub reconnects: f64,
    /// At the report percentile (95th).
    pub latency_pct: f64,
    /// Cumulative reports: min, max, avg, sum.
    pub latency: Option<[f64; 4]>,
}

impl Stat {
    pub fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        let t = lua.create_table()?;
        t.set("threads_running", self.threads_running)?;
        t.set("time_interval", self.time_interval)?;
        t.set("time_total", self.time_total)?;
        t.set("events", self.events)?;
        t.set("reads", self.reads)?;
        t.set("writes", self.writes)?;
        t.set("other", self.other)?;
        t.set("errors", self.errors)?;
        t.set("reconnects", self.reconnects)?;
        t.set("latency_pct", self.latency_pct)?;
        if let Some([min, max, avg, sum]) = self.latency {
            t.set("latency_min", min)?;
            t.set("latency_max", max)?;
            t.set("latency_avg", avg)?;
            t.set("latency_sum", sum)?;
        }
        Ok(t)
    }
}

/// sysbench's report functions, for scripts that set them as hooks (for example
/// `sysbench.hooks.report_intermediate = sysbench.report_json`) or call them from their own:
/// the same lines sysbench prints, so that tools which parse them keep working.
const REPORTS: &str = r#"
local function rates(stat)
  local s = stat.time_interval
  if s <= 0 then s = 1 end
  return stat.events / s, (stat.reads + stat.writes + stat.other) / s,
    stat.reads / s, stat.writes / s, stat.other / s, stat.errors / s, stat.reconnects / s
end

function sysbench.report_default(stat)
  local tps, qps, r, w, o, err, rec = rates(stat)
  print(string.format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) " ..
    "lat (ms,%u%%): %4.2f err/s %4.2f reconn/s: %4.2f", stat.time_total, stat.threads_running,
    tps, qps, r, w, o, sysbench.opt.percentile or 95, stat.latency_pct * 1000, err, rec))
end

function sysbench.report_csv(stat)
  local tps, qps, r, w, o, err, rec = rates(stat)
  print(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
    stat.time_total, stat.threads_running, tps, qps, r, w, o, stat.latency_pct * 1000, err, rec))
end

-- One JSON array over all calls: "[" before the first object, "," between, "]" when the
-- state closes.
local json_open = nil
function sysbench.report_json(stat)
  local tps, qps, r, w, o, err, rec = rates(stat)
  if json_open == nil then
    io.write("[\n")
    json_open = newproxy(true)
    getmetatable(json_open).__gc = function() io.write("\n]\n") io.flush() end
  else
    io.write(",\n")
  end
  io.write(string.format('  {\n    "time": %4.0f,\n    "threads": %u,\n    "tps": %4.2f,\n' ..
    '    "qps": {\n      "total": %4.2f,\n      "reads": %4.2f,\n      "writes": %4.2f,\n' ..
    '      "other": %4.2f\n    },\n    "latency": %4.2f,\n    "errors": %4.2f,\n' ..
    '    "reconnects": %4.2f\n  }', stat.time_total, stat.threads_running, tps, qps, r, w, o,
    stat.latency_pct * 1000, err, rec))
  io.flush()
end
"#;

/// sysbench 1.0's old-style globals (the 0.5 API) for older scripts, over the `sysbench.*`
/// API: one connection per state, opened on first use; `db_bind_param` binds a table whose
/// values are read at each `db_execute`, as the old API bound Lua variables.
const OLD_GLOBALS: &str = r#"
thread_id = sysbench.tid
sb_rand = sysbench.rand.default
sb_rand_str = sysbench.rand.string
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
function sb_rnd() return tonumber(sysbench.rand.uniform_uint64() % 4294967296) end
function sb_rand_uniq(a, b)
  a = a or 0
  b = b or 4294967295
  local v
  repeat v = sysbench.rand.unique() until v >= a and v <= b
  return v
end

DB_ERROR_NONE = sysbench.error.NONE
DB_ERROR_RESTART_TRANSACTION = sysbench.error.RESTART_EVENT
DB_ERROR_FAILED = sysbench.error.FAILED
mysql_table_engine = mysql_table_engine or "innodb"
myisam_max_rows = 1000000

local old_con = nil
local function con()
  if old_con == nil then old_con = sysbench.sql.driver():connect() end
  return old_con
end
function db_connect() con() end
function db_disconnect()
  if old_con ~= nil then old_con:disconnect() old_con = nil end
end
function db_query(sql) return con():query(sql) end
function db_bulk_insert_init(prefix) con():bulk_insert_init(prefix) end
function db_bulk_insert_next(values) con():bulk_insert_next(values) end
function db_bulk_insert_done() con():bulk_insert_done() end
function db_prepare(sql) return { stmt = con():prepare(sql) } end
function db_bind_param(st, values)
  st.values = values
  st.params = {}
  for i = 1, #values do
    local ty = type(values[i]) == "number" and sysbench.sql.type.BIGINT or sysbench.sql.type.VARCHAR
    st.params[i] = st.stmt:bind_create(ty)
  end
  st.stmt:bind_param(unpack(st.params))
end
function db_bind_result() end
function db_execute(st)
  if st.values ~= nil then
    for i = 1, #st.params do st.params[i]:set(st.values[i]) end
  end
  return st.stmt:execute()
end
function db_close(st) st.stmt:close() end
function db_store_results(rs) return rs end
function db_free_results(rs) end
"#;

/// A Lua error carrying the database error, so that the runner sees its class.
fn sql_error(e: DbError) -> mlua::Error {
    mlua::Error::external(e)
}

/// The database error inside a Lua error, if one caused it.
pub fn db_error_of(e: &mlua::Error) -> Option<DbError> {
    match e {
        mlua::Error::ExternalError(inner) => inner.downcast_ref::<DbError>().cloned(),
        mlua::Error::CallbackError { cause, .. } => db_error_of(cause),
        mlua::Error::WithContext { cause, .. } => db_error_of(cause),
        _ => None,
    }
}

fn driver_name(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "pgsql",
        Dialect::Mysql => "mysql",
        Dialect::Sqlite => "sqlite",
        Dialect::Any => "mock",
    }
}

fn install_sql(lua: &Lua, sb: &Table, data: &Rc<StateData>) -> mlua::Result<()> {
    let sql = lua.create_table()?;
    let types = lua.create_table()?;
    for (i, name) in [
        "NONE",
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "TIME",
        "DATE",
        "DATETIME",
        "TIMESTAMP",
        "CHAR",
        "VARCHAR",
    ]
    .iter()
    .enumerate()
    {
        types.set(*name, i)?;
    }
    sql.set("type", types)?;
    let d = data.clone();
    sql.set(
        "driver",
        lua.create_function(move |_, _name: Option<String>| {
            let target = d.ctx.target.clone().ok_or_else(|| {
                mlua::Error::runtime("no database: this command runs without one")
            })?;
            crate::output::used_sql();
            Ok(Driver {
                target,
                data: d.clone(),
            })
        })?,
    )?;
    sb.set("sql", sql)
}

struct Driver {
    target: Arc<dyn Target>,
    data: Rc<StateData>,
}

impl UserData for Driver {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("name", |_, this, ()| Ok(driver_name(this.target.dialect())));
        m.add_method("connect", |_, this, ()| {
            let conn = this.target.connect().map_err(sql_error)?;
            let state = Rc::new(RefCell::new(ConnState {
                conn: Some(conn),
                target: this.target.clone(),
                data: this.data.clone(),
                bulk: None,
                errno: 0,
                state: String::new(),
                errmsg: String::new(),
            }));
            let mut conns = this.data.conns.borrow_mut();
            conns.retain(|c| c.strong_count() > 0);
            conns.push(Rc::downgrade(&state));
            Ok(LuaConn(state))
        });
    }
}

struct ConnState {
    conn: Option<Box<dyn Conn>>,
    target: Arc<dyn Target>,
    data: Rc<StateData>,
    /// `bulk_insert_init`'s prefix and the rows gathered since the last flush.
    bulk: Option<(String, String, u64)>,
    errno: i64,
    state: String,
    errmsg: String,
}

/// The longest multi-row INSERT that `bulk_insert_next` builds, prefix included: sysbench
/// 1.0.20's buffer (512 KiB, with room for its terminating zero), so that a script sends as
/// many statements as there.
const BULK_BYTES: usize = 512 << 10;

impl ConnState {
    fn conn(&mut self) -> mlua::Result<&mut Box<dyn Conn>> {
        self.conn
            .as_mut()
            .ok_or_else(|| mlua::Error::runtime("the connection is closed"))
    }

    fn count(&self, f: impl FnOnce(&mut QueryCounts)) {
        let mut q = self.data.counts.get();
        f(&mut q);
        self.data.counts.set(q);
    }

    /// Records an error's fields for `sql_errno` and friends, and turns it into a Lua error as
    /// sysbench's drivers do: an ignorable error (the driver's list, `--mysql-ignore-errors`, or
    /// the script's `sql_error_ignorable` hook) rolls the transaction back and restarts the event;
    /// a lost connection reconnects; anything else stops the run.
    fn fail(&mut self, lua: &Lua, mut e: DbError, query: &str) -> mlua::Error {
        let mut words = e.code.split_whitespace();
        let first = words.next().unwrap_or_default().to_string();
        self.errno = first.parse().unwrap_or(-1);
        // MySQL's code reads "1213 (40001)": the number, then the SQLSTATE.
        self.state = words
            .next()
            .map(|w| w.trim_matches(|c| c == '(' || c == ')').to_string())
            .unwrap_or_else(|| e.code.clone());
        self.errmsg = e.message.clone();
        if e.class == ErrorClass::ConnectionLost {
            return sql_error(e);
        }
        let restart = Restart {
            errno: if self.errno >= 0 { self.errno } else { 0 },
            state: self.state.clone(),
            message: e.message.clone(),
            query: query.to_string(),
        };
        let by_driver = match self.target.dialect() {
            Dialect::Postgres => PGSQL_IGNORABLE.contains(&first.as_str()),
            Dialect::Mysql => {
                let list = &self.data.ctx.mysql_ignore_errors;
                list.iter().any(|c| *c == first || c == "all")
            }
            _ => e.class.is_retryable(),
        };
        let ignorable = by_driver || hook_says_ignorable(lua, &restart).unwrap_or(false);
        if !ignorable {
            e.class = ErrorClass::Fatal;
            return sql_error(e);
        }
        // PostgreSQL refuses every statement of a failed transaction until it ends; MySQL has
        // rolled back already after a deadlock. Either way the restarted event starts clean.
        if let Some(conn) = self.conn.as_mut() {
            let _ = conn.rollback();
        }
        if !e.class.is_retryable() {
            e.class = ErrorClass::Ignored;
        }
        *self.data.restart.borrow_mut() = Some(restart);
        sql_error(e)
    }

    /// Runs a text statement; rows go to `rows` when it returns a result set.
    fn run_text(
        &mut self,
        lua: &Lua,
        sql: &str,
        rows: Option<&mut Vec<Vec<Option<String>>>>,
    ) -> mlua::Result<bool> {
        let mut collected = Vec::new();
        let keep = rows.is_some();
        let out = self.conn()?.simple(sql, &mut |r| {
            if keep {
                collected.push(
                    (0..r.len())
                        .map(|i| r.get(i).map(|b| String::from_utf8_lossy(b).into_owned()))
                        .collect(),
                );
            }
        });
        let out = out.map_err(|e| self.fail(lua, e, sql))?;
        let read = out.rows > 0 || returns_rows(sql);
        self.count(|q| {
            if read {
                q.read(out.rows);
            } else {
                q.dml(out.changed);
            }
        });
        if let Some(rows) = rows {
            *rows = collected;
        }
        Ok(read)
    }

    fn flush_bulk(&mut self, lua: &Lua) -> mlua::Result<()> {
        if let Some((prefix, rows, n)) = self.bulk.as_mut()
            && *n > 0
        {
            let sql = format!("{prefix} {rows}");
            rows.clear();
            *n = 0;
            self.run_text(lua, &sql, None)?;
        }
        Ok(())
    }
}

#[derive(Clone)]
struct LuaConn(Rc<RefCell<ConnState>>);

impl UserData for LuaConn {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("sql_errno", |_, this| Ok(this.0.borrow().errno));
        f.add_field_method_get("sql_state", |_, this| Ok(this.0.borrow().state.clone()));
        f.add_field_method_get("sql_errmsg", |_, this| Ok(this.0.borrow().errmsg.clone()));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("query", |lua, this, sql: String| {
            let mut rows = Vec::new();
            let read = this.0.borrow_mut().run_text(lua, &sql, Some(&mut rows))?;
            Ok(read.then_some(LuaResult { rows, next: 0 }))
        });
        m.add_method("query_row", |lua, this, sql: String| {
            let mut rows = Vec::new();
            this.0.borrow_mut().run_text(lua, &sql, Some(&mut rows))?;
            let mut out = MultiValue::new();
            if let Some(row) = rows.into_iter().next() {
                for v in row {
                    out.push_back(match v {
                        Some(s) => Value::String(lua.create_string(&s)?),
                        None => Value::Nil,
                    });
                }
            }
            Ok(out)
        });
        m.add_method("prepare", |lua, this, sql: String| {
            let word: String = sql
                .trim_start()
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect::<String>()
                .to_ascii_uppercase();
            let kind = match word.as_str() {
                "BEGIN" | "START" => StmtKind::Begin,
                "COMMIT" => StmtKind::Commit,
                "ROLLBACK" => StmtKind::Rollback,
                _ => {
                    let mut st = this.0.borrow_mut();
                    let id = st.conn()?.prepare(&sql);
                    let id = id.map_err(|e| st.fail(lua, e, &sql))?;
                    StmtKind::Prepared {
                        id,
                        read: returns_rows(&sql),
                    }
                }
            };
            Ok(LuaStmt {
                conn: this.clone(),
                kind,
                binds: Vec::new(),
                sql,
            })
        });
        m.add_method("bulk_insert_init", |_, this, prefix: String| {
            this.0.borrow_mut().bulk = Some((prefix, String::new(), 0));
            Ok(())
        });
        m.add_method("bulk_insert_next", |lua, this, values: String| {
            let mut st = this.0.borrow_mut();
            let Some((prefix, rows, n)) = st.bulk.as_ref() else {
                return Err(mlua::Error::runtime(
                    "bulk_insert_next before bulk_insert_init",
                ));
            };
            // The statement as sent is the prefix, a space, and the rows joined by commas.
            let with_row = prefix.len() + 1 + rows.len() + usize::from(*n > 0) + values.len();
            if with_row + 1 > BULK_BYTES {
                if *n == 0 {
                    return Err(mlua::Error::runtime(format!(
                        "bulk_insert_next: a row of {} bytes does not fit in a statement of {BULK_BYTES} bytes",
                        values.len()
                    )));
                }
                st.flush_bulk(lua)?;
            }
            if let Some((_, rows, n)) = st.bulk.as_mut() {
                if *n > 0 {
                    rows.push(',');
                }
                rows.push_str(&values);
                *n += 1;
            }
            Ok(())
        });
        m.add_method("bulk_insert_done", |lua, this, ()| {
            let mut st = this.0.borrow_mut();
            st.flush_bulk(lua)?;
            st.bulk = None;
            Ok(())
        });
        m.add_method("disconnect", |_, this, ()| {
            this.0.borrow_mut().conn = None;
            Ok(())
        });
        m.add_method("reconnect", |lua, this, ()| {
            let mut st = this.0.borrow_mut();
            st.conn = None;
            let conn = st.target.connect().map_err(|e| st.fail(lua, e, ""))?;
            st.conn = Some(conn);
            Ok(())
        });
        m.add_method("check_error", |_, this, ()| Ok(this.0.borrow().errno));
    }
}

#[derive(Clone, Copy)]
enum StmtKind {
    Begin,
    Commit,
    Rollback,
    Prepared { id: StmtId, read: bool },
}

/// A parameter of a prepared statement, set from Lua.
#[derive(Clone, Debug)]
enum BindValue {
    Null,
    Int(i64),
    Text(String),
}

struct LuaParam {
    value: Rc<RefCell<BindValue>>,
    data: Rc<StateData>,
    integer: bool,
}

impl UserData for LuaParam {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("set", |_, this, v: Value| {
            *this.value.borrow_mut() = match v {
                Value::Nil => BindValue::Null,
                Value::Integer(i) if this.integer => BindValue::Int(i),
                Value::Number(n) if this.integer => BindValue::Int(n as i64),
                Value::Integer(i) => BindValue::Text(i.to_string()),
                Value::Number(n) => BindValue::Text(n.to_string()),
                Value::Boolean(b) => BindValue::Int(i64::from(b)),
                Value::String(s) => {
                    let text = s.to_str()?.to_string();
                    match (this.integer, text.parse::<i64>()) {
                        (true, Ok(i)) => BindValue::Int(i),
                        _ => BindValue::Text(text),
                    }
                }
                other => {
                    return Err(mlua::Error::runtime(format!(
                        "cannot bind a {} value",
                        other.type_name()
                    )));
                }
            };
            Ok(())
        });
        m.add_method("set_rand_str", |_, this, template: String| {
            let mut s = String::with_capacity(template.len());
            this.data.rand.borrow_mut().fill_template(&template, &mut s);
            *this.value.borrow_mut() = BindValue::Text(s);
            Ok(())
        });
    }
}

struct LuaStmt {
    conn: LuaConn,
    kind: StmtKind,
    binds: Vec<Rc<RefCell<BindValue>>>,
    sql: String,
}

impl UserData for LuaStmt {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("bind_create", |_, this, (ty, _len): (i64, Option<i64>)| {
            let data = this.conn.0.borrow().data.clone();
            Ok(LuaParam {
                value: Rc::new(RefCell::new(BindValue::Null)),
                data,
                // TINYINT..BIGINT
                integer: (1..=4).contains(&ty),
            })
        });
        m.add_method_mut("bind_param", |_, this, params: Variadic<AnyUserData>| {
            this.binds = params
                .iter()
                .map(|p| p.borrow::<LuaParam>().map(|p| p.value.clone()))
                .collect::<mlua::Result<_>>()?;
            Ok(())
        });
        m.add_method("execute", |lua, this, ()| {
            let mut st = this.conn.0.borrow_mut();
            let out = match this.kind {
                StmtKind::Begin => st.conn()?.begin(false),
                StmtKind::Commit => st.conn()?.commit(),
                StmtKind::Rollback => st.conn()?.rollback(),
                StmtKind::Prepared { id, read } => {
                    let values: Vec<std::cell::Ref<BindValue>> =
                        this.binds.iter().map(|b| b.borrow()).collect();
                    let params: Vec<Param> = values
                        .iter()
                        .map(|v| match &**v {
                            BindValue::Null => Param::Null,
                            BindValue::Int(i) => Param::Int(*i),
                            BindValue::Text(s) => Param::Text(s),
                        })
                        .collect();
                    let conn = st.conn()?;
                    let r = if read {
                        conn.query(id, &params).map(|rows| (true, rows))
                    } else {
                        conn.execute(id, &params).map(|changed| (false, changed))
                    };
                    drop(params);
                    drop(values);
                    match r {
                        Ok((true, rows)) => {
                            st.count(|q| q.read(rows));
                            return Ok(());
                        }
                        Ok((false, changed)) => {
                            st.count(|q| q.dml(changed));
                            return Ok(());
                        }
                        Err(e) => Err(e),
                    }
                }
            };
            out.map_err(|e| st.fail(lua, e, &this.sql))?;
            st.count(|q| q.others += 1);
            Ok(())
        });
        m.add_method("close", |_, _, ()| Ok(()));
    }
}

/// A result set: all rows, read on `fetch_row`.
struct LuaResult {
    rows: Vec<Vec<Option<String>>>,
    next: usize,
}

impl UserData for LuaResult {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("nrows", |_, this| Ok(this.rows.len()));
        f.add_field_method_get("nfields", |_, this| {
            Ok(this.rows.first().map_or(0, Vec::len))
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method_mut("fetch_row", |lua, this, ()| {
            let Some(row) = this.rows.get(this.next) else {
                return Ok(Value::Nil);
            };
            this.next += 1;
            let t = lua.create_table()?;
            for (i, v) in row.iter().enumerate() {
                if let Some(s) = v {
                    t.set(i + 1, s.as_str())?;
                }
            }
            Ok(Value::Table(t))
        });
        m.add_method("free", |_, _, ()| Ok(()));
    }
}

/// The options a script declares, in name order.
pub fn declared_options(lua: &Lua) -> mlua::Result<Vec<ScriptOption>> {
    let sb: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sb.get("cmdline")?;
    let options: Table = cmdline.get("options")?;
    let mut out = Vec::new();
    for pair in options.pairs::<String, Table>() {
        let (name, def) = pair?;
        let description: Option<String> = def.get(1)?;
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
        out.push(ScriptOption {
            name,
            description: description.unwrap_or_default(),
            default,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Parses `value` as the type of the option's default (sysbench's rules: on/off booleans,
/// numbers, comma-separated lists).
fn parse_value(opt: &ScriptOption, value: &str) -> Result<OptValue, Error> {
    let bad =
        |what: &str| Error::Usage(format!("--{}={value}: {what}", opt.name.replace('_', "-")));
    Ok(match &opt.default {
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
        let boolean = matches!(opt.default, Some(OptValue::Bool(_)));
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

/// What a Lua error says, with the script's file and line where Lua knows them.
pub fn describe(e: &mlua::Error) -> String {
    if let mlua::Error::CallbackError { cause, .. } = e
        && db_error_of(e).is_none()
    {
        return describe(cause);
    }
    match db_error_of(e) {
        Some(db) if !matches!(e, mlua::Error::ExternalError(_)) => {
            // A failed statement inside a script: the database's words and where in the script.
            let at = e.to_string();
            let place = at
                .lines()
                .find(|l| l.contains(".lua:"))
                .map(|l| l.trim().to_string())
                .unwrap_or_default();
            format!("{db} ({place})")
        }
        // `file:line: message`, as sysbench and the lua interpreter print it: the first line,
        // without mlua's kind prefix and Lua's stack traceback.
        _ => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            ["runtime error: ", "syntax error: ", "callback error: "]
                .iter()
                .find_map(|p| first.strip_prefix(p))
                .unwrap_or(first)
                .to_string()
        }
    }
}

fn lua_fail(e: &mlua::Error) -> Error {
    Error::Run(describe(e))
}

/// `dbsweep COMMAND SCRIPT [options]`.
pub fn run_command(command: &str, script: &str, args: &[String]) -> Result<Outcome, Error> {
    // Ctrl-C stops a script's run as any other: summary, results file, managed server gone.
    crate::install_ctrl_c();
    match script_plan(command, script, args)? {
        Some((ctx, plan)) => super::workload::run(ctx, &plan, command),
        None => Ok(Outcome::Done),
    }
}

/// The run of a script as a sweep step: `argv` is the step's `dbsweep run SCRIPT [options]`
/// command line; the script's states connect to `url`.
/// Without a URL the script and its options are only checked (a plan's validation).
pub fn step_workload(
    argv: &[String],
    url: Option<&str>,
) -> Result<(RunPlan, Box<dyn crate::workload::Workload>), Error> {
    let [_, _, script, args @ ..] = argv else {
        return Err(Error::Usage("a script step names its script".into()));
    };
    let (mut ctx, mut plan) = script_plan("run", script, args)?.expect("not help");
    if let Some(url) = url {
        plan.target = url.to_string();
        let target = crate::db::open(
            url,
            crate::db::OpenOptions {
                create: false,
                text_statements: plan.workload_opts.ps_mode == crate::workload::PsMode::Disable,
                pipeline: false,
            },
        )?;
        ctx.target = Some(Arc::from(target));
    }
    Ok((plan, super::workload::boxed(Arc::new(ctx))))
}

/// A script's context and run plan from its command line; None for `help` (printed here).
fn script_plan(
    command: &str,
    script: &str,
    args: &[String],
) -> Result<Option<(Ctx, RunPlan)>, Error> {
    let path = super::resolve(script)?;
    let source = std::fs::read_to_string(&path)
        .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    let mut ctx = Ctx {
        path: path.clone(),
        source,
        command: command.to_string(),
        argv: std::iter::once(script.to_string())
            .chain(args.iter().cloned())
            .collect(),
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
    };
    // The top level declares the options; it runs once before they are known.
    let (main, _) = new_state(&Arc::new(ctx.clone()), None).map_err(|e| lua_fail(&e))?;
    let declared = declared_options(&main).map_err(|e| lua_fail(&e))?;
    if command == "help" {
        print_help(&main, script, &declared)?;
        return Ok(None);
    }
    let (script_opts, general) = split_args(args, &declared)?;
    let (mut general, ignore) = crate::dropin::sysbench_connection(general)?;
    if let Some(list) = ignore {
        ctx.mysql_ignore_errors = list;
    }
    if declared.is_empty() {
        (ctx.legacy, general) = split_legacy(general);
    }
    let argv: Vec<String> = ["dbsweep", "run", script]
        .iter()
        .map(|s| s.to_string())
        .chain(general)
        .collect();
    let cli = crate::cli::Cli::try_parse_from(crate::cli::normalise_args(argv))
        .map_err(|e| crate::dropin::one_line(&e))?;
    crate::set_timeouts(cli.connect_timeout, cli.query_timeout)?;
    let crate::cli::Command::Run(o) = cli.command else {
        unreachable!("parsed as run");
    };
    let plan = RunPlan::from_args(&path.display().to_string(), &o.args)?;
    // Defaults first, then the command line, then what dbsweep's own options say.
    let mut opts: Vec<(String, OptValue)> = declared
        .iter()
        .filter_map(|o| Some((o.key(), o.default.clone()?)))
        .collect();
    for (n, v) in script_opts {
        opts.retain(|(m, _)| *m != n);
        opts.push((n, v));
    }
    let r = &plan.runner;
    for (n, v) in [
        ("threads", OptValue::Num(f64::from(r.threads))),
        ("time", OptValue::Num(r.time)),
        ("events", OptValue::Num(r.events as f64)),
        ("rate", OptValue::Num(r.rate)),
        ("report_interval", OptValue::Num(r.report_interval)),
        ("warmup_time", OptValue::Num(r.warmup)),
        (
            "rand_type",
            OptValue::Str(format!("{:?}", plan.workload_opts.rand.rand_type).to_lowercase()),
        ),
        (
            "rand_seed",
            OptValue::Num(plan.workload_opts.rand.rand_seed as f64),
        ),
    ] {
        // What the run does, whatever a script option of the same name declares.
        opts.retain(|(m, _)| m != n);
        opts.push((n.to_string(), v));
    }
    opts.push((
        "mysql_ignore_errors".into(),
        OptValue::List(ctx.mysql_ignore_errors.clone()),
    ));
    ctx.opts = opts;
    ctx.rand = plan.workload_opts.rand.clone();
    ctx.threads = r.threads;
    Ok(Some((ctx, plan)))
}

pub fn finish_ctx(mut ctx: Ctx, target: Arc<dyn Target>) -> Arc<Ctx> {
    ctx.target = Some(target);
    Arc::new(ctx)
}

/// `help`: the script's own, or its options under its name as given (sysbench's layout).
fn print_help(main: &Lua, script: &str, declared: &[ScriptOption]) -> Result<(), Error> {
    if let Ok(help) = main.globals().get::<Function>("help") {
        help.call::<()>(()).map_err(|e| lua_fail(&e))?;
        return Ok(());
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
    let width = heads.iter().map(String::len).max().unwrap_or(0) + 1;
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

/// Calls global `name` (or a command of `sysbench.cmdline.commands`) of `lua` with `args`, if
/// the script defines it. Ok(false) when it does not.
pub fn call_global(lua: &Lua, name: &str, args: MultiValue) -> mlua::Result<bool> {
    match lua.globals().get::<Value>(name)? {
        Value::Function(f) => {
            let r = f.call::<()>(args);
            flush_lua_output();
            r.map(|()| true)
        }
        _ => Ok(false),
    }
}

/// A custom command of `sysbench.cmdline.commands`: its function and whether it runs in every
/// thread's state.
pub fn custom_command(lua: &Lua, name: &str) -> mlua::Result<Option<(Function, bool)>> {
    let sb: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sb.get("cmdline")?;
    let commands: Table = cmdline.get("commands")?;
    match commands.get::<Value>(name)? {
        Value::Table(t) => {
            let f: Function = t.get(1)?;
            let parallel = t.get::<Option<i64>>(2)? == Some(PARALLEL_COMMAND);
            Ok(Some((f, parallel)))
        }
        _ => Ok(None),
    }
}
