//! `sysbench.sql`: drivers, connections, prepared statements and result sets over dbsweep's
//! targets, with sysbench's error handling (ignorable errors, reconnects) and its statistics.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{
    AnyUserData, Lua, MultiValue, Table, UserData, UserDataFields, UserDataMethods, Value, Variadic,
};

use super::say::{Failed, Sent};
use super::state::BULK_BYTES;
use super::state::ConnState;
use super::state::StateData;
use super::state::returns_rows;
use crate::db::{Dialect, Param, StmtId, Target};

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

pub(super) fn driver_name(d: Dialect) -> &'static str {
    match d {
        Dialect::Postgres => "pgsql",
        Dialect::Mysql => "mysql",
        Dialect::Sqlite => "sqlite",
        Dialect::Any => "mock",
    }
}

pub(super) fn install_sql(lua: &Lua, sb: &Table, data: &Rc<StateData>) -> mlua::Result<()> {
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
    let errors = lua.create_table()?;
    for (i, name) in ["NONE", "IGNORABLE", "FATAL"].iter().enumerate() {
        errors.set(*name, i)?;
    }
    sql.set("error", errors)?;
    let d = data.clone();
    sql.set(
        "driver",
        lua.create_function(move |lua, name: Option<String>| {
            let found = match (&d.ctx.target, name.as_deref()) {
                (None, _) => {
                    super::say::fatal("no database: this command runs without one");
                    None
                }
                (Some(t), None) => Some(t.clone()),
                (Some(t), Some(n)) if n == driver_name(t.dialect()) => Some(t.clone()),
                (Some(_), Some(n @ ("mysql" | "pgsql"))) => {
                    super::say::fatal(&format!(
                        "dbsweep's SQL API reaches the database of --db-driver only, not '{n}'"
                    ));
                    None
                }
                (Some(_), Some(n)) => {
                    super::say::fatal(&format!("invalid database driver name: '{n}'"));
                    None
                }
            };
            let r = match found {
                Some(target) => {
                    d.ctx
                        .sql_used
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    Ok(Driver {
                        target,
                        data: d.clone(),
                    })
                }
                None => Err(Failed::Raise(
                    "failed to initialize the DB driver".into(),
                    2,
                )),
            };
            answer(lua, r)
        })?,
    )?;
    sb.set("sql", sql)
}

/// sysbench's `pcall` and `xpcall` (say.rs): a raised error reaches the script as its
/// message; and the error descriptor's connection.
pub(super) fn install_pcall(lua: &Lua) -> mlua::Result<()> {
    let sb: Table = lua.globals().get("sysbench")?;
    sb.set("_said", lua.create_function(super::say::said)?)?;
    lua.load(super::say::PCALL)
        .set_name(format!("={}", super::say::PCALL_NAME))
        .exec()
}

struct Driver {
    target: Arc<dyn Target>,
    data: Rc<StateData>,
}

impl UserData for Driver {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method("__tostring", |_, _, ()| Ok("<sql_driver>"));
        m.add_method("name", |_, this, ()| Ok(driver_name(this.target.dialect())));
        m.add_method("connect", |lua, this, ()| {
            let conn = match this.target.connect() {
                Ok(c) => c,
                Err(e) => {
                    super::say::failed_connect(
                        this.target.dialect(),
                        &this.target.display_url(),
                        &e,
                    );
                    return answer(
                        lua,
                        Err(Failed::Raise("connection creation failed".into(), 2)),
                    );
                }
            };
            let state = Rc::new(RefCell::new(ConnState {
                conn: Some(conn),
                target: this.target.clone(),
                data: this.data.clone(),
                bulk: None,
                result_set: false,
                no_rows: None,
                errno: 0,
                state: String::new(),
                errmsg: String::new(),
            }));
            let mut conns = this.data.conns.borrow_mut();
            conns.retain(|c| c.strong_count() > 0);
            conns.push(Rc::downgrade(&state));
            answer(lua, Ok(LuaConn(state)))
        });
    }
}

#[derive(Clone)]
struct LuaConn(Rc<RefCell<ConnState>>);

