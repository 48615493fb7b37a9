//! A script's commands over a database, and its `event` as a dbsweep workload: one Lua state per
//! client thread, as sysbench runs it, so the run has dbsweep's runner, metrics and results.

use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use mlua::{Function, Lua, MultiValue, Value};

use super::state::{Ctx, StateData};

use super::api::PARALLEL_COMMAND;
use super::state::OptValue;
use crate::db::QueryCounts;
use crate::db::{Conn, DbError, ErrorClass, Target};
use crate::error::Error;
use crate::error::Outcome;
use crate::output::Printer;
use crate::results::figures::LoadReport;
use crate::workload::rand::Rand;
use crate::workload::{Client, TableSet, Workload, WorkloadOptions};
use mlua::Table;

pub(super) fn fail(e: &mlua::Error) -> Error {
    Error::Run(super::state::describe(e))
}

/// A custom command's error, as sysbench says it: it calls the command through
/// `sysbench.cmdline.call_command`.
fn command_failed(e: &mlua::Error) -> Error {
    Error::Run(format!(
        "`sysbench.cmdline.call_command' function failed: {}",
        super::state::describe(e)
    ))
}

/// The script's context on its database (what `sysbench.sql.driver()` connects to).
pub fn on_target(mut ctx: Ctx, target: Arc<dyn Target>) -> Arc<Ctx> {
    ctx.target = Some(target);
    Arc::new(ctx)
}

/// A script's `run`: `measure` runs the script's `event` as a workload, with the script's
/// report hooks printing, between its `init` and `done` in its main state, as sysbench does.
pub fn run(
    ctx: &Arc<Ctx>,
    measure: impl FnOnce(&dyn Workload, &mut dyn Printer) -> Result<Outcome, Error>,
) -> Result<Outcome, Error> {
    // `init` and `done` run here, in the main state that the report hooks use too.
    let workload = LuaWorkload {
        ctx: ctx.clone(),
        init_done: false,
    };
    let (main, _) = super::api::new_state(ctx, None).map_err(|e| fail(&e))?;
    if !matches!(main.globals().get::<Value>("event"), Ok(Value::Function(_))) {
        return Err(Error::Usage(format!(
            "cannot find the event() function in {}",
            ctx.path.display()
        )));
    }
    let mut hooks = ReportHooks {
        main: &main,
        sql_used: &ctx.sql_used,
    };
    between_init_and_done(&main, || measure(&workload, &mut hooks))
}

/// Runs `run` between the script's `init` and `done` in its main state `main`, as sysbench
/// does around a run; `done` runs whatever the run's outcome.
fn between_init_and_done<T>(
    main: &Lua,
    run: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    super::api::call_global(main, "init", MultiValue::new()).map_err(|e| fail(&e))?;
    let outcome = run();
    super::api::call_global(main, "done", MultiValue::new()).map_err(|e| fail(&e))?;
    outcome
}

/// Runs a command other than `run`: a command of `sysbench.cmdline.commands` (in every
/// thread's state when it is parallel), else the global function of that name.
pub fn command(ctx: &Arc<Ctx>, command: &str) -> Result<(), Error> {
    let (main, _) = super::api::new_state(ctx, None).map_err(|e| fail(&e))?;
    let r = match custom_command(&main, command).map_err(|e| fail(&e))? {
        Some((_, true)) => {
            drop(main);
            // sysbench runs a parallel command in worker threads only when there are several
            // (one runs it alone, without the line).
            if ctx.threads > 1 && super::scripts::notices() {
                println!("Initializing worker threads...\n");
            }
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..ctx.threads)
                    .map(|tid| {
                        s.spawn(move || -> Result<(), Error> {
                            let (lua, _) =
                                super::api::new_state(ctx, Some(tid)).map_err(|e| fail(&e))?;
                            let (f, _) = custom_command(&lua, command)
                                .map_err(|e| fail(&e))?
                                .expect("declared in every state");
                            super::watch::busy(|| f.call::<()>(())).map_err(|e| command_failed(&e))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .try_for_each(|h| h.join().expect("script thread panicked"))
            })
        }
        Some((f, false)) => super::watch::busy(|| f.call::<()>(())).map_err(|e| command_failed(&e)),
        None => {
            if super::api::call_global(&main, command, MultiValue::new()).map_err(|e| fail(&e))? {
                Ok(())
            } else {
                // sysbench's words: its own commands are not implemented by the script, any
                // other is unknown.
                Err(Error::Worded(
                    if ["prepare", "cleanup", "help"].contains(&command) {
                        format!(
                            "'{}' test does not implement the '{command}' command.",
                            ctx.argv.first().map_or("", String::as_str)
                        )
                    } else {
                        format!("Unknown command: {command}")
                    },
                ))
            }
        }
    };
    super::state::flush_lua_output();
    r
}

/// The script's `report_intermediate` and `report_cumulative` hooks, called in the main state
/// with the fields sysbench gives them; where the script sets none, dbsweep prints its own.
struct ReportHooks<'a> {
    main: &'a Lua,
    sql_used: &'a std::sync::atomic::AtomicBool,
}

