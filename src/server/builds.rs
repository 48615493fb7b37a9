//! The server builds a managed target can start: Debian's PostgreSQL versions side by side
//! (`/usr/lib/postgresql/N`), the MariaDB/MySQL server on PATH, and install trees of any origin
//! (a source build's `--prefix`, an unpacked binary tarball, `scripts/builds`' directories)
//! given as a basedir or found under the builds directories (`DBSWEEP_BUILDS`, a colon-separated
//! list; default `/opt/dbsweep/builds`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::kind::ServerKind;
use crate::error::Error;

/// Where `scripts/builds` puts builds and `dbsweep servers` looks for them by default.
pub const DEFAULT_BUILDS_DIR: &str = "/opt/dbsweep/builds";

/// One build of a server.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Build {
    pub kind: ServerKind,
    /// The version number, as `13.23` or `11.4.5`.
    pub version: String,
    /// The server binary's own version line.
    pub line: String,
    /// The install tree: the directory holding `bin/` (or `sbin/`).
    pub basedir: PathBuf,
    /// The server binary (`postgres`, `mariadbd`, `mysqld`).
    pub server: PathBuf,
    /// The tree's own shared libraries, for the server's processes (`lib/`), when it has them
    /// and is not the system's.
    pub libdir: Option<PathBuf>,
    /// Where the tree came from, as `scripts/builds` recorded it in `dbsweep-build.txt`
    /// (`Debian unstable mysql-server-core 9.7.4-2`); None for trees of other origins.
    pub provenance: Option<String>,
}

impl Build {
    /// The build in `basedir`, of `kind` where given; what is missing otherwise.
    pub fn at(basedir: &Path, kind: Option<ServerKind>) -> Result<Build, String> {
        let basedir = basedir
            .canonicalize()
            .map_err(|e| format!("{}: {e}", basedir.display()))?;
        let in_bins = |names: &[&str]| {
            names.iter().find_map(|n| {
                ["bin", "sbin", "libexec"]
                    .iter()
                    .map(|d| basedir.join(d).join(n))
                    .find(|p| p.is_file())
            })
        };
        let libdir = Some(basedir.join("lib")).filter(|l| l.is_dir() && !is_system(&basedir));
        let wants_pg = kind.is_none_or(|k| k == ServerKind::Postgres);
        let wants_my = kind.is_none_or(|k| k != ServerKind::Postgres);
        if wants_pg && let Some(server) = in_bins(&["postgres"]) {
            if server.with_file_name("initdb").is_file() {
                return Build::new(ServerKind::Postgres, basedir, server, libdir);
            }
            return Err(format!(
                "{}: has bin/postgres but no bin/initdb",
                basedir.display()
            ));
        }
        if wants_my && let Some(server) = in_bins(&["mariadbd", "mysqld"]) {
            let probe = Build::new(ServerKind::Mariadb, basedir.clone(), server.clone(), libdir)?;
            let is_mariadb = probe.line.contains("MariaDB");
            return match kind {
                Some(ServerKind::Mysql) if is_mariadb => Err(format!(
                    "{}: {} is MariaDB's server, not MySQL's",
                    basedir.display(),
                    server.display()
                )),
                Some(ServerKind::Mariadb) if !is_mariadb => Err(format!(
                    "{}: {} is MySQL's server, not MariaDB's",
                    basedir.display(),
                    server.display()
                )),
                _ if is_mariadb => Ok(probe),
                _ => Ok(Build {
                    kind: ServerKind::Mysql,
                    ..probe
                }),
            };
        }
        let wanted = match kind {
            Some(ServerKind::Postgres) => "bin/postgres and bin/initdb",
            Some(ServerKind::Mysql) => "bin/mysqld (or sbin/)",
            Some(ServerKind::Mariadb) => "bin/mariadbd or bin/mysqld (or sbin/)",
            None => "bin/postgres, bin/mariadbd or bin/mysqld",
        };
        Err(format!("{}: no {wanted} in it", basedir.display()))
    }

