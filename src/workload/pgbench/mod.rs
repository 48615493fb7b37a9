//! pgbench's workloads in dbsweep: its built-in scripts (`pgbench_tpcb_like`,
//! `pgbench_simple_update`, `pgbench_select_only`) and custom scripts (`pgbench --script
//! FILE[@WEIGHT]`), each event one run of a script chosen by weight, with pgbench's meaning
//! (its variables, expressions and SQL). `prepare` makes pgbench's four tables as `pgbench -i`
//! does (`--scale`), so that pgbench and dbsweep run on each other's data.

pub mod expr;
pub mod init;
pub mod script;
mod shell;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use super::names::static_name;
use super::options::WorkloadOptions;
use super::rand::Rand;
use super::tables::TableSet;
use super::traits::{Client, Workload};
use crate::clock::Stamp;
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
        o.pgbench_scripts
            .iter()
            .map(|s| read_script(s))
            .collect::<Result<Vec<_>, Error>>()
            .and_then(|scripts| {
                // pgbench refuses this rather than run the first script.
                if scripts.iter().all(|(_, w)| *w == 0) {
                    Err(Error::Option {
                        option: "script".into(),
                        why: "total script weight must not be zero".into(),
                    })
                } else {
                    Ok(scripts)
                }
            })
    } else {
        let (_, builtin) = BUILTIN_WORKLOADS.iter().find(|(w, _)| *w == name)?;
        let (n, _, text) = script::builtin(builtin).expect("a builtin");
        Ok(vec![(script::parse(n, text).expect("builtins parse"), 1)])
    };
    Some(scripts.map(|scripts| {
        let script_names = scripts
            .iter()
            .enumerate()
            .map(|(k, (s, _))| format!("{} {}", k + 1, s.name))
            .collect();
        Box::new(Pgbench {
            name: static_name(name),
            builtin: name != "pgbench",
            statements: intern(command_names(&scripts)),
            script_names: intern(script_names),
            scale: std::sync::OnceLock::new(),
            scripts,
            opts: o.clone(),
        }) as Box<dyn Workload>
    }))
}

/// The script of `-f -`: standard input, read once (the script is read again where the run
/// is built) and at most [`crate::input::SMALL`] bytes, as a file's.
fn stdin_script() -> Result<String, String> {
    static TEXT: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        use std::io::Read;
        // Read on a thread of its own: a terminal's standard input waits for the user, and
        // that wait ends on the first Ctrl-C here, not only at the end of the input.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = std::io::stdin()
                .take(crate::input::SMALL + 1)
                .read_to_end(&mut bytes)
                .map(|_| bytes);
            let _ = tx.send(read);
        });
        let bytes = loop {
            match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                Ok(read) => break read.map_err(|e| e.to_string())?,
                Err(_) if crate::interrupt::interrupted() => return Err("interrupted".into()),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err("the reader stopped".into());
                }
            }
        };
        if bytes.len() as u64 > crate::input::SMALL {
            return Err(format!(
                "past the {} MiB a script may hold",
                crate::input::SMALL >> 20
            ));
        }
        String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
    })
    .clone()
}

