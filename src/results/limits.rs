//! What the results file keeps of the machine's ceilings (`dbsweep limits`, a sweep's probes):
//! the probes' figures where the data lives, the device, and the database connection's. The
//! probes that measure them are the limits module's.

use serde::{Deserialize, Serialize};

/// The limits of one host's file system.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Seconds since the epoch at the end of the probes.
    pub measured_at: u64,
    pub host: String,
    pub dir: String,
    pub device: Option<Device>,
    /// Whether the probes bypassed the page cache (O_DIRECT).
    pub direct: bool,
    pub page: u64,
    pub log_block: u64,
    pub file_bytes: u64,
    pub figures: Vec<Figure>,
    /// What could not be probed, one line each.
    pub notes: Vec<String>,
    /// The database connection's round trip and bandwidth, for a server target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Network>,
}

/// What a probe does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    RandomRead,
    RandomWrite,
    SequentialRead,
    SequentialWrite,
    /// A block written, then fdatasync, per request.
    WriteFdatasync,
    /// A block written, then fsync, per request.
    WriteFsync,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::RandomRead,
        Kind::RandomWrite,
        Kind::SequentialRead,
        Kind::SequentialWrite,
        Kind::WriteFdatasync,
        Kind::WriteFsync,
    ];

    /// The probe's name on the command line (`--only`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::RandomRead => "random-read",
            Kind::RandomWrite => "random-write",
            Kind::SequentialRead => "sequential-read",
            Kind::SequentialWrite => "sequential-write",
            Kind::WriteFdatasync => "fdatasync",
            Kind::WriteFsync => "fsync",
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Kind::RandomRead => "random read",
            Kind::RandomWrite => "random write",
            Kind::SequentialRead => "sequential read",
            Kind::SequentialWrite => "sequential write",
            Kind::WriteFdatasync => "write + fdatasync",
            Kind::WriteFsync => "write + fsync",
        }
    }
}

/// One probe's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub kind: Kind,
    /// Bytes per request.
    pub block: u64,
    /// Requests in flight (ring probes) or 1 (commit probes).
    pub depth: u32,
    /// Threads, each with its requests (1 but for the commit probe's N writers).
    pub writers: u32,
    /// Whether the file was opened with O_DIRECT.
    pub direct: bool,
    /// Requests completed per second (a commit probe: syncs per second, all writers).
    pub iops: f64,
    /// Megabytes (10^6) moved per second.
    pub mb_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    /// The probing threads' CPU (user + system) per request, microseconds.
    pub cpu_us_per_io: f64,
    pub seconds: f64,
}

/// What the connection to one server can do at most.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Network {
    /// The server's URL, without its password.
    pub target: String,
    /// Whether the server is on this host (a Unix socket, a loopback address or one of this
    /// host's own): its round trip is then the two processes' wake-ups, CPU rather than a
    /// network.
    pub local: bool,
    pub round_trips: u64,
    pub round_trip_us_min: f64,
    pub round_trip_us_p50: f64,
    pub round_trip_us_p99: f64,
    /// A result of this many bytes (one query), read at this rate.
    pub result_bytes: u64,
    pub result_mb_s: f64,
}

/// The device under a directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// The mount's source (`/dev/vda`, `tmpfs`).
    pub source: String,
    /// `major:minor` of the file system's device.
    pub number: String,
    /// The file system's type (`ext4`, `xfs`, `tmpfs`).
    pub fs: String,
    /// Where it is mounted.
    pub mount: String,
    /// The block device's size in bytes (the file system's, where there is no block device).
    pub bytes: u64,
}
