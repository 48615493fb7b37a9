//! A pgbench client: one event runs a script chosen by weight, command by command (its SQL
//! prepared or as text, its meta-commands, pipelines, `\gset`/`\aset`), with pgbench's
//! variables and its retry of a failed transaction from the same random state.

use std::collections::HashMap;

use super::expr::{self, Env, Value};
use super::said::{debug_line, dollar_text, meta_words};
use super::script::{self, Command, Script};
use super::stmt::{Stmt, said_in};
use super::vars::{Stored, keep, stored};
use crate::clock::Stamp;
use crate::db::{Conn, DbError, ErrorClass, Param, QueryCounts};
use crate::output::note::{META_FAILED, OPEN_AT_END, STORE_FAILED};
use crate::workload::rand::Rand;
use crate::workload::traits::Client;

pub(super) struct PgbenchClient {
    pub(super) scripts: std::sync::Arc<Vec<(Script, u32)>>,
    /// Each SQL command's prepared statement (extended/prepared query mode), prepared where
    /// the client first runs it, as pgbench prepares.
    pub(super) stmts: Vec<Vec<Stmt>>,
    /// `-M extended`: an error in preparing is the command's.
    pub(super) extended: bool,
    /// The target is PostgreSQL: a command goes with its `;`, as pgbench sends it.
    pub(super) on_postgres: bool,
    pub(super) total: u64,
    pub(super) vars: HashMap<String, Value>,
    /// Variables whose values are text, not numbers (`-D name=text`, `\gset` of a text
    /// column): substituted into SQL as they are. A name is in one map or the other.
    pub(super) texts: HashMap<String, String>,
    pub(super) sql: String,
    /// Each script's first command's index in [`Workload::statements`].
    pub(super) first: Vec<usize>,
    /// The script the last event ran.
    pub(super) last: usize,
    /// The last event's commands, timed.
    pub(super) laps: Vec<(u16, u64)>,
    /// The script and command of the last event's error.
    pub(super) failed_at: Option<(usize, usize)>,
    /// Inside `\startpipeline`: what is queued.
    pub(super) pipeline: Option<Piped>,
    /// Whether SQL runs as prepared statements (-M extended, prepared), which pipelines need.
    pub(super) prepared: bool,
    /// The random state at the last event's start, and whether the next event retries it:
    /// pgbench tries a failed transaction again with the same script and random values.
    pub(super) rand_at_start: Option<Rand>,
    /// The client's random sequence for the scripts' functions, as pgbench seeds it from
    /// `--random-seed`, and its state at the last event's start (for a retry).
    pub(super) prng: expr::PgPrng,
    pub(super) prng_at_start: Option<expr::PgPrng>,
    pub(super) retry: bool,
    /// `-d`: the client's debugging lines, and its number in them.
    pub(super) debug: Option<super::Debug>,
    pub(super) id: u32,
    /// `-d -M prepared`: the commands whose preparing was said.
    pub(super) debug_prepared: std::cell::RefCell<Vec<(usize, usize)>>,
    /// The script ended inside a transaction block: the client aborts after counting it.
    pub(super) abort_after: Option<DbError>,
}

/// An open pipeline's queue: the SQL commands queued (their index, and whether each reads)
/// and the Syncs.
#[derive(Default)]
pub(super) struct Piped {
    queued: Vec<(usize, bool)>,
    syncs: usize,
}

/// A variable's value as SQL gets it.
enum Arg<'a> {
    Num(Value),
    Text(&'a str),
    /// An undefined variable: NULL as a parameter, its `:name` left as it is in the text
    /// protocol's SQL (as pgbench does).
    Missing(&'a str),
}

struct Vars<'a> {
    vars: &'a HashMap<String, Value>,
    rand: &'a mut expr::PgPrng,
    at: (usize, usize),
}