/// `FILE[@WEIGHT]` or `builtin:NAME[@WEIGHT]`: the script and its weight.
pub fn read_script(spec: &str) -> Result<(Script, u32), Error> {
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
            let text = if path == "-" {
                stdin_script().map_err(|e| bad(format!("-: could not read standard input: {e}")))?
            } else {
                crate::input::read_text(std::path::Path::new(path), crate::input::SMALL)
                    .map_err(|e| bad(format!("{path}: could not open file: {e}")))?
            };
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
    /// Every script's commands ([`command_names`]), each timed as a statement kind.
    statements: &'static [&'static str],
    /// "N NAME" of each script, each a transaction kind with its count and latency.
    script_names: &'static [&'static str],
    /// The builtins' scale, read from the data once (a client made again on every
    /// reconnection, pgbench's -C, does not ask again).
    scale: std::sync::OnceLock<i64>,
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

    fn statements(&self) -> &'static [&'static str] {
        self.statements
    }

    fn kinds(&self) -> &'static [&'static str] {
        self.script_names
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        let scale = if self.builtin {
            // pgbench reads the scale of its built-in scripts from the data.
            match self.scale.get() {
                Some(s) => *s,
                None => {
                    let s = conn
                        .query_i64("SELECT count(*) FROM pgbench_branches")?
                        .unwrap_or(1)
                        .max(1);
                    *self.scale.get_or_init(|| s)
                }
            }
        } else {
            i64::from(self.opts.scale.max(1))
        };
        let mut vars: HashMap<String, Value> = HashMap::new();
        let mut texts: HashMap<String, String> = HashMap::new();
        vars.insert("scale".into(), Value::Int(scale));
        vars.insert("client_id".into(), Value::Int(i64::from(thread)));
        vars.insert(
            "random_seed".into(),
            Value::Int(self.opts.rand.rand_seed as i64),
        );
        for d in &self.opts.pgbench_defines {
            if let Some((k, v)) = d.split_once('=') {
                keep(
                    &mut vars,
                    &mut texts,
                    k.to_string(),
                    stored(Some(v.as_bytes())),
                );
            }
        }
        let prepared =
            self.opts.ps_mode == super::PsMode::Auto && conn.dialect() == Dialect::Postgres;
        let mut stmts = Vec::new();
        for (s, _) in &self.scripts {
            let mut ids = Vec::new();
            for (i, c) in s.commands.iter().enumerate() {
                if let Command::Sql { parts: 2.., .. } = c
                    && conn.dialect() != Dialect::Postgres
                {
                    return Err(script_error(
                        s,
                        i,
                        "\\; sends several statements in one query string, which dbsweep does on PostgreSQL only".into(),
                    ));
                }
                ids.push(match c {
                    Command::Sql {
                        text, store: None, ..
                    } if prepared => Some(conn.prepare(&text.join("?"))?),
                    _ => None,
                });
            }
            stmts.push(ids);
        }
        let total: u64 = self.scripts.iter().map(|(_, w)| u64::from(*w)).sum();
        let first = self
            .scripts
            .iter()
            .scan(0, |at, (s, _)| {
                let first = *at;
                *at += s.commands.len();
                Some(first)
            })
            .collect();
        Ok(Box::new(PgbenchClient {
            scripts: std::sync::Arc::new(self.scripts.clone()),
            stmts,
            total,
            vars,
            texts,
            sql: String::new(),
            seed: self.opts.rand.rand_seed,
            first,
            last: 0,
            laps: Vec::new(),
            failed_at: None,
            pipeline: None,
            prepared,
            rand_at_start: None,
            retry: false,
        }))
    }
}

struct PgbenchClient {
    scripts: std::sync::Arc<Vec<(Script, u32)>>,
    /// Each SQL command's prepared statement (extended/prepared query mode).
    stmts: Vec<Vec<Option<StmtId>>>,
    total: u64,
    vars: HashMap<String, Value>,
    /// Variables whose values are text, not numbers (`-D name=text`, `\gset` of a text
    /// column): substituted into SQL as they are. A name is in one map or the other.
    texts: HashMap<String, String>,
    sql: String,
    seed: u64,
    /// Each script's first command's index in [`Workload::statements`].
    first: Vec<usize>,
    /// The script the last event ran.
    last: usize,
    /// The last event's commands, timed.
    laps: Vec<(u16, u64)>,
    /// The script and command of the last event's error.
    failed_at: Option<(usize, usize)>,
    /// Inside `\startpipeline`: what is queued.
    pipeline: Option<Piped>,
    /// Whether SQL runs as prepared statements (-M extended, prepared), which pipelines need.
    prepared: bool,
    /// The random state at the last event's start, and whether the next event retries it:
    /// pgbench tries a failed transaction again with the same script and random values.
    rand_at_start: Option<Rand>,
    retry: bool,
}

/// An open pipeline's queue: the SQL commands queued (their index, and whether each reads)
/// and the Syncs.
#[derive(Default)]
struct Piped {
    queued: Vec<(usize, bool)>,
    syncs: usize,
}

