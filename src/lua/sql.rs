//! `sysbench.sql`: drivers, connections, prepared statements and result sets over dbsweep's
//! targets, with sysbench's error handling (ignorable errors, reconnects) and its statistics.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use mlua::{
    AnyUserData, Lua, MultiValue, Table, UserData, UserDataFields, UserDataMethods, Value, Variadic,
};

use super::state::BULK_BYTES;
use super::state::ConnState;
use super::state::StateData;
use super::state::returns_rows;
use super::state::sql_error;
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
        lua.create_function(move |_, _name: Option<String>| {
            let target = d.ctx.target.clone().ok_or_else(|| {
                mlua::Error::runtime("no database: this command runs without one")
            })?;
            d.ctx
                .sql_used
                .store(true, std::sync::atomic::Ordering::Relaxed);
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
        m.add_meta_method("__tostring", |_, _, ()| Ok("<sql_driver>"));
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

#[derive(Clone)]
struct LuaConn(Rc<RefCell<ConnState>>);

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
        m.add_method("bind_create", |_, this, (ty, len): (i64, Option<i64>)| {
            let data = this.conn.0.borrow().data.clone();
            Ok(LuaParam {
                value: Rc::new(RefCell::new(BindValue::Null)),
                data,
                // TINYINT..BIGINT
                integer: (1..=4).contains(&ty),
                // CHAR, VARCHAR
                max_len: (11..=12)
                    .contains(&ty)
                    .then(|| len.and_then(|l| usize::try_from(l).ok()))
                    .flatten(),
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
        m.add_method("free", |_, _, ()| Ok(()));
    }
}
