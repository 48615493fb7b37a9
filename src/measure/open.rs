//! Opening the database of a step: the target, or the managed server started for it, and the
//! load that prepares its tables.

use crate::metrics::hw::Subject;
use crate::{db, metrics, server};

use crate::db::{OpenOptions, Target};
use crate::error::Error;
use crate::interrupt::INTERRUPT;
use crate::interrupt::interrupted_load;
use crate::plan::RunPlan;
use crate::results::ServerInfo;
use crate::results::figures::LoadReport;
use crate::server::{ManagedServer, ServerSpec};
use crate::workload::Workload;

/// What a command works on: the target, and the managed server behind it, if any. Fields drop
/// in order: the target's connections go before the managed server stops.
pub(crate) struct Db {
    pub target: Box<dyn Target>,
    pub server: Option<ManagedServer>,
    /// The data directory of an external server (`--data-dir`), for the IO figures.
    pub data_dir: Option<std::path::PathBuf>,
    /// An external server's main process (`--server-pid`).
    pub server_pid: Option<u32>,
}

impl Db {
    /// Checks the target, or starts the managed server if the plan asks for one.
    pub(crate) fn open(plan: &RunPlan, create: bool) -> Result<Db, Error> {
        let options = plan.workload_opts.open_options(create);
        let (dialect, named) = match &plan.server {
            Some(spec) => (
                Some(crate::plan::server_dialect(spec.kind)),
                format!("--server is {:?}", spec.kind).to_lowercase(),
            ),
            None => (
                db::dialect_of(&plan.target),
                format!("--target is {}", db::redact_url(&plan.target)),
            ),
        };
        if let Err(why) = crate::plan::check_pipeline(options.pipeline, dialect) {
            return Err(Error::Usage(format!(
                "--pipeline: {why}, and {named}; leave out --pipeline"
            )));
        }
        let mut db = Db::open_target(&plan.target, plan.server.as_ref(), options)?;
        db.data_dir = plan.data_dir.clone();
        db.server_pid = plan.server_pid;
        Ok(db)
    }

    /// The database at `target`, or a managed server started from `server` instead.
    pub(crate) fn open_target(
        target: &str,
        server: Option<&ServerSpec>,
        options: OpenOptions,
    ) -> Result<Db, Error> {
        let (target, server) = match server {
            None => (db::open(target, options)?, None),
            Some(spec) => {
                let server = server::start(spec)?;
                (db::open(&server.url, options)?, Some(server))
            }
        };
        Ok(Db {
            target,
            server,
            data_dir: None,
            server_pid: None,
        })
    }

    /// Whether every table of the workload exists (a fresh managed server has none).
    pub(crate) fn tables_exist(&self, workload: &dyn Workload) -> Result<bool, Error> {
        let url = self.target.display_url();
        let mut conn = self.target.connect().map_err(|e| Error::db(&url, e))?;
        Ok(!workload
            .tables_missing(conn.as_mut())
            .map_err(|e| Error::db(&url, e))?)
    }

    /// What the hardware sampler follows: the managed server's processes (or `--server-pid`'s
    /// and its children) and the device that holds the data.
    pub(crate) fn hw_subject(&self) -> Subject {
        let root = self
            .server
            .as_ref()
            .and_then(ManagedServer::pid)
            .or(self.server_pid);
        let url = self.target.display_url();
        let data = match (&self.server, &self.data_dir) {
            (Some(s), _) => Some(s.dir.clone()),
            (None, Some(d)) => Some(d.clone()),
            (None, None) => db::sqlite_dir(&url),
        };
        let net_device = metrics::net::endpoint_of(&url)
            .and_then(|(host, port)| metrics::net::device_towards(&host, port));
        // The server is in this process (SQLite, mock), known by its processes, or elsewhere
        // (not over loopback nor a Unix socket): the rest of the machine's CPU is others'.
        let here = net_device.as_deref() == Some("lo")
            || metrics::net::endpoint_of(&url).is_none_or(|(host, _)| {
                host.is_empty() || host.starts_with('/') || host == "localhost"
            });
        let all_known = root.is_some()
            || matches!(
                self.target.dialect(),
                db::Dialect::Sqlite | db::Dialect::Any
            )
            || !here;
        Subject {
            server_pids: root.map(|pid| {
                Box::new(move || server::process_tree(pid)) as Box<dyn Fn() -> Vec<u32> + Send>
            }),
            device: data.as_deref().and_then(crate::metrics::procfs::device_of),
            net_device,
            link_mbit: None,
            all_known,
        }
    }

    /// Starts perf on the server's processes (or on dbsweep itself, whose embedded SQLite is
    /// the database), from `from` (the measured part's start).
    pub(crate) fn start_profiler(
        &self,
        from: metrics::MeasureStart,
        hz: u32,
    ) -> Result<metrics::profile::Profiler, String> {
        let (pids, subject) = match self.hw_subject().server_pids {
            Some(pids) => (pids, "the server's processes"),
            None if self.target.dialect() == db::Dialect::Sqlite => {
                let me = std::process::id();
                (
                    Box::new(move || vec![me]) as Box<dyn Fn() -> Vec<u32> + Send>,
                    "dbsweep (embedded SQLite)",
                )
            }
            None => {
                return Err(
                    "no server process to profile: use a managed server (--server) or give the server's --server-pid"
                        .into(),
                );
            }
        };
        metrics::profile::Profiler::start(pids, from, hz, subject.into())
    }

    pub(crate) fn server_info(&self) -> Option<ServerInfo> {
        let s = self.server.as_ref()?;
        Some(ServerInfo {
            kind: format!("{:?}", s.kind).to_lowercase(),
            version: s.version.clone(),
            settings: s.settings().iter().cloned().collect(),
            datadir: s.dir.display().to_string(),
            kept: s.kept(),
            effective: s.effective.clone(),
            setting_warnings: s.setting_warnings.clone(),
            basedir: s.build.as_ref().map(|b| b.basedir.display().to_string()),
            provenance: s.build.as_ref().and_then(|b| b.provenance.clone()),
        })
    }
}

pub(crate) fn load(
    plan: &RunPlan,
    target: &dyn Target,
    workload: &dyn Workload,
) -> Result<LoadReport, Error> {
    workload
        .prepare(target, &plan.workload_opts, plan.force, &INTERRUPT)
        .map_err(|e| interrupted_load(e, plan.server.is_some()))
}

pub(crate) fn load_line(l: &LoadReport) -> String {
    format!(
        "Loaded {} rows into {} table(s) in {:.2}s: {:.0} rows/s (dbsweep used {:.2} CPU s)",
        l.rows, l.tables, l.seconds, l.rows_per_s, l.client_cpu_s
    )
}

#[cfg(test)]
mod tests {
    /// A managed MariaDB refuses pipelining before it starts (no server, no URL yet), said
    /// once.
    #[test]
    fn a_managed_mariadb_refuses_pipelining_before_it_starts() {
        let words = ["--server", "mariadb", "--pipeline"].map(String::from);
        let (words, _) = crate::cli::RunWords::read(words).expect("words");
        let plan = crate::plan::RunPlan::from_args("oltp_read_only", &words.args).expect("a plan");
        let e = super::Db::open(&plan, false).err().expect("refused");
        assert_eq!(
            e.to_string(),
            "--pipeline: only PostgreSQL targets pipeline statements, and --server is mariadb; leave out --pipeline"
        );
    }
}
