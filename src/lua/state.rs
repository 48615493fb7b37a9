//! What every part of a Lua state shares: the script's context, the state's data (its random
//! generators, its connections and their statistics), and sysbench's error handling.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Lua, Table, Value};

pub use super::say::flush_lua_output;
use super::say::{Failed, Sent};
use crate::db::{Conn, DbError, Dialect, ErrorClass, QueryCounts, Target};
use crate::error::Error;
use crate::workload::rand::{Dist, Rand, RandOptions};

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
    /// Whether the script called `sysbench.sql.driver()` (sysbench's summary shows its SQL
    /// statistics only then); shared by every state of the run.
    pub sql_used: Arc<std::sync::atomic::AtomicBool>,
}

/// sysbench's default `--mysql-ignore-errors`: deadlock, record changed, lock wait timeout.
pub const MYSQL_IGNORE_DEFAULT: [&str; 3] = ["1213", "1020", "1205"];

/// The PostgreSQL errors sysbench's pgsql driver treats as ignorable: deadlock, serialization
/// failure, duplicate key.
pub(super) const PGSQL_IGNORABLE: [&str; 3] = ["40P01", "40001", "23505"];

/// sysbench.error.RESTART_EVENT.
pub(super) const RESTART_EVENT: i64 = 1;

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
    pub(super) dists: RefCell<HashMap<(u8, u64), Dist>>,
    pub(super) unique: Cell<u64>,
    /// Set when a statement failed with an ignorable error (the event restarts).
    pub restart: RefCell<Option<Restart>>,
    /// The connections this state opened, for their page cache counters.
    pub(super) conns: RefCell<Vec<std::rc::Weak<RefCell<ConnState>>>>,
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

/// What the script's `sysbench.hooks.sql_error_ignorable(err)` says of an error (false when
/// it has no such hook).
pub(super) fn hook_says_ignorable(lua: &Lua, conn: Value, r: &Restart) -> mlua::Result<bool> {
    // sysbench's error descriptor: the connection, the query and the error's fields.
    let t = lua.create_table()?;
    t.set("connection", conn)?;
    t.set("query", r.query.as_str())?;
    t.set("sql_errno", r.errno)?;
    t.set("sql_state", r.state.as_str())?;
    t.set("sql_errmsg", r.message.as_str())?;
    let said = call_hook(lua, "sql_error_ignorable", t)?;
    Ok(said.is_some_and(|v| !matches!(v, Value::Nil | Value::Boolean(false))))
}

/// The longest multi-row INSERT that `bulk_insert_next` builds, prefix included: sysbench
/// 1.0.20's buffer (512 KiB, with room for its terminating zero), so that a script sends as
/// many statements as there.
pub(super) const BULK_BYTES: usize = 512 << 10;

/// What a Lua error says, with the script's file and line where Lua knows them.
pub fn describe(e: &mlua::Error) -> String {
    super::watch::explain_memory(describe_error(e))
}

fn describe_error(e: &mlua::Error) -> String {
    // An error the SQL API raised as sysbench raises it: its message, with its position.
    if let Some(msg) = super::say::raised_in(e) {
        return msg.to_string();
    }
    if let mlua::Error::CallbackError { cause, .. } = e
        && db_error_of(e).is_none()
    {
        return describe_error(cause);
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
            let said = ["runtime error: ", "syntax error: ", "callback error: "]
                .iter()
                .find_map(|p| first.strip_prefix(p))
                .unwrap_or(first);
            // error({...}) outside an event: say what it is rather than an address.
            match said.strip_prefix("table: 0x") {
                Some(_) => "the script raised a table, not a message (error({...}))".to_string(),
                None => said.to_string(),
            }
        }
    }
}

pub(super) fn lua_fail(e: &mlua::Error) -> Error {
    Error::Run(describe(e))
}

/// The connection as a Lua value (for the error descriptor a hook receives), made only when
/// an error needs it.
pub(super) type ConnValue<'a> = dyn Fn(&Lua) -> Value + 'a;

pub(super) struct ConnState {
    pub(super) conn: Option<Box<dyn Conn>>,
    pub(super) target: Arc<dyn Target>,
    pub(super) data: Rc<StateData>,
    /// `bulk_insert_init`'s prefix and the rows gathered since the last flush.
    pub(super) bulk: Option<(String, String, u64)>,
    /// The last statement returned rows not yet freed (sysbench's DB_CONN_RESULT_SET).
    pub(super) result_set: bool,
    /// The rowless result set the SQL API answers (made at first use).
    pub(super) no_rows: Option<mlua::AnyUserData>,
    pub(super) errno: i64,
    pub(super) state: String,
    pub(super) errmsg: String,
}

