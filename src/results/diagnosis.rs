//! What a step's diagnosis found, as the results file stores it: wait profiles, InnoDB's
//! semaphores, CPU profiles, and the settings a managed server applied.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A run's wait profile.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WaitProfile {
    /// Where the samples came from: `pg_stat_activity` or `processlist`.
    pub source: String,
    /// Sampling rounds per second asked for.
    pub hz: f64,
    /// Rounds taken, and sessions seen over all rounds.
    pub rounds: u64,
    pub samples: u64,
    /// Each event with its samples and share of all samples, most first.
    pub events: Vec<WaitEvent>,
    /// MariaDB/MySQL: InnoDB row lock waits over the measured part and their time in ms
    /// (`Innodb_row_lock_waits`, `Innodb_row_lock_time`): short waits that samples miss.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_lock_waits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_lock_ms: Option<u64>,
    /// MariaDB/MySQL with performance_schema on: the instruments' waits over the measured
    /// part (`events_waits_summary_global_by_event_name` deltas, `idle` left out), most time
    /// first, at most [`TOP_INSTRUMENTS`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instruments: Vec<InstrumentWait>,
    /// SQLite: statements that found the database locked over the measured part, and the
    /// milliseconds they waited (the busy handler's, counted exactly rather than sampled).
    /// MariaDB/MySQL: InnoDB's semaphore counters and latch waits over the measured part, as
    /// SHOW ENGINE INNODB STATUS and MUTEX give them (None when the server would not show them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub innodb: Option<crate::results::diagnosis::Semaphores>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_waits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_ms: Option<f64>,
    /// SQLite: the busy handler's calls, each a retry of a statement that found the lock
    /// taken (writers that take turns wait without them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_retries: Option<u64>,
}

/// One instrument's waits: how many, and their time in milliseconds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InstrumentWait {
    pub event: String,
    pub count: u64,
    pub ms: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WaitEvent {
    /// `Type:event` (`Lock:transactionid`, `Client:ClientRead`, `IO:WALSync`), `CPU`, or for
    /// MariaDB/MySQL `Lock:row lock wait`, `Client:Sleep`, `Query:<state>`.
    pub event: String,
    pub samples: u64,
    pub share: f64,
}

impl WaitProfile {
    /// The `n` largest events as `event share%`, joined by commas.
    pub fn top(&self, n: usize) -> String {
        self.events
            .iter()
            .take(n)
            .map(|e| format!("{} {:.0}%", e.event, e.share * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The semaphore counters over the measured part (deltas), those the server printed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Semaphores {
    /// `OS WAIT ARRAY INFO: reservation count`, `signal count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservations: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<u64>,
    /// OS waits of shared, exclusive and shared-exclusive rw-lock requests
    /// (`RW-shared spins N, rounds N, OS waits N` and the like).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rw_os_waits: BTreeMap<String, u64>,
    /// Threads that had waited on a semaphore for long at the end (`has waited at`).
    pub long_waits_at_end: u64,
    /// The latches with the most OS waits over the step (SHOW ENGINE INNODB MUTEX), most
    /// first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mutexes: Vec<MutexWaits>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MutexWaits {
    pub name: String,
    pub os_waits: u64,
}

/// What a profile found; the folded stacks themselves go to a file beside the results.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What was profiled: "the server's processes" or "dbsweep (embedded SQLite)".
    pub subject: String,
    pub hz: u32,
    /// On-CPU samples of the profiled processes.
    pub samples: u64,
    pub processes: u32,
    /// The share of samples whose innermost frame has no symbol (a stripped binary).
    pub unknown_share: f64,
    /// The functions with the most samples by self and by total share, most self first.
    pub functions: Vec<FunctionShare>,
    /// The folded stacks (gzip) and the flame graph (SVG), file names beside the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stacks_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flame_file: Option<String>,
    /// The folded stacks (`frame;frame;frame count` lines), until they are saved.
    #[serde(skip)]
    pub folded: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FunctionShare {
    pub function: String,
    /// Samples in which it was the innermost frame, over all samples.
    pub self_share: f64,
    /// Samples in which it was anywhere on the stack, over all samples.
    pub total_share: f64,
}

/// One requested setting as the server has it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Effective {
    pub requested: String,
    /// The server's value in its own words (`32768 8kB`, `ON`); None when the server has no
    /// variable of that name.
    pub effective: Option<String>,
    /// Whether the two mean the same, units normalised.
    pub applied: bool,
}
