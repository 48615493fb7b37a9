//! A managed server while it runs: its process, directory, port, URL and version. Starting and
//! stopping it is in the module above; each kind's setup in its own file.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Child;

use super::builds;
use super::kind::ServerKind;
/// A running managed server.
pub struct ManagedServer {
    pub kind: ServerKind,
    /// The directory dbsweep manages: the data directory and the server's files live inside.
    pub dir: PathBuf,
    pub port: u16,
    /// URL that dbsweep's targets connect to: loopback TCP, or the Unix socket with `socket`.
    pub url: String,
    pub(crate) socket: bool,
    /// The server binary's version line.
    pub version: String,
    pub(crate) child: Option<Child>,
    /// Whether dbsweep created `dir` (and removes it when done, unless `keep`).
    pub(crate) created_dir: bool,
    pub(crate) keep: bool,
    pub(crate) log: PathBuf,
    pub(crate) settings: Vec<(String, String)>,
    pub(crate) runs_as: Option<(u32, u32)>,
    /// Where the log was when the server was last spawned.
    pub(crate) log_from: u64,
    pub(crate) tls: bool,
    pub(crate) tls_required: bool,
    /// Each requested setting as the server has it, read back after start.
    pub effective: BTreeMap<String, crate::results::diagnosis::Effective>,
    /// What differs: settings not applied as requested, and the log's warnings about them.
    pub setting_warnings: Vec<String>,
    /// The build it runs; None: the system's default build of its kind.
    pub build: Option<builds::Build>,
}