/// A variable's value as SQL gets it.
enum Arg<'a> {
    Num(Value),
    Text(&'a str),
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

/// `\sleep`: `d`, in slices of 10 ms, ended early by Ctrl-C (SIGTERM); false when cut short.
/// The end of `-T` does not cut it: pgbench finishes (and counts) the transaction in flight.
fn nap(d: std::time::Duration) -> bool {
    let until = std::time::Instant::now() + d;
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return true;
        }
        if crate::interrupt::interrupted() {
            return false;
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(10)));
    }
}

/// The error of a transaction Ctrl-C cut short: not one of the run's.
fn run_ended(what: &'static str) -> DbError {
    DbError::new(ErrorClass::Fatal, crate::interrupt::RUN_ENDED, what)
}

fn script_error(script: &Script, i: usize, e: String) -> DbError {
    DbError::new(
        ErrorClass::Fatal,
        "pgbench",
        format!("{} command {}: {e}", script.name, i + 1),
    )
}

/// A value read back from the server (`\gset`), as pgbench keeps it: a number when it reads
/// as one, else text; NULL as an empty value.
/// A value that came as text (`-D`, `\gset`, `\aset`): its text, kept for SQL and `\shell`
/// as it came (`007` stays `007`), and the number it reads as in an expression, if any (as
/// pgbench parses a variable when an expression uses it). SQL NULL is a value of its own.
#[derive(Clone, Debug, PartialEq)]
enum Stored {
    Null,
    Text(String, Option<Value>),
}

fn stored(v: Option<&[u8]>) -> Stored {
    let Some(v) = v else { return Stored::Null };
    let t = String::from_utf8_lossy(v).into_owned();
    let n = numeric(&t);
    Stored::Text(t, n)
}

/// `t` as pgbench reads a variable's text in an expression: a decimal integer, else a double
/// that does not overflow (`1e400` is malformed, not infinity).
fn numeric(t: &str) -> Option<Value> {
    let s = t.trim();
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::Int(i));
    }
    let d = s.parse::<f64>().ok()?;
    let spelled_infinite = s.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if d.is_infinite() && !spelled_infinite.starts_with("inf") {
        return None;
    }
    Some(Value::Double(d))
}

/// Keeps `v` as variable `name` in `vars` and `texts`.
fn keep(
    vars: &mut HashMap<String, Value>,
    texts: &mut HashMap<String, String>,
    name: String,
    v: Stored,
) {
    match v {
        Stored::Null => {
            texts.remove(&name);
            vars.insert(name, Value::Null);
        }
        Stored::Text(t, n) => {
            match n {
                Some(n) => vars.insert(name.clone(), n),
                None => vars.remove(&name),
            };
            texts.insert(name, t);
        }
    }
}

impl PgbenchClient {
    fn eval(&mut self, e: &expr::Expr, rand: &mut Rand) -> Result<Value, String> {
        let mut env = Vars {
            vars: &self.vars,
            rand,
            seed: self.seed,
        };
        expr::eval(e, &mut env).map_err(|e| match e.strip_prefix("undefined variable ") {
            // A text variable in an expression: pgbench's words.
            Some(v) if self.texts.contains_key(v.trim_matches('"')) => {
                let v = v.trim_matches('"');
                format!("malformed variable \"{v}\" value: \"{}\"", self.texts[v])
            }
            _ => e,
        })
    }