impl ReportHooks<'_> {
    fn call(&self, hook: &str, stat: mlua::Result<mlua::Table>) -> bool {
        match stat.and_then(|t| super::state::call_hook(self.main, hook, t)) {
            Ok(called) => called.is_some(),
            Err(e) => {
                eprintln!(
                    "warning: sysbench.hooks.{hook}: {}",
                    super::state::describe(&e)
                );
                true
            }
        }
    }
}

impl Printer for ReportHooks<'_> {
    fn interval(&mut self, iv: &crate::results::figures::Interval) -> bool {
        let n = |per_s: f64| (per_s * iv.seconds).round();
        let stat = super::sql::Stat {
            threads_running: iv.threads,
            time_interval: iv.seconds,
            time_total: iv.t,
            events: iv.events as f64,
            reads: n(iv.reads_per_s),
            writes: n(iv.writes_per_s),
            other: n(iv.others_per_s),
            errors: n(iv.err_per_s),
            reconnects: n(iv.reconn_per_s),
            latency_pct: iv.pct_ms / 1e3,
            latency: None,
        };
        self.call("report_intermediate", stat.table(self.main))
    }

    /// sysbench calls the cumulative report's hook at each checkpoint too.
    fn checkpoint(&mut self, cp: &crate::results::figures::Checkpoint) -> bool {
        let stat = cumulative(cp);
        self.call("report_cumulative", stat.table(self.main))
    }

    fn summary(&mut self, r: &crate::results::Results) -> bool {
        let l = &r.latency_ms;
        let stat = match &r.since_checkpoint {
            // After a checkpoint, its figures since (the total time is the run's).
            Some(cp) => super::sql::Stat {
                threads_running: 0,
                time_total: r.time_s,
                ..cumulative(cp)
            },
            None => super::sql::Stat {
                // The run has ended: no thread runs (sysbench's cumulative report says 0).
                threads_running: 0,
                time_interval: r.time_s,
                time_total: r.time_s,
                events: r.events as f64,
                reads: r.queries.read as f64,
                writes: r.queries.write as f64,
                other: r.queries.other as f64,
                errors: r.errors.values().sum::<u64>() as f64,
                reconnects: r.reconnects as f64,
                latency_pct: l.p95 / 1e3,
                latency: Some([l.min / 1e3, l.max / 1e3, l.avg / 1e3, l.sum / 1e3]),
            },
        };
        // sysbench reports intervals in a state of their own, whose end closes what they
        // wrote (report_json's array) before the cumulative report begins.
        let _ = self
            .main
            .load("if sysbench.__end_intervals then sysbench.__end_intervals() end")
            .exec();
        self.call("report_cumulative", stat.table(self.main))
    }

    fn sql_used(&self) -> bool {
        self.sql_used.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The cumulative report's fields of the events since the last checkpoint.
fn cumulative(cp: &crate::results::figures::Checkpoint) -> super::sql::Stat {
    let l = &cp.latency_ms;
    super::sql::Stat {
        threads_running: cp.threads,
        time_interval: cp.seconds,
        time_total: cp.t,
        events: cp.events as f64,
        reads: cp.queries.read as f64,
        writes: cp.queries.write as f64,
        other: cp.queries.other as f64,
        errors: cp.errors as f64,
        reconnects: cp.reconnects as f64,
        latency_pct: cp.pct_ms / 1e3,
        latency: Some([l.min / 1e3, l.max / 1e3, l.avg / 1e3, l.sum / 1e3]),
    }
}

/// A script as a workload (a sweep step's), on the target in `ctx`.
pub fn boxed(ctx: Arc<Ctx>) -> Box<dyn Workload> {
    Box::new(LuaWorkload {
        ctx,
        init_done: true,
    })
}

/// A script run as a workload.
struct LuaWorkload {
    ctx: Arc<Ctx>,
    /// Whether each run calls the script's `init` and `done` in a main state of its own
    /// (`around_run`); `dbsweep run` calls them itself.
    init_done: bool,
}

impl Workload for LuaWorkload {
    fn name(&self) -> &'static str {
        "lua"
    }

    /// The sbtest tables of `--tables`, where the script has that option (the oltp scripts):
    /// a fresh managed server then gets the script's prepare first.
    fn tables(&self) -> TableSet {
        let n = self
            .ctx
            .opts
            .iter()
            .find_map(|(n, v)| match (n.as_str(), v) {
                ("tables", OptValue::Num(t)) => Some(*t as u32),
                _ => None,
            })
            .unwrap_or(0);
        TableSet::sysbench(n)
    }

    fn prepare(
        &self,
        _target: &dyn Target,
        _opts: &WorkloadOptions,
        _force: bool,
        _stop: &AtomicBool,
    ) -> Result<LoadReport, Error> {
        let start = std::time::Instant::now();
        let cpu = crate::metrics::process_cpu_seconds();
        let mut ctx = (*self.ctx).clone();
        ctx.command = "prepare".into();
        command(&Arc::new(ctx), "prepare")?;
        Ok(LoadReport {
            tables: self.tables().count,
            rows: 0,
            seconds: start.elapsed().as_secs_f64(),
            rows_per_s: 0.0,
            client_cpu_s: crate::metrics::process_cpu_seconds() - cpu,
            steps: Vec::new(),
        })
    }

    fn cleanup(&self, _target: &dyn Target, _: &WorkloadOptions) -> Result<u32, Error> {
        command(&self.ctx, "cleanup")?;
        Ok(self.tables().count)
    }

    /// sysbench checks nothing before a run; neither does a script's run here.
    fn check_ready(&self, _: &mut dyn Conn, _: &WorkloadOptions, _: &str) -> Result<(), Error> {
        Ok(())
    }

    /// A script opens its connections with `sysbench.sql.driver():connect()`.
    fn own_connections(&self) -> bool {
        true
    }

    fn around_run(
        &self,
        run: &mut dyn FnMut() -> Result<crate::results::Results, Error>,
    ) -> Result<crate::results::Results, Error> {
        if !self.init_done {
            return run();
        }
        let (main, _) = super::api::new_state(&self.ctx, None).map_err(|e| fail(&e))?;
        between_init_and_done(&main, run)
    }

    fn client(&self, _conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        let lua_err = |e: mlua::Error| match super::state::db_error_of(&e) {
            Some(db) => db,
            None => DbError::new(ErrorClass::Fatal, "lua", super::state::describe(&e)),
        };
        let (lua, data) = super::api::new_state(&self.ctx, Some(thread)).map_err(lua_err)?;
        super::api::call_global(
            &lua,
            "thread_init",
            MultiValue::from_vec(vec![Value::Integer(thread.into())]),
        )
        .map_err(lua_err)?;
        // sysbench counts the queries of `thread_init` with the run's: they join the totals
        // with `thread_done`'s when the client finishes.
        let mut init_counts = data.counts.take();
        super::api::take_ffi_counts(&mut init_counts);
        let event: Function = lua.globals().get("event").map_err(lua_err)?;
        let thread_run = match lua.globals().get::<Value>("thread_run").map_err(lua_err)? {
            Value::Function(f) => Some(f),
            _ => None,
        };
        let guard: Function = lua
            .load(EVENT_GUARD)
            .set_name("=dbsweep-event")
            .eval()
            .map_err(lua_err)?;
        Ok(Box::new(LuaClient {
            lua,
            event,
            guard,
            thread_run,
            data,
            thread,
            stop: false,
            init_counts,
        }))
    }
}

