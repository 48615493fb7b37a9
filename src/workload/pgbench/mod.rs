//! pgbench's workloads in dbsweep: its built-in scripts (`pgbench_tpcb_like`,
//! `pgbench_simple_update`, `pgbench_select_only`) and custom scripts (`pgbench --script
//! FILE[@WEIGHT]`), each event one run of a script chosen by weight, with pgbench's meaning
//! (its variables, expressions and SQL). `prepare` makes pgbench's four tables as `pgbench -i`
//! does (`--scale`), so that pgbench and dbsweep run on each other's data.

pub mod expr;
pub mod init;
pub mod script;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use super::names::static_name;
use super::options::WorkloadOptions;
use super::rand::Rand;
use super::tables::TableSet;
use super::traits::{Client, Workload};
use crate::db::{Conn, DbError, Dialect, ErrorClass, Param, QueryCounts, StmtId, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;
use expr::{Env, Value};
use script::{Command, Script};

/// The workload names of pgbench's built-in scripts and the scripts' names.
const BUILTIN_WORKLOADS: [(&str, &str); 3] = [
    ("pgbench_tpcb_like", "tpcb-like"),
    ("pgbench_simple_update", "simple-update"),
    ("pgbench_select_only", "select-only"),
];

/// pgbench's tables, which its built-in scripts need.
pub const TABLES: [&str; 4] = [
    "pgbench_accounts",
    "pgbench_branches",
    "pgbench_tellers",
    "pgbench_history",
];

pub fn build(name: &str, o: &WorkloadOptions) -> Option<Result<Box<dyn Workload>, Error>> {
    let scripts: Result<Vec<(Script, u32)>, Error> = if name == "pgbench" {
        if o.pgbench_scripts.is_empty() {
            return Some(Err(Error::Option {
                option: "script".into(),
                why: "the pgbench workload runs the scripts of --script FILE[@WEIGHT] (or a builtin: tpcb-like, simple-update, select-only)".into(),
            }));
        }
        o.pgbench_scripts.iter().map(|s| read_script(s)).collect()
    } else {
        let (_, builtin) = BUILTIN_WORKLOADS.iter().find(|(w, _)| *w == name)?;
        let (n, _, text) = script::builtin(builtin).expect("a builtin");
        Ok(vec![(script::parse(n, text).expect("builtins parse"), 1)])
    };
    Some(scripts.map(|scripts| {
        Box::new(Pgbench {
            name: static_name(name),
            builtin: name != "pgbench",
            scripts,
            opts: o.clone(),
        }) as Box<dyn Workload>
    }))
}

/// `FILE[@WEIGHT]` or `builtin:NAME[@WEIGHT]`: the script and its weight.
fn read_script(spec: &str) -> Result<(Script, u32), Error> {
    let bad = |why: String| Error::Option {
        option: "script".into(),
        why,
    };
    let (path, weight) = match spec.rsplit_once('@') {
        Some((p, w)) => (
            p,
            w.parse::<u32>()
                .ok()
                .filter(|w| *w <= i32::MAX as u32)
                .ok_or_else(|| bad(format!("{spec}: invalid weight specification: @{w}")))?,
        ),
        None => (spec, 1),
    };
    let (name, text) = match path.strip_prefix("builtin:") {
        Some(b) => {
            let (n, _, t) = script::builtin(b).map_err(bad)?;
            (n.to_string(), t.to_string())
        }
        None => {
            let text = crate::input::read_text(std::path::Path::new(path), crate::input::SMALL)
                .map_err(|e| bad(format!("{path}: could not open file: {e}")))?;
            (path.to_string(), text)
        }
    };
    let s = script::parse(&name, &text).map_err(|e| Error::Usage(e.to_string()))?;
    Ok((s, weight))
}

struct Pgbench {
    name: &'static str,
    builtin: bool,
    scripts: Vec<(Script, u32)>,
    opts: WorkloadOptions,
}

impl Workload for Pgbench {
    fn name(&self) -> &'static str {
        self.name
    }

    fn tables(&self) -> TableSet {
        TableSet::bulk(0)
    }

    fn prepare(
        &self,
        target: &dyn Target,
        opts: &WorkloadOptions,
        force: bool,
        stop: &AtomicBool,
    ) -> Result<LoadReport, Error> {
        init::run(target, &init::Init::of(opts), force, stop)
    }

    fn cleanup(&self, target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
        init::drop_tables(target, o)
    }

    fn tables_missing(&self, conn: &mut dyn Conn) -> Result<bool, DbError> {
        if !self.builtin {
            return Ok(false);
        }
        for t in TABLES {
            if !conn.table_exists(t)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        _: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        if self.tables_missing(conn).map_err(|e| Error::db(url, e))? {
            return Err(Error::Usage(format!(
                "{url}: pgbench's tables are missing; run `dbsweep prepare {} --scale N` (or pgbench -i) first",
                self.name
            )));
        }
        Ok(())
    }

    fn shares_connections(&self) -> bool {
        // A script's BEGIN may leave a transaction open across its commands only.
        false
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        let scale = if self.builtin {
            // pgbench reads the scale of its built-in scripts from the data.
            conn.query_i64("SELECT count(*) FROM pgbench_branches")?
                .unwrap_or(1)
                .max(1)
        } else {
            i64::from(self.opts.scale.max(1))
        };
        let mut vars: HashMap<String, Value> = HashMap::new();
        vars.insert("scale".into(), Value::Int(scale));
        vars.insert("client_id".into(), Value::Int(i64::from(thread)));
        vars.insert(
            "random_seed".into(),
            Value::Int(self.opts.rand.rand_seed as i64),
        );
        for d in &self.opts.pgbench_defines {
            if let Some((k, v)) = d.split_once('=') {
                let v = v
                    .parse::<i64>()
                    .map(Value::Int)
                    .or_else(|_| v.parse::<f64>().map(Value::Double))
                    .unwrap_or(Value::Null);
                vars.insert(k.to_string(), v);
            }
        }
        let prepared =
            self.opts.ps_mode == super::PsMode::Auto && conn.dialect() == Dialect::Postgres;
        let mut stmts = Vec::new();
        for (s, _) in &self.scripts {
            let mut ids = Vec::new();
            for c in &s.commands {
                ids.push(match c {
                    Command::Sql { text, .. } if prepared => Some(conn.prepare(&text.join("?"))?),
                    _ => None,
                });
            }
            stmts.push(ids);
        }
        let total: u64 = self.scripts.iter().map(|(_, w)| u64::from(*w)).sum();
        Ok(Box::new(PgbenchClient {
            scripts: std::sync::Arc::new(self.scripts.clone()),
            stmts,
            total,
            vars,
            sql: String::new(),
            seed: self.opts.rand.rand_seed,
        }))
    }
}

struct PgbenchClient {
    scripts: std::sync::Arc<Vec<(Script, u32)>>,
    /// Each SQL command's prepared statement (extended/prepared query mode).
    stmts: Vec<Vec<Option<StmtId>>>,
    total: u64,
    vars: HashMap<String, Value>,
    sql: String,
    seed: u64,
}

struct Vars<'a> {
    vars: &'a HashMap<String, Value>,
    rand: &'a mut Rand,
    seed: u64,
}