    /// Variable `name` set to a number (`\set`, `\setshell`): no text of its own any more.
    fn set(&mut self, name: String, v: Value) {
        self.texts.remove(&name);
        self.vars.insert(name, v);
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
        let scripts = self.scripts.clone();
        let script = &scripts[s].0;
        let Command::Sql {
            text,
            vars,
            source,
            store,
            parts,
        } = &script.commands[i]
        else {
            return Ok(());
        };
        // `\gset` takes the last statement's one row; `\aset` every statement's last row.
        let last_set = parts - 1;
        let every_set = matches!(store, Some(script::Store::All(_)));
        let mut values = Vec::with_capacity(vars.len());
        for v in vars {
            // A value that came as text is sent as it came.
            let arg = match (self.vars.get(v), self.texts.get(v)) {
                (_, Some(t)) => Arg::Text(t),
                (Some(n), None) => Arg::Num(*n),
                (None, None) => {
                    return Err(script_error(
                        script,
                        i,
                        format!("undefined variable \"{v}\" in \"{source}\""),
                    ));
                }
            };
            values.push(arg);
        }
        let read = source
            .get(..6)
            .is_some_and(|w| w.eq_ignore_ascii_case("select"));
        if self.pipeline.is_some() && store.is_some() {
            return Err(script_error(
                script,
                i,
                "\\gset is not allowed in pipeline mode".into(),
            ));
        }
        // The columns of the row kept (the last one of its result set), of `row_set`; and
        // those of earlier result sets kept under `\aset`.
        let mut row: Vec<(String, Stored)> = Vec::new();
        let mut row_set = 0;
        let mut earlier: Vec<(String, Stored)> = Vec::new();
        let mut rows = 0u64;
        let mut bad = None;
        let outcome = match self.stmts[s][i] {
            Some(stmt) if store.is_none() => {
                let texts: Vec<String> = values
                    .iter()
                    .map(|v| match v {
                        Arg::Num(n) => n.text(),
                        Arg::Text(t) => (*t).to_string(),
                    })
                    .collect();
                let params: Vec<Param> = values
                    .iter()
                    .zip(&texts)
                    .map(|(v, t)| match v {
                        Arg::Num(Value::Int(i)) => Param::Int(*i),
                        Arg::Num(Value::Null) => Param::Null,
                        _ => Param::Text(t),
                    })
                    .collect();
                if let Some(p) = self.pipeline.as_mut() {
                    conn.pipeline_queue(stmt, &params)?;
                    p.queued.push((i, read));
                    return Ok(());
                }
                if read {
                    let rows = conn.query(stmt, &params)?;
                    crate::db::StmtOutcome { rows, changed: 0 }
                } else {
                    let changed = conn.execute(stmt, &params)?;
                    crate::db::StmtOutcome { rows: 0, changed }
                }
            }
            // The text protocol, and every command whose result goes into variables (its
            // columns' names come with it).
            _ => {
                self.sql.clear();
                for (k, t) in text.iter().enumerate() {
                    self.sql.push_str(t);
                    match values.get(k) {
                        Some(Arg::Num(n)) => self.sql.push_str(&n.text()),
                        Some(Arg::Text(t)) => self.sql.push_str(t),
                        None => {}
                    }
                }
                let keep = store.is_some();
                conn.simple(&self.sql, &mut |r| {
                    let set = r.result_set();
                    if !keep || (!every_set && set != last_set) {
                        return;
                    }
                    rows += 1;
                    if set != row_set && every_set {
                        earlier.append(&mut row);
                    }
                    row_set = set;
                    row.clear();
                    for c in 0..r.len() {
                        match r.name(c) {
                            Some(name) => row.push((name.to_string(), stored(r.get(c)))),
                            None => bad = Some("this target's client does not give the columns' names that \\gset and \\aset need".to_string()),
                        }
                    }
                })?
            }
        };
        if let Some(store) = store {
            let prefix = match store {
                script::Store::One(p) => {
                    if rows != 1 {
                        bad = bad.or(Some(format!("expected one row, got {rows}")));
                    }
                    p
                }
                script::Store::All(p) => p,
            };
            if let Some(e) = bad {
                return Err(script_error(script, i, format!("{e} (\"{source}\")")));
            }
            for (name, v) in earlier.into_iter().chain(row) {
                keep(
                    &mut self.vars,
                    &mut self.texts,
                    format!("{prefix}{name}"),
                    v,
                );
            }
        }
        if read {
            q.read(outcome.rows);
        } else {
            q.dml(outcome.changed);
        }
        Ok(())
    }

