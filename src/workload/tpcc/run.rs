//! The TPC-C transaction mix (clauses 2.4 to 2.8) as a [`Workload`]: each client has a home
//! warehouse, deals its transactions from a shuffled deck, and reports each transaction's type so
//! that the runner keeps their figures apart.

use std::sync::atomic::AtomicBool;

use super::client::TpccClient;
use super::load::{self, CUSTOMERS, DISTRICTS, ITEMS};
use super::mix::{KINDS, LIMIT_P90_S, NEW_ORDER, Tpcc};
use super::schema;
use super::txns::verify_conditions;
use crate::db::{Conn, DbError, Target};
use crate::error::Error;
use crate::metrics::KindStats;
use crate::results::figures::LoadReport;
use crate::results::{Latency, TpccFigures, TxnFigures};
use crate::workload::options::WorkloadOptions;
use crate::workload::tables::TableSet;
use crate::workload::traits::{Client, Workload};

impl Workload for Tpcc {
    fn figures(
        &self,
        kinds: &[KindStats],
        queue: &[KindStats],
        seconds: f64,
        terminals: u32,
    ) -> Option<TpccFigures> {
        let pacing = Pacing {
            wait: self.wait,
            think_scale: self.think_scale,
            terminals,
            mix: self.mix,
        };
        Some(figures(kinds, queue, seconds, self.warehouses, pacing))
    }

    fn name(&self) -> &'static str {
        "tpcc"
    }

    /// No sysbench tables: prepare, cleanup and the checks below handle the nine TPC-C tables.
    fn tables(&self) -> TableSet {
        TableSet::sysbench(0)
    }

    fn kinds(&self) -> &'static [&'static str] {
        &KINDS
    }

    fn headline_kind(&self) -> Option<usize> {
        Some(NEW_ORDER)
    }

    fn prepare(
        &self,
        target: &dyn Target,
        opts: &WorkloadOptions,
        force: bool,
        stop: &AtomicBool,
    ) -> Result<LoadReport, Error> {
        let r = load::prepare(
            target,
            self.warehouses,
            self.threads,
            self.seed,
            force,
            stop,
            opts.notes,
        )?;
        Ok(LoadReport {
            tables: schema::TABLES.len() as u32,
            rows: r.rows,
            seconds: r.seconds,
            rows_per_s: r.rows_per_s,
            client_cpu_s: r.client_cpu_s,
            steps: Vec::new(),
        })
    }

    /// The twelve consistency conditions.
    fn verify(&self, target: &dyn Target) -> Result<(), Error> {
        verify_conditions(target, false)
    }

    fn warnings(&self) -> Vec<String> {
        let below = self.mix.below_minimums();
        if below.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "--mix: {} (the specification's least shares): the run does not conform, and its results say so",
            below.join(", ")
        )]
    }

    /// The conditions but the eleventh (a run in flight may break it).
    fn verify_after_crash(&self, target: &dyn Target) -> Option<Result<(), Error>> {
        Some(
            verify_conditions(target, true).map_err(|e| {
                Error::Run(format!("TPC-C's consistency checks after the crash: {e}"))
            }),
        )
    }

    fn cleanup(&self, target: &dyn Target, _: &WorkloadOptions) -> Result<u32, Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        let dropped = load::drop_tables(conn.as_mut(), &url)?;
        Ok(dropped.len() as u32)
    }

    fn tables_missing(&self, conn: &mut dyn Conn) -> Result<bool, DbError> {
        Ok(load::existing_tables(conn)?.len() < schema::TABLES.len())
    }

    /// Every table exists and holds the cardinalities of `--warehouses` warehouses (orders
    /// grow during runs, so only their floor is checked).
    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        _opts: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        let hint = format!(
            "run `dbsweep tpcc prepare --warehouses {}` (with --force to reload)",
            self.warehouses
        );
        let existing = load::existing_tables(conn).map_err(|e| Error::db(url, e))?;
        let missing: Vec<&str> = schema::TABLES
            .iter()
            .filter(|t| !existing.contains(t))
            .copied()
            .collect();
        if !missing.is_empty() {
            return Err(Error::Usage(format!(
                "{url}: the TPC-C table(s) {} do not exist: {hint}",
                missing.join(", ")
            )));
        }
        let w = i64::from(self.warehouses);
        let loaded = conn
            .query_i64("SELECT COUNT(*) FROM warehouse")
            .map_err(|e| Error::db(url, e))?
            .unwrap_or(0);
        if loaded != w {
            return Err(Error::Usage(format!(
                "{url}: {loaded} warehouse(s) are loaded, not --warehouses {w}: {hint}"
            )));
        }
        let expect = [
            ("item", ITEMS, true),
            ("district", w * DISTRICTS, true),
            ("customer", w * DISTRICTS * CUSTOMERS, true),
            ("stock", w * ITEMS, true),
            ("orders", w * DISTRICTS * load::ORDERS, false),
        ];
        for (table, rows, exact) in expect {
            let n = conn
                .query_i64(&format!("SELECT COUNT(*) FROM {table}"))
                .map_err(|e| Error::db(url, e))?
                .unwrap_or(0);
            if n < rows || (exact && n != rows) {
                return Err(Error::Usage(format!(
                    "{url}: table {table} holds {n} rows, not the {rows} of {w} warehouse(s): it is partly loaded; {hint}"
                )));
            }
        }
        Ok(())
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        Ok(Box::new(TpccClient::new(self, conn, thread)?))
    }
}

