//! pgbench's workloads: the built-in scripts and a user's, read and weighted, and the workload that runs them.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use super::super::options::WorkloadOptions;
use super::super::tables::TableSet;
use super::super::traits::{Client, Workload};
use super::client::{PgbenchClient, script_error};
use super::expr::{self, Value};
use super::script::{Command, Script};
use super::stmt::Stmt;
use super::vars::{keep, stored};
use crate::db::{Conn, DbError, Dialect, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;

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

pub fn build(name: &'static str, o: &WorkloadOptions) -> Option<Result<Box<dyn Workload>, Error>> {
    let scripts: Result<Vec<(Script, u32)>, Error> = if name == "pgbench" {
        if o.families.pgbench.scripts.is_empty() {
            return Some(Err(Error::Option {
                option: "script".into(),
                why: "the pgbench workload runs the scripts of --script FILE[@WEIGHT] (or a builtin: tpcb-like, simple-update, select-only)".into(),
            }));
        }
        o.families
            .pgbench
            .scripts
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
        let (n, _, text) = super::script::builtin(builtin).expect("a builtin");
        Ok(vec![(
            super::script::parse(n, text).expect("builtins parse"),
            1,
        )])
    };
    Some(scripts.map(|scripts| {
        let script_names = scripts
            .iter()
            .enumerate()
            .map(|(k, (s, _))| format!("{} {}", k + 1, s.name))
            .collect();
        Box::new(Pgbench {
            name,
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
            match w.parse::<i64>() {
                Ok(n) if (0..=i64::from(i32::MAX)).contains(&n) => n as u32,
                Ok(n) => {
                    return Err(bad(format!(
                        "weight specification out of range (0 .. {}): {n}",
                        i32::MAX
                    )));
                }
                Err(_) => return Err(bad(format!("invalid weight specification: @{w}"))),
            },
        ),
        None => (spec, 1),
    };
    let (name, text) = match path.strip_prefix("builtin:") {
        Some(b) => {
            let (n, _, t) = super::script::builtin(b).map_err(bad)?;
            (n.to_string(), t.to_string())
        }
        None => {
            let text = if path == "-" {
                stdin_script().map_err(|e| bad(format!("-: could not read standard input: {e}")))?
            } else {
                crate::input::read_text(std::path::Path::new(path), crate::input::SMALL)
                    .map_err(|e| bad(format!("could not open file \"{path}\": {e}")))?
            };
            (path.to_string(), text)
        }
    };
    let s = super::script::parse(&name, &text).map_err(|e| Error::Usage(e.to_string()))?;
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
        super::init::run(target, &super::init::Init::of(opts), force, stop)
    }

    fn cleanup(&self, target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
        super::init::drop_tables(target, o)
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
        let seed = self.opts.rand.rand_seed;
        vars.insert("random_seed".into(), Value::Int(seed as i64));
        vars.insert(
            "default_seed".into(),
            Value::Int(expr::PgPrng::default_seed(seed, self.opts.threads.max(1)) as i64),
        );
        for d in &self.opts.families.pgbench.defines {
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
            self.opts.ps_mode == super::super::PsMode::Auto && conn.dialect() == Dialect::Postgres;
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
                    // pgbench's text of it ends at its `;`, which PostgreSQL's messages show.
                    Command::Sql {
                        text,
                        store: None,
                        semicolon,
                        ..
                    } if prepared => {
                        let end = if *semicolon && conn.dialect() == Dialect::Postgres {
                            ";"
                        } else {
                            ""
                        };
                        Stmt::Later(format!("{}{end}", text.join("?")))
                    }
                    _ => Stmt::Text,
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
            extended: self.opts.families.pgbench.extended,
            on_postgres: conn.dialect() == Dialect::Postgres,
            total,
            vars,
            texts,
            sql: String::new(),
            first,
            last: 0,
            laps: Vec::new(),
            failed_at: None,
            pipeline: None,
            prepared,
            rand_at_start: None,
            prng: expr::PgPrng::for_client(seed, thread),
            prng_at_start: None,
            retry: false,
            debug: self.opts.families.pgbench.debug,
            id: thread,
            debug_prepared: Default::default(),
            abort_after: None,
        }))
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