impl Env for Vars<'_> {
    fn var(&self, name: &str) -> Option<Value> {
        self.vars.get(name).copied()
    }
    fn rand(&mut self) -> &mut Rand {
        self.rand
    }
    fn seed(&self) -> u64 {
        self.seed
    }
}

/// `\sleep`: at most `d`, in slices of 10 ms, ended early by Ctrl-C (SIGTERM) or by the run
/// passing its end, so that a script's long sleep holds up neither.
fn nap(d: std::time::Duration) {
    let until = std::time::Instant::now() + d;
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero()
            || crate::interrupt::interrupted()
            || crate::interrupt::run_overrun().is_some()
        {
            return;
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(10)));
    }
}

fn script_error(script: &Script, i: usize, e: String) -> DbError {
    DbError::new(
        ErrorClass::Fatal,
        "pgbench",
        format!("{} command {}: {e}", script.name, i + 1),
    )
}

impl PgbenchClient {
    fn eval(&mut self, e: &expr::Expr, rand: &mut Rand) -> Result<Value, String> {
        let mut env = Vars {
            vars: &self.vars,
            rand,
            seed: self.seed,
        };
        expr::eval(e, &mut env)
    }

    /// The index after the `\endif` of the block whose branch command is at `i`.
    fn after_block(script: &Script, mut i: usize) -> usize {
        while let Some(next) = script.jumps[i] {
            i = next;
        }
        i + 1
    }

