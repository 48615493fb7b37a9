//! What a managed server is asked to be: its kind, build, settings and options.

use std::path::PathBuf;

use super::builds;
use super::kind::ServerKind;

/// What `--server`, `--server-set`, `--server-datadir` and `--keep` ask for.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ServerSpec {
    pub kind: ServerKind,
    pub settings: Vec<(String, String)>,
    pub datadir: Option<PathBuf>,
    /// Use `datadir` even when it holds files dbsweep did not make or is another user's
    /// (`--server-datadir-force`).
    pub datadir_force: bool,
    pub keep: bool,
    /// Connect over the server's Unix socket instead of loopback TCP (`--server-socket`).
    pub socket: bool,
    /// Where a fresh data directory is made when `datadir` is not given (default TMPDIR).
    pub datadir_in: Option<PathBuf>,
    /// TLS on, with a certificate made for the run, and required of every TCP connection;
    /// dbsweep connects with `verify-ca` against the run's CA.
    pub tls: bool,
    /// With `tls`: whether plain TCP connections are refused (the default); a benchmark of
    /// what TLS costs lets both in.
    pub tls_required: bool,
    /// The build to start (`--server KIND:VERSION`, `--server-basedir`); None: the system's.
    pub build: Option<builds::Build>,
}

impl ServerSpec {
    /// A fresh server of `kind` with its default settings, in a temporary data directory that
    /// is removed when it stops, reached over loopback TCP.
    pub fn new(kind: ServerKind) -> ServerSpec {
        ServerSpec {
            kind,
            settings: Vec::new(),
            datadir: None,
            datadir_force: false,
            keep: false,
            socket: false,
            datadir_in: None,
            tls: false,
            tls_required: true,
            build: None,
        }
    }
}
