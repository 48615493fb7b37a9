//! What pgbench does between reading its options and running: its setup connection (a failed
//! one is exit 1), the vacuum before a run, and the scale and partitioning read from the
//! tables; then the run's plan with what was found.

use super::output::PgbenchStyle;
use super::txn_log::TxnLogOpts;
use super::{pgbench_words, usage};
use crate::cli::RunArgs;
use crate::error::Error;
use crate::output::Style;
use crate::plan::RunPlan;

/// A pgbench run whose options are judged, before pgbench's setup connection: its vacuum and
/// the scale read from the tables happen in `ready`, after every option was judged.
pub struct PgbenchRun {
    pub(super) workload: String,
    pub(super) args: RunArgs,
    /// Connect for setup (always, as pgbench: a failed connection is exit 1), vacuum, and read
    /// the scale where a builtin script runs.
    pub(super) builtin: bool,
    pub(super) vacuum: Vacuum,
    pub(super) given_scale: Option<i64>,
    pub(super) verbose_errors: bool,
    /// `-d`: the clients' debugging lines.
    pub(super) debug: Option<crate::workload::pgbench::Debug>,
    /// `-M extended`.
    pub(super) extended: bool,
    /// `-d`'s first line: where pgbench connects, with how many clients, for how long.
    pub(super) debug_header: Option<String>,
    pub(super) txn_log: Option<TxnLogOpts>,
    pub(super) style: PgbenchStyle,
}

impl PgbenchRun {
    /// pgbench's setup (its connection, the vacuum unless `-n`, the scale and partitioning read
    /// from the tables) and the run's plan with the scale found.
    pub fn ready(mut self) -> Result<RunPlan, Error> {
        let (scale, partitions) = scale_and_vacuum(
            &self.args.db.target,
            self.builtin,
            self.vacuum,
            self.given_scale,
        )?;
        self.args.scale = u32::try_from(scale).unwrap_or(u32::MAX);
        let mut plan = RunPlan::from_args(&self.workload, &self.args).map_err(pgbench_words)?;
        plan.runner.verbose_errors = self.verbose_errors;
        plan.workload_opts.families.pgbench.debug = self.debug;
        plan.workload_opts.families.pgbench.extended = self.extended;
        plan.runner.txn_log = self
            .txn_log
            .map(|o| std::sync::Arc::new(o) as std::sync::Arc<dyn crate::runner::txn_log::TxnLogs>);
        plan.runner.clients_alone = true;
        println!("pgbench (dbsweep {})", env!("CARGO_PKG_VERSION"));
        if let Some(h) = &self.debug_header {
            eprintln!("pgbench: {h}");
        }
        // One voice for the process's one run.
        let voice: &'static PgbenchStyle = Box::leak(Box::new(PgbenchStyle {
            scale,
            partitions,
            ..self.style
        }));
        Ok(plan.styled(Style::As(voice)))
    }
}

/// The scale pgbench prints (read from pgbench_branches for the built-in scripts), and its
/// vacuum before a run unless -n: pgbench_branches and pgbench_tellers vacuumed, the history
/// truncated; a missing table is reported and ignored, as pgbench does.
/// A partitioned pgbench_accounts: its method ("range", "hash") and its partitions.
type Partitioning = (&'static str, u32);

/// The vacuum before a run: none (`-n`), pgbench's default, or with pgbench_accounts too (`-v`).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Vacuum {
    None,
    Default,
    All,
}