    fn run_sql(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        (s, i): (usize, usize),
    ) -> Result<(), DbError> {
        let script = &self.scripts[s].0;
        let Command::Sql { text, vars, source } = &script.commands[i] else {
            return Ok(());
        };
        let mut values = Vec::with_capacity(vars.len());
        for v in vars {
            values.push(self.vars.get(v).copied().ok_or_else(|| {
                script_error(
                    script,
                    i,
                    format!("undefined variable \"{v}\" in \"{source}\""),
                )
            })?);
        }
        let read = source
            .get(..6)
            .is_some_and(|w| w.eq_ignore_ascii_case("select"));
        let outcome = match self.stmts[s][i] {
            Some(stmt) => {
                let texts: Vec<String> = values.iter().map(|v| v.text()).collect();
                let params: Vec<Param> = values
                    .iter()
                    .zip(&texts)
                    .map(|(v, t)| match v {
                        Value::Int(i) => Param::Int(*i),
                        Value::Null => Param::Null,
                        _ => Param::Text(t),
                    })
                    .collect();
                if read {
                    let rows = conn.query(stmt, &params)?;
                    crate::db::StmtOutcome { rows, changed: 0 }
                } else {
                    let changed = conn.execute(stmt, &params)?;
                    crate::db::StmtOutcome { rows: 0, changed }
                }
            }
            None => {
                self.sql.clear();
                for (k, t) in text.iter().enumerate() {
                    self.sql.push_str(t);
                    if let Some(v) = values.get(k) {
                        self.sql.push_str(&v.text());
                    }
                }
                conn.simple(&self.sql, &mut |_| {})?
            }
        };
        if read {
            q.read(outcome.rows);
        } else {
            q.dml(outcome.changed);
        }
        Ok(())
    }
}

impl Client for PgbenchClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        // The script, by weight.
        let mut x = rand.uniform(1, self.total.max(1));
        let mut s = 0;
        for (k, (_, w)) in self.scripts.iter().enumerate() {
            if x <= u64::from(*w) {
                s = k;
                break;
            }
            x -= u64::from(*w);
        }
        let scripts = self.scripts.clone();
        let script = &scripts[s].0;
        let mut i = 0;
        while i < script.commands.len() {
            let fail = |e: String| script_error(script, i, e);
            match &script.commands[i] {
                Command::Sql { .. } => {
                    self.run_sql(conn, q, (s, i))?;
                    i += 1;
                }
                Command::Set(name, e) => {
                    let v = self.eval(e, rand).map_err(fail)?;
                    self.vars.insert(name.clone(), v);
                    i += 1;
                }
                Command::Sleep(e, unit) => {
                    let n = self.eval(e, rand).and_then(Value::as_int).map_err(fail)?;
                    let us = u64::try_from(n).unwrap_or(0).saturating_mul(*unit);
                    nap(std::time::Duration::from_micros(us));
                    i += 1;
                }
                Command::If(e) => {
                    let taken = self.eval(e, rand).and_then(Value::truthy).map_err(fail)?;
                    i = if taken {
                        i + 1
                    } else {
                        self.next_branch(script, i, rand)?
                    };
                }
                // Reached by running the branch before it: the block is done.
                Command::Elif(_) | Command::Else => i = Self::after_block(script, i),
                Command::Endif => i += 1,
            }
        }
        Ok(())
    }
}

impl PgbenchClient {
    /// After a false `\if` or `\elif` at `i`: the first command of the branch that runs.
    fn next_branch(
        &mut self,
        script: &Script,
        mut i: usize,
        rand: &mut Rand,
    ) -> Result<usize, DbError> {
        loop {
            let next = script.jumps[i].expect("resolved when read");
            match &script.commands[next] {
                Command::Elif(e) => {
                    let taken = self
                        .eval(e, rand)
                        .and_then(Value::truthy)
                        .map_err(|e| script_error(script, next, e))?;
                    if taken {
                        return Ok(next + 1);
                    }
                    i = next;
                }
                _ => return Ok(next + 1),
            }
        }
    }
}