    fn new(
        kind: ServerKind,
        basedir: PathBuf,
        server: PathBuf,
        libdir: Option<PathBuf>,
    ) -> Result<Build, String> {
        let mut cmd = Command::new(&server);
        cmd.arg("--version");
        if let Some(lib) = &libdir {
            cmd.env("LD_LIBRARY_PATH", lib);
        }
        let out = super::setup::output_within(&mut cmd, VERSION_TIMEOUT)
            .map_err(|e| format!("{} --version: {e}", server.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().next().unwrap_or_default().trim().to_string();
        let version = version_number(&line).ok_or_else(|| {
            format!(
                "{} --version says {:?}{}: not a server's version line",
                server.display(),
                line,
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            )
        })?;
        let provenance = provenance(&basedir);
        Ok(Build {
            kind,
            version,
            line,
            basedir,
            server,
            libdir,
            provenance,
        })
    }

    /// A tool of the build (`initdb`, `mariadb-install-db`), beside the server binary or in
    /// the tree's `scripts/`.
    pub fn tool(&self, names: &[&str]) -> Option<PathBuf> {
        names.iter().find_map(|n| {
            [
                self.server.with_file_name(n),
                self.basedir.join("bin").join(n),
                self.basedir.join("scripts").join(n),
            ]
            .into_iter()
            .find(|p| p.is_file())
        })
    }

    /// Whether the build is the system's (under /usr): its files are the system's defaults.
    pub fn is_system(&self) -> bool {
        is_system(&self.basedir)
    }

    /// Sets what a process of the build needs: its own libraries.
    pub fn prepare(&self, cmd: &mut Command) {
        if let Some(lib) = &self.libdir {
            cmd.env("LD_LIBRARY_PATH", lib);
        }
    }

    /// Whether `wanted` (`13`, `11.4`, `11.4.5`) names this build's version.
    pub fn matches(&self, wanted: &str) -> bool {
        self.version == wanted
            || self
                .version
                .strip_prefix(wanted)
                .is_some_and(|rest| rest.starts_with('.'))
    }
}

/// How long a server binary may take to print its version.
const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

fn is_system(basedir: &Path) -> bool {
    basedir == Path::new("/usr") || basedir.starts_with("/usr/lib/postgresql")
}

/// The version number of a server's version line: `postgres (PostgreSQL) 15.14 (Debian ...)`,
/// `mariadbd  Ver 11.4.5-MariaDB for ...`, `mysqld  Ver 8.0.36 for Linux ...`.
fn version_number(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let after = |w: &str| {
        words
            .iter()
            .position(|x| *x == w)
            .and_then(|i| words.get(i + 1))
    };
    let raw = after("(PostgreSQL)").or_else(|| after("Ver"))?;
    let number: String = raw
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let number = number.trim_end_matches('.');
    number
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
        .then(|| number.to_string())
}

/// The builds directories: `DBSWEEP_BUILDS` (colon-separated) or the default.
pub fn builds_dirs() -> Vec<PathBuf> {
    match std::env::var_os("DBSWEEP_BUILDS") {
        // An empty entry (`:/x`, a trailing colon) names no directory: it is passed over, not
        // taken as the working directory (fetched builds would land wherever dbsweep runs).
        Some(v) => {
            let dirs: Vec<PathBuf> = std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect();
            if dirs.is_empty() {
                vec![PathBuf::from(DEFAULT_BUILDS_DIR)]
            } else {
                dirs
            }
        }
        None => vec![PathBuf::from(DEFAULT_BUILDS_DIR)],
    }
}

/// Every build this machine has, oldest version first within a kind.
pub fn find_all() -> Vec<Build> {
    let mut trees: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    if let Some(server) = super::setup::find_binary(&["mariadbd", "mysqld"], &[]) {
        // The system's server: its tree is the directory above its bin/ or sbin/.
        if let Some(tree) = server.parent().and_then(Path::parent) {
            trees.push(tree.to_path_buf());
        }
    }
    let subdirs = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            // A hidden directory is never a build: a tree being unpacked
            // (`.postgresql-15.8.part-PID`) is one until it is renamed whole.
            .filter(|p| {
                p.is_dir()
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect()
    };
    for dir in builds_dirs() {
        for tree in subdirs(&dir) {
            // A Debian PostgreSQL package's tree holds its build at lib/postgresql/MAJOR.
            trees.extend(subdirs(&tree.join("lib/postgresql")));
            trees.push(tree);
        }
    }
    let mut builds: Vec<Build> = trees
        .iter()
        .filter_map(|t| Build::at(t, None).ok())
        .collect();
    builds.sort_by(|a, b| {
        (a.kind as u8, version_key(&a.version), &a.basedir).cmp(&(
            b.kind as u8,
            version_key(&b.version),
            &b.basedir,
        ))
    });
    builds.dedup_by(|a, b| a.server == b.server);
    builds
}

/// `v` as numbers and dots whose parts each fit a u32, written without leading zeros
/// (`10.11.05` and `0010.0011.0005` are `10.11.5`); None for anything else (`15.x`, a part of
/// 11 digits, an empty part).
pub fn canonical_version(v: &str) -> Option<String> {
    let parts: Option<Vec<String>> = v
        .split('.')
        .map(|p| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse::<u32>().ok().map(|n| n.to_string()))
                .flatten()
        })
        .collect();
    parts.map(|p| p.join("."))
}

/// What a version that [`canonical_version`] refuses is told.
fn no_such_version(s: &str) -> String {
    format!(
        "'{s}': no such version: a version is numbers and dots, as 13 or 11.4 (each part below 4294967296), or a series, as 15.* or 15.2..15.8"
    )
}

/// A version number's parts, for ordering.
pub fn version_key(v: &str) -> Vec<u32> {
    v.split('.').filter_map(|p| p.parse().ok()).collect()
}

/// What `--server KIND[:VERSION]` and `--server-basedir DIR` (or a plan target's `server` and
/// `basedir`) name: a build, or None for the system's default build of the kind.
pub fn resolve(
    kind: ServerKind,
    version: Option<&str>,
    basedir: Option<&Path>,
) -> Result<Option<Build>, Error> {
    if let Some(dir) = basedir {
        let build = Build::at(dir, Some(kind)).map_err(Error::Usage)?;
        if let Some(v) = version
            && !build.matches(v)
        {
            return Err(Error::Usage(format!(
                "{}: holds {} {}, not {v}",
                dir.display(),
                kind_name(kind),
                build.version
            )));
        }
        return Ok(Some(build));
    }
    if let Some(v) = version
        && Pattern::parse(v).is_some()
    {
        return Err(Error::Usage(format!(
            "--server {}:{v}: a series of versions is for `dbsweep sweep`, which makes a target of each",
            kind_name(kind)
        )));
    }
    let all = find_all();
    let Some(v) = version else {
        // The system's server of the kind; where the system has none (MySQL, whose packages
        // are not Debian's default), the newest build found.
        if super::binary_version(kind).is_err() {
            return Ok(all.into_iter().rev().find(|b| b.kind == kind));
        }
        return Ok(None);
    };
    let same_kind: Vec<&Build> = all.iter().filter(|b| b.kind == kind).collect();
    match same_kind.iter().rev().find(|b| b.matches(v)) {
        Some(b) => Ok(Some((*b).clone())),
        None => Err(Error::Usage(format!(
            "--server {}:{v}: no such build on this machine (found: {}); give its install tree with basedir, or install one (scripts/builds, distribution packages)",
            kind_name(kind),
            if same_kind.is_empty() {
                "none".to_string()
            } else {
                same_kind
                    .iter()
                    .map(|b| format!("{} in {}", b.version, b.basedir.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ))),
    }
}

/// The versions a series pattern names among `versions` (`15.*`: every 15.x; `15.2..15.8`: from
/// 15.2 to 15.8, both included), oldest first.
pub fn in_pattern<'a>(pattern: &Pattern, versions: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = versions
        .iter()
        .copied()
        .filter(|v| pattern.holds(v))
        .collect();
    v.sort_by_key(|v| version_key(v));
    v.dedup();
    v
}

/// A series of versions: `MAJOR.*` or `LOW..HIGH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    Under(String),
    Range(String, String),
}

impl Pattern {
    /// `15.*` or `15.2..15.8`; None for a plain version.
    pub fn parse(v: &str) -> Option<Result<Pattern, String>> {
        let shape = |s: &str| {
            !s.is_empty()
                && s.split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        };
        let not_a_series =
            || format!("'{v}': a series is MAJOR.* (15.*) or LOW..HIGH (15.2..15.8)");
        if let Some(prefix) = v.strip_suffix(".*") {
            return Some(match canonical_version(prefix) {
                Some(p) => Ok(Pattern::Under(p)),
                None if shape(prefix) => Err(no_such_version(v)),
                None => Err(not_a_series()),
            });
        }
        let (lo, hi) = v.split_once("..")?;
        Some(match (canonical_version(lo), canonical_version(hi)) {
            (Some(lo), Some(hi)) if version_key(&lo) > version_key(&hi) => {
                Err(format!("'{v}': the range's low end is above its high end"))
            }
            (Some(lo), Some(hi)) => Ok(Pattern::Range(lo, hi)),
            _ if shape(lo) && shape(hi) => Err(no_such_version(v)),
            _ => Err(not_a_series()),
        })
    }

    pub fn holds(&self, v: &str) -> bool {
        let key = version_key(v);
        match self {
            Pattern::Under(p) => {
                let p = version_key(p);
                key.len() > p.len() && key.starts_with(&p)
            }
            Pattern::Range(lo, hi) => key >= version_key(lo) && key <= version_key(hi),
        }
    }
}

/// The provenance file's source (Debian's `suite`, npm or Maven), `package` and `version` as
/// one line.
fn provenance(basedir: &Path) -> Option<String> {
    let text =
        crate::input::read_text(&basedir.join("dbsweep-build.txt"), crate::input::SMALL).ok()?;
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
            .map(str::trim)
    };
    let from = match field("source") {
        Some("npm") => "npm".to_string(),
        Some("maven") => "Maven".to_string(),
        _ => format!("Debian {}", field("suite")?),
    };
    Some(format!(
        "{from} {} {}",
        field("package")?,
        field("version")?
    ))
}

/// `--server KIND[:VERSION]`, or a plan target's `server = "KIND[:VERSION]"`; VERSION may be a
/// series (`15.*`, `15.2..15.8`), which a sweep makes a target per version of.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerChoice {
    pub kind: ServerKind,
    /// A version of the kind (`13`, `11.4`): the newest build of it this machine has.
    pub version: Option<String>,
}

