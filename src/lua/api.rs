//! A new Lua state with its `sysbench` table (cmdline, opt, rand, sql, hooks, the event loop's
//! FFI functions) and sysbench 1.0's old-style globals; each area is built by its own file.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Lua, MultiValue, Table, Value};

use super::options::fill_opts;
use super::options::opt_value;
use super::rand::install_rand;
use super::sql::driver_name;
use super::sql::install_sql;
use super::state::Ctx;
use super::state::StateData;
use super::state::flush_lua_output;
use crate::db::QueryCounts;
use crate::workload::rand::Rand;
use crate::workload::{EventLoop, Next};

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
pub(super) const PARALLEL_COMMAND: i64 = 1;

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
    new_state_with(ctx, tid, false)
}

/// A state whose top level runs with `print` silenced: the one that only reads a script's
/// options before the command's own main state runs the top level again (sysbench runs it
/// once there, then once per thread).
pub fn declaring_state(ctx: &Arc<Ctx>) -> mlua::Result<(Lua, Rc<StateData>)> {
    new_state_with(ctx, None, true)
}

fn new_state_with(
    ctx: &Arc<Ctx>,
    tid: Option<u32>,
    quiet: bool,
) -> mlua::Result<(Lua, Rc<StateData>)> {
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
    // Set while `done` or `thread_done` runs: Ctrl-C lets them finish (for a while).
    let spared = Rc::new(Cell::new(false));
    super::watch::install(&lua, ctx.threads.saturating_add(1), spared.clone())?;
    lua.set_app_data(spared);
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
        format!(
            "{dir}/?.lua;./?.lua;{}/?.lua;{path}",
            super::scripts::SYSBENCH_DIR
        ),
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
    // Quiet: what the top level prints is held back, and printed only if it fails (its
    // lines then come before the error, as sysbench's one run of it prints them).
    let print: Value = lua.globals().get("print")?;
    let held = Rc::new(RefCell::new(String::new()));
    if quiet {
        let held = held.clone();
        let tostring: mlua::Function = lua.globals().get("tostring")?;
        lua.globals().set(
            "print",
            lua.create_function(move |_, args: MultiValue| {
                let parts: Vec<String> = args
                    .into_iter()
                    .map(|v| tostring.call::<String>(v))
                    .collect::<mlua::Result<_>>()?;
                let mut h = held.borrow_mut();
                h.push_str(&parts.join("\t"));
                h.push('\n');
                Ok(())
            })?,
        )?;
    }
    // A legacy script's options are its globals from its first line (oltp.lua reads `test`
    // there), as sysbench exports them before it loads the script.
    for (name, v) in &ctx.legacy {
        lua.globals().set(name.as_str(), opt_value(&lua, v)?)?;
    }
    let ran = super::watch::busy(|| {
        lua.load(chunk_source(&ctx.source))
            .set_name(format!("@{}", ctx.path.display()))
            .exec()
    });
    if quiet {
        if ran.is_err() {
            print!("{}", held.borrow());
        }
        lua.globals().set("print", print)?;
    }
    ran?;
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

fn install(lua: &Lua, data: &Rc<StateData>, tid: u32) -> mlua::Result<()> {
    let g = lua.globals();
    let sb = lua.create_table()?;
    // sysbench's own: scripts compare them (dbsweep's version is in its results file).
    sb.set("version", "1.0.20")?;
    sb.set("version_string", "sysbench 1.0.20")?;
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
    cmdline.set("ARG_NULL", 0)?;
    cmdline.set("ARG_MAX", 8)?;
    for (name, kind) in super::options::ArgKind::ALL {
        cmdline.set(name, kind as i64)?;
    }
    cmdline.set(
        "print_test_options",
        lua.create_function(|lua, ()| super::options::print_test_options(lua))?,
    )?;
    cmdline.set("script_path", ctx.path.display().to_string())?;
    // The process's own words where a personality gave them (sysbench's argv, [0] its name).
    match super::scripts::process_argv() {
        Some((argv0, words)) => {
            let t = lua.create_sequence_from(words.iter().cloned())?;
            t.set(0, argv0.as_str())?;
            cmdline.set("argv", t)?;
        }
        None => cmdline.set("argv", lua.create_sequence_from(ctx.argv.clone())?)?,
    }
    if !ctx.command.is_empty() {
        cmdline.set("command", ctx.command.as_str())?;
    }
    sb.set("cmdline", cmdline)?;

    super::histogram::install(lua, &sb)?;
    install_rand(lua, &sb, data)?;
    install_sql(lua, &sb, data)?;
    g.set("sysbench", sb)?;
    super::sql::install_pcall(lua)?;
    lua.load(WHOLE_LINES).set_name("=dbsweep-print").exec()?;
    lua.load(REPORTS).set_name("=dbsweep-reports").exec()?;
    lua.load(OLD_GLOBALS).set_name("=dbsweep-compat").exec()?;
    Ok(())
}

/// LuaJIT's `print` writes each value, each tab and the newline with a write of its own to C's
/// stdout: lines that script threads printed at once came out mixed ("thread 1 ran 20
/// eventsthread 0 ran 20 events", then both newlines). This `print` writes its line with one
/// `io.write` of one string, which C's stdio writes whole under the stream's lock. As Lua's,
/// it converts each value with the global `tostring` of the moment.
const WHOLE_LINES: &str = r#"
local write, select, concat = io.write, select, table.concat
function print(...)
  local n = select('#', ...)
  local parts = {}
  for i = 1, n do
    local s = tostring((select(i, ...)))
    if type(s) ~= 'string' then error("'tostring' must return a string to 'print'", 2) end
    parts[i] = s
  end
  write(concat(parts, '\t') .. '\n')
end
"#;

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

-- One JSON array over the interval reports, another over the cumulative one: "[" before the
-- first object, "," between, "]" when the reports end (the intervals' when the cumulative
-- report begins, the cumulative's when the state closes), as sysbench's two states write them.
local json_open = nil
local json_cumulative = false
function sysbench.__end_intervals()
  if json_open ~= nil and not json_cumulative then
    io.write("\n]\n")
    getmetatable(json_open).__gc = nil
    json_open = nil
  end
  json_cumulative = true
end
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
-- sysbench 0.5's db_query returns nothing: it frees what it read.
function db_query(sql) con():query(sql) end
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

/// Calls global `name` (or a command of `sysbench.cmdline.commands`) of `lua` with `args`, if
/// the script defines it. Ok(false) when it does not.
/// `done` and `thread_done` are spared: after Ctrl-C they may still end the run's output.
pub fn call_global(lua: &Lua, name: &str, args: MultiValue) -> mlua::Result<bool> {
    match lua.globals().get::<Value>(name)? {
        Value::Function(f) => {
            let r = if matches!(name, "done" | "thread_done") {
                let spared = lua
                    .app_data_ref::<Rc<Cell<bool>>>()
                    .map(|s| s.clone())
                    .unwrap_or_default();
                spared.set(true);
                let r = super::watch::busy_spared(|| f.call::<()>(args));
                spared.set(false);
                r
            } else {
                super::watch::busy(|| f.call::<()>(args))
            };
            flush_lua_output();
            r.map(|()| true)
        }
        _ => Ok(false),
    }
}