impl LuaConn {
    /// The connection as a Lua value, for an error descriptor.
    fn value(&self) -> impl Fn(&Lua) -> Value + '_ {
        move |lua| {
            let made = || -> mlua::Result<Value> {
                let refer: mlua::Function = lua
                    .globals()
                    .get::<Table>("sysbench")?
                    .get::<Table>("sql")?
                    .get("_conn_ref")?;
                refer.call(lua.create_userdata(self.clone())?)
            };
            made().unwrap_or(Value::Nil)
        }
    }

    /// A result set of `rows`.
    fn result(&self, rows: Vec<Vec<Option<String>>>) -> LuaResult {
        LuaResult {
            conn: Rc::downgrade(&self.0),
            rows,
            next: 0,
        }
    }

    /// The result set of a statement whose rows the script does not get (a write, a prepared
    /// statement's execute), as sysbench answers one too: one per connection, made once, so
    /// that each execute costs no allocation.
    fn no_rows(&self, lua: &Lua) -> mlua::Result<AnyUserData> {
        if let Some(ud) = &self.0.borrow().no_rows {
            return Ok(ud.clone());
        }
        let ud = lua.create_userdata(self.result(Vec::new()))?;
        self.0.borrow_mut().no_rows = Some(ud.clone());
        Ok(ud)
    }
}

