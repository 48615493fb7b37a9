//! What the registries' fetchers share: a release and how its download is checked, the HTTPS
//! client with its bounded waits, where a release's tree goes, the budget an archive unpacks
//! within, and the checks on what a registry says and what a package holds.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::super::kind::ServerKind;

/// The registry's answer about a package (every version's metadata: about 150 KB today).
pub(super) const METADATA_LIMIT: u64 = 64 << 20;
/// How long asking the registry may take.
pub(super) const METADATA_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one read of an answer may wait (a stalled network).
const STALL_TIMEOUT: Duration = Duration::from_secs(15);
/// A release a registry has: its server, its version (`15.8`) and where its package is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub kind: ServerKind,
    pub version: String,
    /// The package's own version (`15.8.0-beta.14` on npm).
    pub package_version: String,
    pub(super) url: String,
    pub(super) checksum: Checksum,
}

/// How a package's download is checked: the registry's own checksum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Checksum {
    /// npm's `integrity`: SHA-512, base64.
    Sha512Base64(String),
    /// Maven's `FILE.sha1` beside the file (hex SHA-1: what Maven Central publishes for
    /// every file; it tells a broken or swapped download, as npm's does).
    Sha1At(String),
    /// A Debian suite's packages, which apt checks (the suite's signature, each package's
    /// hash); the release's `url` is the suite.
    Apt,
}

/// The base URL environment variable `var` names (a site's mirror), else `default`, without
/// a trailing slash.
pub(super) fn base_url(var: &str, default: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| default.into())
        .trim_end_matches('/')
        .to_string()
}

/// An HTTPS client verifying with the platform's CA certificates (as curl and npm do: a site's
/// proxy may sign with its own CA, which the platform trusts and Mozilla's list does not).
pub(super) fn agent(timeout: Duration) -> ureq::Agent {
    static ROOTS: std::sync::OnceLock<Vec<ureq::tls::Certificate<'static>>> =
        std::sync::OnceLock::new();
    let roots = ROOTS.get_or_init(|| {
        rustls_native_certs::load_native_certs()
            .certs
            .into_iter()
            .map(|c| ureq::tls::Certificate::from_der(c.as_ref()).to_owned())
            .collect()
    });
    let tls = if roots.is_empty() {
        ureq::tls::TlsConfig::builder().build()
    } else {
        ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::new_with_certs(roots))
            .build()
    };
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        // A network that stalls ends the fetch within this, and Ctrl-C is seen between reads.
        .timeout_per_read(Some(STALL_TIMEOUT))
        .tls_config(tls)
        .build()
        .into()
}

/// Where a fetched release goes in builds directory `dir`.
pub fn tree(dir: &Path, release: &Release) -> PathBuf {
    dir.join(format!("{}-{}", dir_name(release.kind), release.version))
}

pub(super) fn dir_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Postgres => "postgresql",
        ServerKind::Mariadb => "mariadb",
        ServerKind::Mysql => "mysql",
    }
}

/// What an archive may unpack to: 64 times its size and 256 MB more (a server's package
/// unpacks to 3 or 4 times its size), and never more than 8 GB. A bomb (1 MB unpacking to
/// 1 GB) is refused before the disk fills.
pub(super) struct Budget {
    left: u64,
    limit: u64,
}

impl Budget {
    pub(super) fn for_archive(file: &Path) -> Budget {
        let len = std::fs::metadata(file).map_or(0, |m| m.len());
        let limit = len
            .saturating_mul(64)
            .saturating_add(256 << 20)
            .min(8 << 30);
        Budget { left: limit, limit }
    }

    /// Takes `n` more bytes, or says the package is too large.
    pub(super) fn take(&mut self, n: u64) -> Result<(), String> {
        self.left = self.left.checked_sub(n).ok_or_else(|| {
            format!(
                "the package unpacks to more than {} MB, more than a server's package does: not unpacked",
                self.limit >> 20
            )
        })?;
        Ok(())
    }

    /// Copies `from` into `to`, taking what it writes unless it was taken already (`taken`: a
    /// tar entry's size, which its reader cannot pass); ends with an error past the budget or
    /// when Ctrl-C comes.
    pub(super) fn copy(
        &mut self,
        from: &mut dyn Read,
        to: &mut dyn Write,
        what: &str,
        taken: bool,
    ) -> Result<(), String> {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            if crate::interrupt::interrupted() {
                return Err("interrupted".into());
            }
            let n = from
                .read(&mut buf)
                .map_err(|e| format!("unpacking {what}: {e}"))?;
            if n == 0 {
                return Ok(());
            }
            if !taken {
                self.take(n as u64)?;
            }
            to.write_all(&buf[..n])
                .map_err(|e| format!("unpacking {what}: {e}"))?;
        }
    }
}

/// Whether `s`, from a registry, is ASCII letters and digits and `also` only, and not empty
/// nor longer than a version or a URL needs: so that nothing it holds can steer a terminal or
/// a file it is written into.
pub(crate) fn registry_word(s: &str, also: &str) -> bool {
    !s.is_empty()
        && s.len() <= 2048
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || also.contains(c))
}

/// `p` when it is only plain names (no root, `..` or `.`).
pub(crate) fn plain(p: &Path) -> Option<PathBuf> {
    p.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| p.to_path_buf())
}

/// Adds read (and, for directories and programs, search/execute) for everyone, and takes
/// away write from all but the owner (and set-id and sticky bits).
pub(crate) fn readable(p: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mode = meta.permissions().mode();
    let add = if meta.is_dir() || mode & 0o100 != 0 {
        0o555
    } else {
        0o444
    };
    std::fs::set_permissions(p, std::fs::Permissions::from_mode((mode | add) & 0o755))
        .map_err(|e| format!("{}: {e}", p.display()))
}