/// Calls `event(tid)` as sysbench's own event loop does: an error table whose errcode is
/// `sysbench.error.RESTART_EVENT` (raised by a script itself) goes to the
/// `before_restart_event` hook and restarts the event; any other error goes on up. Returns
/// whether to restart, and what the event returned.
const EVENT_GUARD: &str = r#"
return function(event, tid)
  local ok, ret = pcall(event, tid)
  if ok then return false, ret end
  -- What the failed event allocated is garbage now: collected before raising, since raising
  -- allocates too (at the heap's cap it would fail as "error in error handling").
  if ret == "not enough memory" then collectgarbage() end
  if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
    local hook = sysbench.hooks.before_restart_event
    if type(hook) == "function" then hook(ret) end
    return true, nil
  end
  -- Any other table: its fields, not "table: 0x..." (sysbench says "(not a string)").
  if type(ret) == "table" then
    local fields = {}
    for k, v in pairs(ret) do
      local shown = type(v) == "string" and string.format("%q", v) or tostring(v)
      fields[#fields + 1] = tostring(k) .. " = " .. shown
    end
    table.sort(fields)
    error("the event raised a table, not a message: {" .. table.concat(fields, ", ") .. "}", 0)
  end
  error(ret, 0)
end
"#;

/// One client thread's state.
struct LuaClient {
    lua: Lua,
    event: Function,
    guard: Function,
    /// The script's own event loop, where it defines one.
    thread_run: Option<Function>,
    data: Rc<StateData>,
    thread: u32,
    /// The last event returned true: this thread is done.
    stop: bool,
    /// The queries `thread_init` ran.
    init_counts: QueryCounts,
}

// SAFETY: a client is created on its worker thread and used only there (the runner never
// moves a client between threads); the Lua state and its Rc-shared data never cross threads.
unsafe impl Send for LuaClient {}

impl Client for LuaClient {
    fn event(
        &mut self,
        _conn: &mut dyn Conn,
        _rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        self.data.counts.set(QueryCounts::default());
        let r = super::watch::busy(|| self.guard.call::<(bool, Value)>((&self.event, self.thread)));
        *q = self.data.counts.get();
        super::api::take_ffi_counts(q);
        match r {
            Ok((true, _)) => Err(DbError::new(
                ErrorClass::Ignored,
                "RESTART_EVENT",
                "the script restarted the event",
            )),
            Ok((false, v)) => {
                // sysbench stops a thread whose event returns anything but nil or false.
                self.stop = !matches!(v, Value::Nil | Value::Boolean(false));
                Ok(())
            }
            Err(e) => Err(match super::state::db_error_of(&e) {
                Some(db) if db.class.is_retryable() => {
                    // An ignorable SQL error: the hook sees it before the event runs again.
                    let restart = self.data.restart.borrow_mut().take();
                    if let Some(r) = restart {
                        let hooked = super::state::restart_table(&self.lua, &r).and_then(|t| {
                            super::state::call_hook(&self.lua, "before_restart_event", t)
                        });
                        if let Err(e) = hooked {
                            return Err(DbError::new(
                                ErrorClass::Fatal,
                                "lua",
                                super::state::describe(&e),
                            ));
                        }
                    }
                    db
                }
                Some(db) if db.class == ErrorClass::ConnectionLost => db,
                _ => DbError::new(ErrorClass::Fatal, "lua", super::state::describe(&e)),
            }),
        }
    }

    fn stopped(&self) -> bool {
        self.stop
    }

    /// A script's `thread_run(tid)` replaces the runner's loop, as it replaces sysbench's: its
    /// `ffi.C.sb_more_events`, `sb_event_start` and `sb_event_stop` reach `ctl`.
    fn own_loop(
        &mut self,
        ctl: &mut dyn crate::workload::EventLoop,
    ) -> Option<Result<(), DbError>> {
        let f = self.thread_run.as_ref()?;
        let r = super::api::with_own_loop(ctl, &self.data, || {
            super::watch::busy(|| f.call::<()>(self.thread))
        });
        super::state::flush_lua_output();
        Some(r.map_err(|e| DbError::new(ErrorClass::Fatal, "lua", super::state::describe(&e))))
    }

    fn own_cache_counters(&mut self, reset: bool) -> Option<Option<[u64; 3]>> {
        Some(self.data.cache_counters(reset))
    }

    fn finish(&mut self, _conn: &mut dyn Conn, q: &mut QueryCounts) -> Result<(), DbError> {
        self.data.counts.set(QueryCounts::default());
        let r = super::api::call_global(
            &self.lua,
            "thread_done",
            MultiValue::from_vec(vec![Value::Integer(self.thread.into())]),
        );
        *q = self.data.counts.get();
        // What the thread's events printed comes before the summary, as in sysbench.
        super::state::flush_lua_output();
        let init = std::mem::take(&mut self.init_counts);
        q.reads += init.reads;
        q.writes += init.writes;
        q.others += init.others;
        q.rows += init.rows;
        r.map(drop)
            .map_err(|e| DbError::new(ErrorClass::Fatal, "lua", super::state::describe(&e)))
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