impl ConnState {
    /// The open connection; on a closed one, sysbench's ALERT and its API error raised at
    /// `level`.
    pub(super) fn conn(&mut self, level: u8) -> Result<&mut Box<dyn Conn>, Failed> {
        match self.conn.as_mut() {
            Some(c) => Ok(c),
            None => {
                super::say::alert("attempt to use an already closed connection");
                Err(super::say::api_error(level))
            }
        }
    }

    pub(super) fn count(&self, f: impl FnOnce(&mut QueryCounts)) {
        let mut q = self.data.counts.get();
        f(&mut q);
        self.data.counts.set(q);
    }

    /// Records an error's fields for `sql_errno` and friends, and turns it into a Lua error as
    /// sysbench's drivers do: an ignorable error (the driver's list, `--mysql-ignore-errors`, or
    /// the script's `sql_error_ignorable` hook) rolls the transaction back and restarts the event;
    /// a lost connection reconnects; anything else is logged as the driver logs it and raised
    /// as sysbench's check_error raises it.
    pub(super) fn fail(
        &mut self,
        lua: &Lua,
        this: Value,
        mut e: DbError,
        sent: Sent<'_>,
    ) -> Failed {
        let mut words = e.code.split_whitespace();
        let first = words.next().unwrap_or_default().to_string();
        let dialect = self.target.dialect();
        // sysbench's pgsql driver leaves sql_errno at 0; MySQL's is the error's number.
        self.errno = match dialect {
            Dialect::Postgres => 0,
            _ => first.parse().unwrap_or(-1),
        };
        // MySQL's code reads "1213 (40001)": the number, then the SQLSTATE.
        self.state = words
            .next()
            .map(|w| w.trim_matches(|c| c == '(' || c == ')').to_string())
            .unwrap_or_else(|| e.code.clone());
        self.errmsg = e.message.clone();
        if e.class == ErrorClass::ConnectionLost {
            return Failed::Lua(sql_error(e));
        }
        let restart = Restart {
            errno: self.errno.max(0),
            state: self.state.clone(),
            message: e.message.clone(),
            query: match sent {
                Sent::Text(q) => q.to_string(),
                _ => "<prepared statement>".to_string(),
            },
        };
        let by_driver = match dialect {
            Dialect::Postgres => PGSQL_IGNORABLE.contains(&first.as_str()),
            Dialect::Mysql => {
                let list = &self.data.ctx.mysql_ignore_errors;
                list.iter().any(|c| *c == first || c == "all")
            }
            _ => e.class.is_retryable(),
        };
        if !by_driver {
            super::say::failed_statement(dialect, &e, self.errno, sent);
        }
        let ignorable = by_driver || hook_says_ignorable(lua, this, &restart).unwrap_or(false);
        if !ignorable {
            return Failed::Raise(
                format!(
                    "SQL error, errno = {}, state = '{}': {}",
                    self.errno, self.state, self.errmsg
                ),
                2,
            );
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
        Failed::Lua(sql_error(e))
    }

    pub(super) fn run_text(
        &mut self,
        lua: &Lua,
        this: &ConnValue<'_>,
        sql: &str,
        rows: Option<&mut Vec<Vec<Option<String>>>>,
    ) -> Result<bool, Failed> {
        let mut collected = Vec::new();
        let keep = rows.is_some();
        let out = self.conn(3)?.simple(sql, &mut |r| {
            if keep {
                collected.push(
                    (0..r.len())
                        .map(|i| r.get(i).map(|b| String::from_utf8_lossy(b).into_owned()))
                        .collect(),
                );
            }
        });
        let out = out.map_err(|e| self.fail(lua, this(lua), e, Sent::Text(sql)))?;
        let read = out.rows > 0 || returns_rows(sql);
        self.result_set = read;
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

    pub(super) fn flush_bulk(&mut self, lua: &Lua, this: &ConnValue<'_>) -> Result<(), Failed> {
        if let Some((prefix, rows, n)) = self.bulk.as_mut()
            && *n > 0
        {
            let sql = format!("{prefix} {rows}");
            rows.clear();
            *n = 0;
            self.run_text(lua, this, &sql, None)?;
        }
        Ok(())
    }
}

/// Calls `sysbench.hooks.NAME(arg)` if the script set that hook; None when it did not.
pub fn call_hook(lua: &Lua, name: &str, arg: Table) -> mlua::Result<Option<Value>> {
    let hooks: Table = lua.globals().get::<Table>("sysbench")?.get("hooks")?;
    match hooks.get::<Value>(name)? {
        Value::Function(f) => {
            let r = super::watch::busy(|| f.call::<Value>(arg).map(Some));
            flush_lua_output();
            r
        }
        _ => Ok(None),
    }
}

/// Whether a statement returns a result set, by its first word.
pub(super) fn returns_rows(sql: &str) -> bool {
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

/// A Lua error carrying the database error, so that the runner sees its class.
pub(super) fn sql_error(e: DbError) -> mlua::Error {
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

/// A value of `sysbench.opt`.
#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<String>),
}