impl std::str::FromStr for ServerChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<ServerChoice, String> {
        let (kind, version) = match s.split_once(':') {
            Some((k, v)) => (k, Some(v)),
            None => (s, None),
        };
        let kind = match kind.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => ServerKind::Postgres,
            "mariadb" => ServerKind::Mariadb,
            "mysql" => ServerKind::Mysql,
            _ => {
                return Err(format!(
                    "'{s}': a server is postgres, mariadb or mysql, with a version after a colon where wanted (postgres:13)"
                ));
            }
        };
        let version = match version {
            None => None,
            Some(v) => match Pattern::parse(v) {
                Some(Err(e)) => return Err(e),
                // A series is kept as written (its ends are read again where it is used).
                Some(Ok(_)) => Some(v.to_string()),
                None => match canonical_version(v) {
                    Some(c) => Some(c),
                    None if v.is_empty()
                        || !v
                            .split('.')
                            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) =>
                    {
                        return Err(format!(
                            "'{s}': the version after the colon is numbers and dots, as 13 or 11.4, or a series, as 15.* or 15.2..15.8"
                        ));
                    }
                    None => return Err(no_such_version(s)),
                },
            },
        };
        Ok(ServerChoice { kind, version })
    }
}

impl ServerChoice {
    /// The series its version names, if it names one.
    pub fn series(&self) -> Option<Pattern> {
        self.version
            .as_deref()
            .and_then(Pattern::parse)
            .and_then(Result::ok)
    }
}