impl Env for Vars<'_> {
    fn var(&self, name: &str) -> Option<Value> {
        self.vars.get(name).copied()
    }
    fn rand(&mut self) -> &mut expr::PgPrng {
        self.rand
    }
    fn position(&self) -> (usize, usize) {
        self.at
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

/// Meta-command `word` failed: `e` (said first, if any), then `how`.
fn meta_failed(word: &str, how: &str, e: Option<String>) -> DbError {
    DbError::new(
        ErrorClass::Fatal,
        format!("{META_FAILED}{word}: {how}"),
        e.unwrap_or_default(),
    )
}

const EVALUATION: &str = "evaluation of meta-command failed";
const EXECUTION: &str = "execution of meta-command failed";
const ASSIGNMENT: &str = "assignment of meta-command failed";

pub(super) fn script_error(script: &Script, i: usize, e: String) -> DbError {
    DbError::new(
        ErrorClass::Fatal,
        "pgbench",
        format!("{} command {}: {e}", script.name, i + 1),
    )
}

impl PgbenchClient {
    /// `e`'s value, its random functions drawing from the client's own sequence.
    fn eval(&mut self, e: &expr::Expr, at: (usize, usize)) -> Result<Value, String> {
        let mut env = Vars {
            vars: &self.vars,
            rand: &mut self.prng,
            at,
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
    pub(super) fn set(&mut self, name: String, v: Value) {
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
            semicolon,
        } = &script.commands[i]
        else {
            return Ok(());
        };
        // `\gset` takes the last statement's one row; `\aset` every statement's last row.
        let last_set = parts - 1;
        let every_set = matches!(store, Some(script::Store::All(_)));
        let stmt = self.statement(conn, (s, i))?;
        let values = args_of((&self.vars, &self.texts), vars);
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
        let outcome = match stmt {
            Some(stmt) if store.is_none() => {
                let texts: Vec<String> = values
                    .iter()
                    .map(|v| match v {
                        Arg::Num(n) => n.text(),
                        Arg::Text(t) => (*t).to_string(),
                        Arg::Missing(_) => String::new(),
                    })
                    .collect();
                let params: Vec<Param> = values
                    .iter()
                    .zip(&texts)
                    .map(|(v, t)| match v {
                        Arg::Num(Value::Int(i)) => Param::Int(*i),
                        Arg::Num(Value::Null) | Arg::Missing(_) => Param::Null,
                        _ => Param::Text(t),
                    })
                    .collect();
                self.debug_sending((s, i), (text, *semicolon), None);
                if let Some(p) = self.pipeline.as_mut() {
                    conn.pipeline_queue(stmt, &params)?;
                    p.queued.push((i, read));
                    return Ok(());
                }
                self.debug_receiving();
                let done = if read {
                    conn.query(stmt, &params)
                        .map(|rows| crate::db::StmtOutcome { rows, changed: 0 })
                } else {
                    conn.execute(stmt, &params)
                        .map(|changed| crate::db::StmtOutcome { rows: 0, changed })
                };
                // libpq's message of an error shows where in the statement it was when it
                // sent the statement's text (`-M extended`), not a prepared one's name.
                done.map_err(|e| match self.extended {
                    true => said_in(e, || dollar_text(text, *semicolon)),
                    false => e,
                })?
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
                        Some(Arg::Missing(name)) => {
                            self.sql.push(':');
                            self.sql.push_str(name);
                        }
                        None => {}
                    }
                }
                let keep = store.is_some();
                if self.debug.is_some() {
                    let sql = std::mem::take(&mut self.sql);
                    self.debug_sending((s, i), (text, *semicolon), Some(&sql));
                    self.debug_receiving();
                    self.sql = sql;
                }
                // pgbench sends the command with its `;`, which PostgreSQL's messages show.
                if *semicolon && self.on_postgres {
                    self.sql.push(';');
                }
                let sql = &self.sql;
                conn.simple(sql, &mut |r| {
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
                })
                .map_err(|e| said_in(e, || sql.clone()))?
            }
        };
        if let Some(store) = store {
            let set = Set {
                rows,
                bad,
                earlier,
                row,
            };
            self.store(store, set, script, i, source)?;
        }
        if read {
            q.read(outcome.rows);
        } else {
            q.dml(outcome.changed);
        }
        Ok(())
    }

    /// A `\gset` or `\aset`: the row (rows) kept, each column a variable with the prefix.
    fn store(
        &mut self,
        store: &script::Store,
        Set {
            rows,
            mut bad,
            earlier,
            row,
        }: Set,
        script: &Script,
        i: usize,
        source: &str,
    ) -> Result<(), DbError> {
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
            let name = format!("{prefix}{name}");
            // As pgbench: a column whose name no variable can have (`?column?`) fails the
            // command, whatever the earlier columns stored.
            if !super::meta::valid_name(&name) {
                return Err(DbError::new(ErrorClass::Fatal, STORE_FAILED, name));
            }
            keep(&mut self.vars, &mut self.texts, name, v);
        }
        Ok(())
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

    fn abort_after(&mut self) -> Option<DbError> {
        self.abort_after.take()
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
        let retry = std::mem::take(&mut self.retry);
        match (retry, &mut self.rand_at_start) {
            (true, Some(saved)) => rand.clone_from(saved),
            (_, Some(saved)) => saved.clone_from(rand),
            (_, at) => *at = Some(rand.clone()),
        }
        match (retry, &mut self.prng_at_start) {
            (true, Some(saved)) => self.prng.clone_from(saved),
            (_, Some(saved)) => saved.clone_from(&self.prng),
            (_, at) => *at = Some(self.prng.clone()),
        }
        let s = self.choose(rand);
        self.last = s;
        let scripts = self.scripts.clone();
        let script = &scripts[s].0;
        if self.debug.is_some() {
            let desc = super::script::BUILTINS
                .iter()
                .find(|(n, ..)| *n == script.name)
                .map_or(script.name.as_str(), |b| b.1);
            debug_line(format_args!(
                "client {} executing script \"{desc}\"",
                self.id
            ));
        }
        let mut lap = start;
        let mut i = 0;
        while i < script.commands.len() {
            let ran = i;
            // Where an error would be (the runner names it in the abort's line).
            self.failed_at = Some((s, i));
            if self.debug.is_some() && !matches!(script.commands[i], Command::Sql { .. }) {
                debug_line(format_args!(
                    "client {} executing {}",
                    self.id,
                    meta_words(script.sources.get(i).map_or("", String::as_str))
                ));
            }
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
                    let v = self
                        .eval(e, (s, i))
                        .map_err(|e| meta_failed("set", EVALUATION, Some(e)))?;
                    // pgbench judges the name when it assigns, not when it reads the script.
                    if !super::meta::valid_name(name) {
                        let e = format!("set: invalid variable name: \"{name}\"");
                        return Err(meta_failed("set", ASSIGNMENT, Some(e)));
                    }
                    self.set(name.clone(), v);
                    i += 1;
                }
                Command::Sleep(time, unit) => {
                    let n = self
                        .sleep_time(time)
                        .map_err(|e| meta_failed("sleep", EXECUTION, Some(e)))?;
                    let us = u64::try_from(n).unwrap_or(0).saturating_mul(*unit);
                    if !nap(std::time::Duration::from_micros(us)) {
                        return Err(run_ended("interrupted during \\sleep"));
                    }
                    i += 1;
                }
                Command::Shell(var, words) => {
                    match self.shell(var.as_deref(), words) {
                        Ok(()) => {}
                        Err(Some(e)) => {
                            let word = if var.is_some() { "setshell" } else { "shell" };
                            return Err(meta_failed(word, EXECUTION, Some(e)));
                        }
                        Err(None) => return Err(run_ended("interrupted during \\shell")),
                    }
                    i += 1;
                }
                Command::StartPipeline => {
                    if self.pipeline.is_some() {
                        return Err(meta_failed(
                            "startpipeline",
                            "already in pipeline mode",
                            None,
                        ));
                    }
                    if !self.prepared {
                        return Err(meta_failed(
                            "startpipeline",
                            "cannot use pipeline mode with the simple query protocol",
                            None,
                        ));
                    }
                    self.prepare_pipeline(conn, script, (s, i))?;
                    self.pipeline = Some(Piped::default());
                    i += 1;
                }
                Command::SyncPipeline => {
                    let Some(p) = self.pipeline.as_mut() else {
                        return Err(meta_failed("syncpipeline", "not in pipeline mode", None));
                    };
                    conn.pipeline_sync();
                    p.syncs += 1;
                    i += 1;
                }
                Command::EndPipeline => {
                    self.end_pipeline(conn, q, script, (s, i))?;
                    i += 1;
                }
                Command::If(e) => {
                    let taken = self
                        .eval(e, (s, i))
                        .and_then(Value::truthy)
                        .map_err(|e| meta_failed("if", EVALUATION, Some(e)))?;
                    i = if taken {
                        i + 1
                    } else {
                        self.next_branch(script, i)?
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
        self.failed_at = None;
        // As pgbench: a script that ends inside a transaction block is counted, and then
        // its client aborts.
        if conn.in_transaction() == Some(true) {
            self.abort_after = Some(DbError::new(ErrorClass::Fatal, OPEN_AT_END, String::new()));
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

    /// `\endpipeline`: the queued commands sent with their Syncs, their answers read in one
    /// go; an error names the command it came from.
    fn end_pipeline(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        script: &Script,
        (s, i): (usize, usize),
    ) -> Result<(), DbError> {
        let Some(mut p) = self.pipeline.take() else {
            return Err(script_error(script, i, "not in pipeline mode".into()));
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
        Ok(())
    }

    /// After a false `\if` or `\elif` at `i`: the first command of the branch that runs.
    fn next_branch(&mut self, script: &Script, mut i: usize) -> Result<usize, DbError> {
        loop {
            let next = script.jumps[i].expect("resolved when read");
            match &script.commands[next] {
                Command::Elif(e) => {
                    self.failed_at = Some((self.last, next));
                    let taken = self
                        .eval(e, (self.last, next))
                        .and_then(Value::truthy)
                        .map_err(|e| meta_failed("elif", EVALUATION, Some(e)))?;
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

/// What a command that keeps its result read: the rows counted, an error found, the columns
/// of earlier result sets (`\aset`) and of the last row.
struct Set {
    rows: u64,
    bad: Option<String>,
    earlier: Vec<(String, Stored)>,
    row: Vec<(String, Stored)>,
}

/// The values of a command's variables, in order: a value that came as text is sent as it came.
fn args_of<'a>(
    (nums, texts): (&'a HashMap<String, Value>, &'a HashMap<String, String>),
    vars: &'a [String],
) -> Vec<Arg<'a>> {
    let mut values = Vec::with_capacity(vars.len());
    for v in vars {
        let arg = match (nums.get(v), texts.get(v)) {
            (_, Some(t)) => Arg::Text(t),
            (Some(n), None) => Arg::Num(*n),
            (None, None) => Arg::Missing(v),
        };
        values.push(arg);
    }
    values
}