fn scale_and_vacuum(
    url: &str,
    builtin: bool,
    vacuum: Vacuum,
    given: Option<i64>,
) -> Result<(i64, Option<Partitioning>), Error> {
    let no_vacuum = vacuum == Vacuum::None;
    // pgbench's connection for setup, made whatever the options: failing to connect is an
    // early error (exit 1), not one of the run (exit 2).
    let target = crate::db::open(url, Default::default())?;
    let mut conn = target.connect().map_err(|e| {
        usage(format!(
            "{}\npgbench: error: could not create connection for setup",
            connection_failed(url, &e)
        ))
    })?;
    if no_vacuum && !builtin {
        return Ok((given.unwrap_or(1), None));
    }
    if !no_vacuum {
        eprint!("starting vacuum...");
        for sql in [
            "VACUUM pgbench_branches",
            "VACUUM pgbench_tellers",
            "TRUNCATE pgbench_history",
        ] {
            if let Err(e) = conn.batch(sql) {
                eprintln!(
                    "pgbench: error: ERROR:  {}\npgbench: detail: (ignoring this error and continuing anyway)",
                    e.message
                );
            }
        }
        eprintln!("end.");
        if vacuum == Vacuum::All {
            eprint!("starting vacuum pgbench_accounts...");
            if let Err(e) = conn.batch("VACUUM ANALYZE pgbench_accounts") {
                eprintln!(
                    "pgbench: error: ERROR:  {}\npgbench: detail: (ignoring this error and continuing anyway)",
                    e.message
                );
            }
            eprintln!("end.");
        }
    }
    if !builtin {
        return Ok((given.unwrap_or(1), None));
    }
    // A partitioned pgbench_accounts: its method and partitions, which the summary names.
    let partitions = conn
        .query_rows(
            "SELECT p.partstrat, (SELECT count(*) FROM pg_catalog.pg_inherits i WHERE i.inhparent = c.oid) \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_partitioned_table p ON p.partrelid = c.oid \
             WHERE c.relname = 'pgbench_accounts' AND pg_catalog.pg_table_is_visible(c.oid)",
            2,
        )
        .ok()
        .and_then(|rows| {
            let row = rows.first()?;
            let method = match row.first()?.as_deref()? {
                "r" => "range",
                "h" => "hash",
                _ => return None,
            };
            Some((method, row.get(1)?.as_deref()?.parse().ok()?))
        });
    let branches = conn
        .query_i64("SELECT count(*) FROM pgbench_branches")
        .map_err(|e| {
            usage(format!(
                "could not count number of branches: ERROR:  {}\n\
                 pgbench: hint: Perhaps you need to do initialization (\"pgbench -i\") in database \"{}\".",
                e.message,
                database(url)
            ))
        })?
        .unwrap_or(0);
    if branches == 0 {
        return Err(usage(
            "count(*) from pgbench_branches invalid (0); perhaps you need to do \"pgbench -i\"",
        ));
    }
    if given.is_some() {
        eprintln!(
            "pgbench: warning: scale option ignored, using count from pgbench_branches table ({branches})"
        );
    }
    Ok((branches, partitions))
}

/// The database a pgbench URL names.
fn database(url: &str) -> String {
    crate::db::server_url::ServerUrl::parse(url)
        .ok()
        .and_then(|u| u.database)
        .unwrap_or_default()
}

/// A failed connection as libpq words it: where (`on socket "DIR/.s.PGSQL.PORT"` or `at
/// "HOST", port PORT`), then the server's FATAL or the system's error.
pub(super) fn connection_failed(url: &str, e: &crate::error::DbError) -> String {
    let u = crate::db::server_url::ServerUrl::parse(url).unwrap_or_default();
    let port = u.port.unwrap_or(5432);
    let at = if u.host.starts_with('/') || u.host.is_empty() {
        let dir = if u.host.is_empty() {
            "/var/run/postgresql"
        } else {
            u.host.as_str()
        };
        format!("on socket \"{dir}/.s.PGSQL.{port}\"")
    } else {
        format!("at \"{}\", port {port}", u.host)
    };
    // A name that does not resolve is said alone: libpq fails before it tries a server.
    if e.message.starts_with("could not translate host name") {
        return e.message.clone();
    }
    // A SQLSTATE is the server's word (its FATAL); anything else is the system's.
    let from_server = e.code.len() == 5 && e.code.bytes().all(|b| b.is_ascii_alphanumeric());
    if from_server {
        format!("connection to server {at} failed: FATAL:  {}", e.message)
    } else {
        format!("connection to server {at} failed: {}", e.message)
    }
}