impl std::fmt::Display for ServerChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(kind_name(self.kind))?;
        match &self.version {
            Some(v) => write!(f, ":{v}"),
            None => Ok(()),
        }
    }
}

impl serde::Serialize for ServerChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for ServerChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ServerChoice, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The major version a shorthand names: PostgreSQL's first number (10 and later), MariaDB's
/// and MySQL's first two.
fn major(b: &Build) -> String {
    let parts: Vec<&str> = b.version.split('.').collect();
    let n = if b.kind == ServerKind::Postgres && parts[0].parse::<u32>().is_ok_and(|m| m >= 10) {
        1
    } else {
        2
    };
    parts[..n.min(parts.len())].join(".")
}

/// `dbsweep servers`: every build found, and the build each shorthand starts.
pub fn listing(builds: &[Build], defaults: &[(ServerKind, Option<String>)]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "{:<9}{:<10}{:<16}path", "kind", "version", "shorthand");
    for b in builds {
        let short = format!("{}:{}", kind_name(b.kind), major(b));
        // The shorthand picks the newest build of its version: is it this one?
        let picked = builds
            .iter()
            .rev()
            .find(|o| o.kind == b.kind && o.matches(&major(b)))
            .is_some_and(|o| o == b);
        let _ = writeln!(
            s,
            "{:<9}{:<10}{:<16}{}",
            kind_name(b.kind),
            b.version,
            if picked { short } else { "-".into() },
            b.basedir.display()
        );
    }
    for (kind, line) in defaults {
        let _ = writeln!(
            s,
            "--server {} starts: {}",
            kind_name(*kind),
            line.as_deref().unwrap_or("nothing (not installed)")
        );
    }
    let _ = writeln!(
        s,
        "(builds directories: {}; set DBSWEEP_BUILDS to look elsewhere)",
        builds_dirs()
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(":")
    );
    s
}

