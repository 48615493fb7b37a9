//! What a sweep step did (a file per step in a sweep directory), and what a pause did.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::figures::LoadReport;
use super::{Results, parse_json};
use crate::error::Error;

/// What a sweep step did: one file per step in `steps/CELL/NN-NAME.json` of a sweep directory.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRecord {
    pub schema_version: u32,
    /// The plan's name.
    pub sweep: String,
    /// `target.config.cN`.
    pub cell: String,
    pub target: String,
    pub config: String,
    pub clients: u32,
    /// Which run of its cell this is, when the plan repeats cells (1-based).
    #[serde(default = "first_repeat")]
    pub repeat: u32,
    /// 1-based position in the plan.
    pub index: usize,
    pub name: String,
    /// `run`, `load` or `pause`.
    pub kind: String,
    /// `read`, `write` or `warmup` (run steps).
    pub class: Option<String>,
    /// Whether reports show it (warm-up steps are not).
    pub reported: bool,
    /// `ok`, `failed` or `interrupted`.
    pub status: String,
    pub error: Option<String>,
    pub started_at: u64,
    pub seconds: f64,
    /// What was done besides the step itself (caches dropped, tables reloaded on resume...).
    pub notes: Vec<String>,
    /// A run step's results, as `dbsweep run --output` writes them.
    pub results: Option<Results>,
    /// A load step's report and hardware figures (per row loaded).
    pub load: Option<LoadReport>,
    pub load_hw: Option<crate::results::figures::HwFigures>,
    pub pause: Option<PauseReport>,
    /// The database's own version string (`SELECT version()`, `@@version`) of the cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The install tree of the managed server's build (absent for the system's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basedir: Option<String>,
    /// A crash-recovery step (`crash = true`): the crash and the restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// The step failed (or did not run) because its cell's database failed: the managed
    /// server died or stopped serving, a disk filled, the database did not start. `--resume`
    /// runs it again, on a fresh cell.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rerun: bool,
}

/// What a crash-recovery step measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recovery {
    /// Seconds into the measured part at which the server was killed (SIGKILL, every process):
    /// the first interval's end at or after the step's `crash_after`.
    pub crash_after_s: f64,
    /// Redo written since the last checkpoint at the moment of the crash: PostgreSQL's WAL
    /// from the checkpoint's redo point, InnoDB's log from its last checkpoint (None when the
    /// server could not say).
    pub redo_bytes: Option<u64>,
    /// Seconds from the restart on the same data directory until the server accepted a
    /// connection and answered a query.
    pub seconds: f64,
    /// Transactions the crash left open that InnoDB rolled back in the background after the
    /// server answered (None for other servers), and the seconds from the answer until the
    /// last was rolled back: the checks run after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_txns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_s: Option<f64>,
    /// Recovered transactions still listed as rolling back when their rollback showed no
    /// progress for 10 s (rollback_s then runs to the last progress); absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback_left: Option<u64>,
    /// TPC-C's consistency checks after recovery ("passed"); None for other data.
    pub checks: Option<String>,
}

fn first_repeat() -> u32 {
    1
}

impl StepRecord {
    pub fn read(path: &Path) -> Result<StepRecord, Error> {
        let text = crate::input::read_text(path, crate::input::RESULTS)
            .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
        let r: StepRecord = parse_json(path, &text, "step record")?;
        let checked = match &r.results {
            _ if !r.seconds.is_finite() || r.seconds < 0.0 => {
                Err(format!("seconds = {} is not a duration", r.seconds))
            }
            Some(res) => res.check().map_err(|e| format!("results: {e}")),
            None => Ok(()),
        };
        checked.map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
        Ok(r)
    }
}

/// What a pause step did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PauseReport {
    pub planned_s: f64,
    /// The maintenance done first (VACUUM, CHECKPOINT, flushing, ANALYZE...).
    pub actions: Vec<String>,
    pub warnings: Vec<String>,
}