pub use super::deck::NOPM_CEILING_PER_WAREHOUSE;

/// How a run's terminals were paced (`--wait`, `--think-scale`), for its figures.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    pub wait: bool,
    pub think_scale: f64,
    pub terminals: u32,
    /// The transactions' shares (`--mix`).
    pub mix: super::deck::Mix,
}

/// NOPM, tpm and per-type figures from the run's per-type statistics.
/// `queue`: per type, the time due terminals waited for a worker or a connection (empty when
/// they did not share any).
pub fn figures(
    kinds: &[KindStats],
    queue: &[KindStats],
    seconds: f64,
    warehouses: u32,
    pacing: Pacing,
) -> TpccFigures {
    let per_min = |n: u64| {
        if seconds > 0.0 {
            n as f64 * 60.0 / seconds
        } else {
            0.0
        }
    };
    let total: u64 = kinds.iter().map(|k| k.events).sum();
    let transactions: Vec<TxnFigures> = KINDS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let empty = KindStats::default();
            let k = kinds.get(i).unwrap_or(&empty);
            let latency_ms = Latency::from_histogram(&k.latency.to_hdr());
            let limit_p90_ms = LIMIT_P90_S[i] * 1000.0;
            TxnFigures {
                name: (*name).to_string(),
                count: k.events,
                share_pct: if total > 0 {
                    k.events as f64 * 100.0 / total as f64
                } else {
                    0.0
                },
                retries: k.retries,
                rollbacks: k.rollbacks,
                limit_met: latency_ms.p90 <= limit_p90_ms,
                queue_ms: queue
                    .get(i)
                    .map(|q| Latency::from_histogram(&q.latency.to_hdr())),
                queue_histogram: queue
                    .get(i)
                    .map(|q| crate::results::HistogramData::encode(&q.latency.to_hdr())),
                latency_ms,
                limit_p90_ms,
                histogram: Some(crate::results::HistogramData::encode(&k.latency.to_hdr())),
            }
        })
        .collect();
    let committed = kinds.get(NEW_ORDER).map_or(0, |k| k.events - k.rollbacks);
    let w = f64::from(warehouses.max(1));
    // The ceiling of this run's terminals: ten per warehouse reach the specification's, fewer
    // proportionally less; scaled think times raise it as much as they shorten the cycle.
    let ceiling = pacing.wait.then(|| {
        pacing.mix.nopm_ceiling_per_warehouse() * f64::from(pacing.terminals)
            / (10.0 * w)
            / pacing.think_scale
    });
    let below = pacing.mix.below_minimums();
    TpccFigures {
        warehouses,
        nopm_per_warehouse: per_min(committed) / w,
        terminals_per_warehouse: f64::from(pacing.terminals) / w,
        nopm_ceiling_per_warehouse: ceiling,
        think_scale: pacing.wait.then_some(pacing.think_scale),
        mix: Some(pacing.mix.0),
        conforming: pacing.wait
            && below.is_empty()
            && pacing.think_scale == 1.0
            && u64::from(pacing.terminals) == 10 * u64::from(warehouses),
        nopm: per_min(committed),
        tpm: per_min(total),
        limits_met: transactions.iter().all(|t| t.limit_met),
        mix_below_minimums: below,
        transactions,
    }
}