/// The product's own name: `PostgreSQL`, `MariaDB`, `MySQL`.
pub fn product_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Postgres => "PostgreSQL",
        ServerKind::Mariadb => "MariaDB",
        ServerKind::Mysql => "MySQL",
    }
}

pub fn kind_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Postgres => "postgres",
        ServerKind::Mariadb => "mariadb",
        ServerKind::Mysql => "mysql",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_patterns_name_the_versions_in_them() {
        let all = ["15.10", "15.2", "15.8", "14.9", "16.1", "15.12", "15"];
        let under = Pattern::parse("15.*").unwrap().unwrap();
        assert_eq!(in_pattern(&under, &all), ["15.2", "15.8", "15.10", "15.12"]);
        let range = Pattern::parse("15.2..15.10").unwrap().unwrap();
        assert_eq!(in_pattern(&range, &all), ["15.2", "15.8", "15.10"]);
        assert_eq!(Pattern::parse("15.8"), None);
        for bad in ["x.*", "15..x", "15.8..15.2", ".*"] {
            assert!(matches!(Pattern::parse(bad), Some(Err(_))), "{bad}");
        }
    }

    /// Parts that do not fit a number are no version (they were dropped, and the pattern meant
    /// every release); leading zeros name the same version.
    #[test]
    fn versions_too_large_to_read_are_no_such_version_and_zeros_are_the_same_version() {
        for bad in [
            "postgres:99999999999.*",
            "postgres:15.99999999999..16",
            "postgres:0..99999999999",
            "postgres:15.4294967296",
        ] {
            let e = bad.parse::<ServerChoice>().unwrap_err();
            assert!(e.contains("no such version"), "{bad}: {e}");
        }
        let huge = format!("postgres:{}.*", "9".repeat(10_000));
        assert!(
            huge.parse::<ServerChoice>()
                .unwrap_err()
                .contains("no such version")
        );
        let c: ServerChoice = "mariadb:0010.0011.0005".parse().unwrap();
        assert_eq!(c.version.as_deref(), Some("10.11.5"));
        assert_eq!(canonical_version("10.11.05").as_deref(), Some("10.11.5"));
        assert_eq!(canonical_version("15.x"), None);
        let range = Pattern::parse("015.02..15.010").unwrap().unwrap();
        assert_eq!(range, Pattern::Range("15.2".into(), "15.10".into()));
    }

    #[test]
    fn version_numbers_of_each_server_line() {
        for (line, v) in [
            (
                "postgres (PostgreSQL) 15.14 (Debian 15.14-0+deb12u1)",
                "15.14",
            ),
            ("postgres (PostgreSQL) 13.23", "13.23"),
            (
                "mariadbd  Ver 11.4.5-MariaDB for linux-systemd on x86_64 (MariaDB Server)",
                "11.4.5",
            ),
            (
                "mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)",
                "8.0.36",
            ),
        ] {
            assert_eq!(version_number(line).as_deref(), Some(v), "{line}");
        }
        assert_eq!(version_number("bash: no such file"), None);
    }

    #[test]
    fn a_wanted_version_matches_whole_parts_only() {
        let b = Build {
            kind: ServerKind::Mariadb,
            version: "11.4.5".into(),
            line: String::new(),
            basedir: PathBuf::new(),
            server: PathBuf::new(),
            libdir: None,
            provenance: None,
        };
        assert!(b.matches("11") && b.matches("11.4") && b.matches("11.4.5"));
        assert!(!b.matches("1") && !b.matches("11.40") && !b.matches("11.4.50"));
        assert!(version_key("10.11.6") < version_key("11.4.5"));
    }
}