    /// `\shell` / `\setshell VAR`: the words, variables put in, run by the shell; `\setshell`
    /// keeps the integer it prints. Errors are pgbench's, named by the command's first word;
    /// None when Ctrl-C ended the command.
    fn shell(&mut self, var: Option<&str>, words: &[String]) -> Result<(), Option<String>> {
        let program = words.first().map_or("", String::as_str);
        let mut line = String::new();
        for w in words {
            if !line.is_empty() {
                line.push(' ');
            }
            match w.strip_prefix(':') {
                Some(lit) if lit.starts_with(':') => line.push_str(lit),
                Some(name) => match (self.vars.get(name), self.texts.get(name)) {
                    (_, Some(t)) => line.push_str(t),
                    (Some(n), None) => line.push_str(&n.text()),
                    (None, None) => {
                        return Err(Some(format!("{program}: undefined variable \"{w}\"")));
                    }
                },
                None => line.push_str(w),
            }
        }
        match (shell::run(&line, var.is_some()), var) {
            (Ok(Some(out)), Some(var)) => {
                let n = shell::integer(&out).ok_or_else(|| {
                    Some(format!(
                        "{program}: shell command must return an integer (not \"{}\")",
                        out.trim_end()
                    ))
                })?;
                self.set(var.to_string(), Value::Int(n));
                Ok(())
            }
            (Ok(_), _) => Ok(()),
            (Err(shell::ShellError::Interrupted), _) => Err(None),
            (Err(shell::ShellError::Failed), Some(_)) => {
                Err(Some(format!("{program}: could not run shell command")))
            }
            (Err(shell::ShellError::Failed), None) => {
                Err(Some(format!("{program}: could not launch shell command")))
            }
        }
    }

    /// The script to run, by weight.
    fn choose(&self, rand: &mut Rand) -> usize {
        let mut x = rand.uniform(1, self.total.max(1));
        for (k, (_, w)) in self.scripts.iter().enumerate() {
            if x <= u64::from(*w) {
                return k;
            }
            x -= u64::from(*w);
        }
        0
    }
}

/// What a pgbench client keeps across its connections: its variables.
type Kept = (HashMap<String, Value>, HashMap<String, String>);

impl Client for PgbenchClient {
    fn hand_over(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        let kept: Kept = (
            std::mem::take(&mut self.vars),
            std::mem::take(&mut self.texts),
        );
        Some(Box::new(kept))
    }

    fn will_retry(&mut self) {
        self.retry = true;
    }

    fn take_over(&mut self, from: Box<dyn std::any::Any + Send>) {
        if let Ok(kept) = from.downcast::<Kept>() {
            (self.vars, self.texts) = *kept;
        }
    }

    fn event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        self.timed_event(conn, rand, q, crate::clock::now())
            .map(drop)
    }

    /// One run of a script chosen by weight, each command timed from the end of the one
    /// before (as pgbench's `-r`): its `\set` and `\if` too.
    fn timed_event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
        start: Stamp,
    ) -> Result<Option<Stamp>, DbError> {
        let ran = self.run_script(conn, rand, q, start);
        if ran.is_err() && self.pipeline.take().is_some() {
            // What the pipeline queued is not sent after an error.
            conn.pipeline_discard();
        }
        ran
    }

    fn statement_times(&self) -> &[(u16, u64)] {
        &self.laps
    }

    fn last_kind(&self) -> Option<(usize, bool)> {
        Some((self.last, false))
    }

    fn error_at(&self) -> Option<crate::workload::traits::ErrorAt> {
        self.failed_at
            .map(|(script, command)| crate::workload::traits::ErrorAt {
                script,
                command,
                statement: self.first[script] + command,
            })
    }
}