impl UserData for LuaConn {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("sql_errno", |_, this| Ok(this.0.borrow().errno));
        f.add_field_method_get("sql_state", |_, this| Ok(this.0.borrow().state.clone()));
        f.add_field_method_get("sql_errmsg", |_, this| Ok(this.0.borrow().errmsg.clone()));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method("__tostring", |_, _, ()| Ok("<sql_connection>"));
        m.add_method("query", |lua, this, sql: String| {
            let mut rows = Vec::new();
            let r = this
                .0
                .borrow_mut()
                .run_text(lua, &this.value(), &sql, Some(&mut rows));
            match answer(lua, r)? {
                true => lua.create_userdata(this.result(rows)),
                false => this.no_rows(lua),
            }
        });
        m.add_method("query_row", |lua, this, sql: String| {
            let mut rows = Vec::new();
            let r = this
                .0
                .borrow_mut()
                .run_text(lua, &this.value(), &sql, Some(&mut rows));
            let r = r.and_then(|_| {
                let mut out = MultiValue::new();
                // No row: sysbench's query_row answers nil.
                if rows.is_empty() {
                    out.push_back(Value::Nil);
                }
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
            answer(lua, r)
        });
        m.add_method("prepare", |lua, this, sql: String| {
            let word: String = sql
                .trim_start()
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect::<String>()
                .to_ascii_uppercase();
            let kind = match word.as_str() {
                "BEGIN" | "START" => Ok(StmtKind::Begin),
                "COMMIT" => Ok(StmtKind::Commit),
                "ROLLBACK" => Ok(StmtKind::Rollback),
                _ => {
                    let mut st = this.0.borrow_mut();
                    let dialect = st.target.dialect();
                    st.conn(2).and_then(|c| {
                        c.prepare(&sql)
                            .map(|id| StmtKind::Prepared {
                                id,
                                read: returns_rows(&sql),
                            })
                            .map_err(|e| {
                                let errno = e
                                    .code
                                    .split_whitespace()
                                    .next()
                                    .and_then(|n| n.parse().ok())
                                    .unwrap_or(0);
                                super::say::failed_prepare(dialect, &e, errno, &sql);
                                super::say::api_error(2)
                            })
                    })
                }
            };
            let r = kind.map(|kind| LuaStmt {
                conn: this.clone(),
                kind,
                binds: Vec::new(),
                sql,
            });
            answer(lua, r)
        });
        // On a closed connection sysbench's bulk calls say so and do nothing, without failing.
        m.add_method("bulk_insert_init", |lua, this, prefix: String| {
            let mut st = this.0.borrow_mut();
            if st.conn.is_none() {
                super::say::alert("attempt to use an already closed connection");
                return answer(lua, Ok(true));
            }
            st.result_set = false;
            st.bulk = Some((prefix, String::new(), 0));
            answer(lua, Ok(true))
        });
        m.add_method(
            "bulk_insert_next", |lua, this, values: String| {
            let mut st = this.0.borrow_mut();
            if st.conn.is_none() {
                super::say::alert("attempt to use an already closed connection");
                return answer(lua, Ok(true));
            }
            st.result_set = false;
            let Some((prefix, rows, n)) = st.bulk.as_ref() else {
                super::say::alert("attempt to call bulk_insert_next() before bulk_insert_init()");
                return answer(lua, Err(bulk_failed("next")));
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
                if let Err(e) = st.flush_bulk(lua, &this.value()) {
                    return answer(lua, Err(as_bulk(e, "next")));
                }
            }
            if let Some((_, rows, n)) = st.bulk.as_mut() {
                if *n > 0 {
                    rows.push(',');
                }
                rows.push_str(&values);
                *n += 1;
            }
            answer(lua, Ok(true))
        });
        m.add_method("bulk_insert_done", |lua, this, ()| {
            let mut st = this.0.borrow_mut();
            let r = st.flush_bulk(lua, &this.value());
            st.bulk = None;
            answer(lua, r.map(|()| true).map_err(|e| as_bulk(e, "done")))
        });
        m.add_method("disconnect", |_, this, ()| {
            let mut st = this.0.borrow_mut();
            if st.conn.take().is_none() {
                super::say::alert("attempt to close an already closed connection");
            }
            st.result_set = false;
            Ok(true)
        });
        m.add_method("reconnect", |lua, this, ()| {
            let mut st = this.0.borrow_mut();
            // sysbench's pgsql driver has no reconnect: it says so and keeps the connection.
            if st.target.dialect() == Dialect::Postgres {
                super::say::alert("reconnect is not supported by the current driver");
                return Ok(true);
            }
            if st.conn.is_none() {
                super::say::alert("attempt to close an already closed connection");
                return Ok(true);
            }
            st.conn = None;
            st.result_set = false;
            match st.target.connect() {
                Ok(conn) => {
                    st.conn = Some(conn);
                    // sysbench counts the reconnect (its report's `reconnects`).
                    st.count(|q| q.script_reconnects += 1);
                }
                Err(e) => {
                    return match st.fail(lua, this.value()(lua), e, Sent::Nothing) {
                        Failed::Lua(e) => Err(e),
                        Failed::Raise(msg, _) => Err(mlua::Error::runtime(msg)),
                    };
                }
            }
            Ok(true)
        });
        m.add_method("check_error", |_, this, ()| Ok(this.0.borrow().errno));
    }
}

/// `bulk_insert_next` and `bulk_insert_done` fail as sysbench's assert says it.
fn bulk_failed(which: &str) -> Failed {
    Failed::Raise(format!("db_bulk_insert_{which}() failed"), 2)
}

fn as_bulk(e: Failed, which: &str) -> Failed {
    match e {
        Failed::Raise(..) => bulk_failed(which),
        other => other,
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
    /// CHAR and VARCHAR parameters: the longest value in bytes (`bind_create`'s length); a
    /// longer one is cut, as sysbench copies at most that much.
    max_len: Option<usize>,
}

impl LuaParam {
    fn cut(&self, mut text: String) -> String {
        if let Some(max) = self.max_len
            && text.len() > max
        {
            let mut at = max;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
        }
        text
    }
}

impl UserData for LuaParam {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_meta_method("__tostring", |_, _, ()| Ok("<sql_param>"));
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
                        _ => BindValue::Text(this.cut(text)),
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
            *this.value.borrow_mut() = BindValue::Text(this.cut(s));
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
        m.add_meta_method("__tostring", |_, _, ()| Ok("<sql_statement>"));
        m.add_method("bind_create", |lua, this, (ty, len): (i64, Option<i64>)| {
            // TINYINT..BIGINT, FLOAT and DOUBLE, CHAR and VARCHAR, as sysbench binds them.
            if !(1..=6).contains(&ty) && !(11..=12).contains(&ty) {
                return answer(
                    lua,
                    Err(Failed::Raise(format!("Unsupported argument type: {ty}"), 2)),
                );
            }
            let data = this.conn.0.borrow().data.clone();
            answer(
                lua,
                Ok(LuaParam {
                    value: Rc::new(RefCell::new(BindValue::Null)),
                    data,
                    integer: (1..=4).contains(&ty),
                    max_len: (11..=12)
                        .contains(&ty)
                        .then(|| len.and_then(|l| usize::try_from(l).ok()))
                        .flatten(),
                }),
            )
        });
        m.add_method_mut("bind_param", |lua, this, params: Variadic<AnyUserData>| {
            // No parameter: sysbench binds nothing and answers nil.
            if params.is_empty() {
                return answer(lua, Ok(Value::Nil));
            }
            this.binds = params
                .iter()
                .map(|p| p.borrow::<LuaParam>().map(|p| p.value.clone()))
                .collect::<mlua::Result<_>>()?;
            answer(lua, Ok(Value::Integer(0)))
        });
        m.add_method("execute", |lua, this, ()| {
            let r = this.run(lua);
            answer(lua, r)?;
            this.conn.no_rows(lua)
        });
        m.add_method("close", |_, _, ()| Ok(()));
    }
}

impl LuaStmt {
    fn run(&self, lua: &Lua) -> Result<(), Failed> {
        let mut st = self.conn.0.borrow_mut();
        let out = match self.kind {
            StmtKind::Begin => st.conn(3)?.begin(false),
            StmtKind::Commit => st.conn(3)?.commit(),
            StmtKind::Rollback => st.conn(3)?.rollback(),
            StmtKind::Prepared { id, read } => {
                let values: Vec<std::cell::Ref<BindValue>> =
                    self.binds.iter().map(|b| b.borrow()).collect();
                let params: Vec<Param> = values
                    .iter()
                    .map(|v| match &**v {
                        BindValue::Null => Param::Null,
                        BindValue::Int(i) => Param::Int(*i),
                        BindValue::Text(s) => Param::Text(s),
                    })
                    .collect();
                let conn = st.conn(3)?;
                let r = if read {
                    conn.query(id, &params).map(|rows| (true, rows))
                } else {
                    conn.execute(id, &params).map(|changed| (false, changed))
                };
                drop(params);
                drop(values);
                match r {
                    Ok((true, rows)) => {
                        st.result_set = true;
                        st.count(|q| q.read(rows));
                        return Ok(());
                    }
                    Ok((false, changed)) => {
                        st.result_set = false;
                        st.count(|q| q.dml(changed));
                        return Ok(());
                    }
                    Err(e) => Err(e),
                }
            }
        };
        out.map_err(|e| st.fail(lua, self.conn.value()(lua), e, Sent::Prepared(&self.sql)))?;
        st.result_set = false;
        st.count(|q| q.others += 1);
        Ok(())
    }
}

/// An SQL API call's outcome as Lua sees it: its value, or the error sysbench raises.
fn answer<T>(lua: &Lua, r: Result<T, Failed>) -> mlua::Result<T> {
    r.map_err(|f| f.into_lua(lua))
}

/// A result set: all rows, read on `fetch_row`; its connection's, as sysbench's is.
struct LuaResult {
    /// Weak: the connection keeps its rowless result set (`no_rows`).
    conn: std::rc::Weak<RefCell<ConnState>>,
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
        m.add_meta_method("__tostring", |_, _, ()| Ok("<sql_result>"));
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
        // sysbench frees its connection's one result set: one that is not there (a write's,
        // one freed, a closed connection's) is refused.
        m.add_function("free", |lua, ud: AnyUserData| {
            let this = ud.borrow::<LuaResult>()?;
            let Some(conn) = this.conn.upgrade() else {
                super::say::alert("attempt to use an already closed connection");
                return answer(
                    lua,
                    Err(Failed::Raise("db_free_results() failed".into(), 2)),
                );
            };
            let mut st = conn.borrow_mut();
            let r = if st.conn.is_none() {
                super::say::alert("attempt to use an already closed connection");
                Err(Failed::Raise("db_free_results() failed".into(), 2))
            } else if !st.result_set {
                super::say::alert("attempt to free an invalid result set");
                Err(Failed::Raise("db_free_results() failed".into(), 2))
            } else {
                st.result_set = false;
                Ok(true)
            };
            answer(lua, r)
        });
    }
}