impl PgbenchClient {
    /// One run of a script chosen by weight (see [`Client::timed_event`]).
    fn run_script(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
        start: Stamp,
    ) -> Result<Option<Stamp>, DbError> {
        self.laps.clear();
        self.failed_at = None;
        match (std::mem::take(&mut self.retry), &mut self.rand_at_start) {
            (true, Some(saved)) => rand.clone_from(saved),
            (_, Some(saved)) => saved.clone_from(rand),
            (_, at) => *at = Some(rand.clone()),
        }
        let s = self.choose(rand);
        self.last = s;
        let scripts = self.scripts.clone();
        let script = &scripts[s].0;
        let mut lap = start;
        let mut i = 0;
        while i < script.commands.len() {
            let ran = i;
            let fail = |e: String| script_error(script, i, e);
            match &script.commands[i] {
                Command::Sql { .. } => {
                    if let Err(e) = self.run_sql(conn, q, (s, i)) {
                        self.failed_at = Some((s, i));
                        if e.class.retry_slot().is_some() {
                            // The script's own BEGIN left a transaction open, which the
                            // connection does not know of: end it before the next try, as
                            // pgbench does (outside a transaction block it is a warning).
                            let _ = conn.simple("ROLLBACK", &mut |_| {});
                        }
                        return Err(e);
                    }
                    i += 1;
                }
                Command::Set(name, e) => {
                    let v = self.eval(e, rand).map_err(fail)?;
                    self.set(name.clone(), v);
                    i += 1;
                }
                Command::Sleep(e, unit) => {
                    let n = self.eval(e, rand).and_then(Value::as_int).map_err(fail)?;
                    let us = u64::try_from(n).unwrap_or(0).saturating_mul(*unit);
                    if !nap(std::time::Duration::from_micros(us)) {
                        return Err(run_ended("interrupted during \\sleep"));
                    }
                    i += 1;
                }
                Command::Shell(var, words) => {
                    match self.shell(var.as_deref(), words) {
                        Ok(()) => {}
                        Err(Some(e)) => return Err(fail(e)),
                        Err(None) => return Err(run_ended("interrupted during \\shell")),
                    }
                    i += 1;
                }
                Command::StartPipeline => {
                    if self.pipeline.is_some() {
                        return Err(fail("already in pipeline mode".into()));
                    }
                    if !self.prepared {
                        return Err(fail(
                            "cannot use pipeline mode with the simple query protocol".into(),
                        ));
                    }
                    self.pipeline = Some(Piped::default());
                    i += 1;
                }
                Command::SyncPipeline => {
                    let Some(p) = self.pipeline.as_mut() else {
                        return Err(fail("not in pipeline mode".into()));
                    };
                    conn.pipeline_sync();
                    p.syncs += 1;
                    i += 1;
                }
                Command::EndPipeline => {
                    let Some(mut p) = self.pipeline.take() else {
                        return Err(fail("not in pipeline mode".into()));
                    };
                    conn.pipeline_sync();
                    p.syncs += 1;
                    let mut k = 0;
                    let sent = conn.pipeline_send(p.syncs, &mut |o| {
                        match p.queued.get(k) {
                            Some((_, true)) => q.read(o.rows),
                            _ => q.dml(o.changed),
                        }
                        k += 1;
                    });
                    if let Err((at, e)) = sent {
                        let cmd = p.queued.get(at).map_or(i, |(c, _)| *c);
                        self.failed_at = Some((s, cmd));
                        if e.class.retry_slot().is_some() {
                            // As after a statement's error: end the script's transaction.
                            let _ = conn.simple("ROLLBACK", &mut |_| {});
                        }
                        return Err(e);
                    }
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
            let now = crate::clock::now();
            // Commands past the 65,536th of all the scripts are run, not timed.
            if let Ok(k) = u16::try_from(self.first[s] + ran) {
                self.laps.push((k, now.nanos_since(lap)));
            }
            lap = now;
        }
        if self.pipeline.is_some() {
            return Err(script_error(
                script,
                script.commands.len().saturating_sub(1),
                "end of script reached with pipeline open".into(),
            ));
        }
        Ok(Some(lap))
    }

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

/// `s` for as long as the program runs: the names of a run's scripts and commands, kept once
/// however many runs a sweep makes of the same scripts.
fn intern(names: Vec<String>) -> &'static [&'static str] {
    static KEPT: std::sync::Mutex<Vec<&'static [&'static str]>> = std::sync::Mutex::new(Vec::new());
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = kept
        .iter()
        .find(|k| k.len() == names.len() && k.iter().zip(&names).all(|(a, b)| *a == b))
    {
        return k;
    }
    let leaked: Vec<&'static str> = names
        .into_iter()
        .map(|n| &*Box::leak(n.into_boxed_str()))
        .collect();
    let k: &'static [&'static str] = Box::leak(leaked.into_boxed_slice());
    kept.push(k);
    k
}

/// The names of the scripts' commands, as results keep them: "SCRIPT.COMMAND first line"
/// (numbered from 1), unique however often a line repeats.
pub fn command_names(scripts: &[(Script, u32)]) -> Vec<String> {
    scripts
        .iter()
        .enumerate()
        .flat_map(|(k, (s, _))| {
            s.sources
                .iter()
                .enumerate()
                .map(move |(i, src)| format!("{}.{} {src}", k + 1, i + 1))
        })
        .collect()
}
