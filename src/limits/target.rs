//! Where a target keeps its data, and the page it reads and writes: the place the disk's
//! probes run and the block they use.

use std::path::PathBuf;

use crate::db::{self, Dialect, OpenOptions};
use crate::error::Error;

/// The data's directory and page of a target.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// None when the data is not on this host (`note` says where it is).
    pub dir: Option<PathBuf>,
    pub page: u64,
    pub note: Option<String>,
}

/// SQLite's default page, which a new database file gets.
pub const SQLITE_PAGE: u64 = 4096;
pub const POSTGRES_PAGE: u64 = 8192;
pub const INNODB_PAGE: u64 = 16384;

/// A SQLite file's directory and page (its own `PRAGMA page_size` when the file exists); a
/// server's `data_directory` or `@@datadir` and its block or InnoDB page, asked of it.
pub fn of_url(url: &str, timeouts: db::Timeouts) -> Result<Place, Error> {
    if let Some(dir) = db::sqlite_dir(url) {
        return Ok(Place {
            dir: Some(dir),
            page: sqlite_page(url).unwrap_or(SQLITE_PAGE),
            note: None,
        });
    }
    let (dir_sql, page_sql, default) = match db::dialect_of(url) {
        Some(Dialect::Postgres) => ("SHOW data_directory", "SHOW block_size", POSTGRES_PAGE),
        Some(Dialect::Mysql) => ("SELECT @@datadir", "SELECT @@innodb_page_size", INNODB_PAGE),
        _ => {
            return Err(Error::Usage(format!(
                "limits: --target {}: not a database whose disk can be probed",
                db::redact_url(url)
            )));
        }
    };
    let t = db::open(url, OpenOptions::bounded(timeouts))?;
    let mut c = t
        .connect()
        .map_err(|e| Error::db(format!("limits: connecting to {}", db::redact_url(url)), e))?;
    let dir = c
        .query_text(dir_sql)
        .map_err(|e| Error::db(format!("limits: {dir_sql}"), e))?
        .ok_or_else(|| Error::Run(format!("limits: {dir_sql} answered nothing")))?;
    let page = c
        .query_text(page_sql)
        .ok()
        .flatten()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(default);
    let dir = PathBuf::from(dir.trim_end_matches('/'));
    // A directory of that name here is the server's only when the server is here too.
    if super::network::is_local(url) && dir.is_dir() {
        return Ok(Place {
            dir: Some(dir),
            page,
            note: None,
        });
    }
    Ok(Place {
        note: Some(format!(
            "the server's data directory {} is not on this host: run `dbsweep limits --dir {} --page-size {page}` there",
            dir.display(),
            dir.display()
        )),
        dir: None,
        page,
    })
}

/// The page size of an existing SQLite file, read from its header (bytes 16-17, big-endian;
/// 1 means 65536) without opening it as a database.
fn sqlite_page(url: &str) -> Option<u64> {
    use std::io::Read;
    let path = url.strip_prefix("sqlite://")?;
    let path = path.split('?').next().unwrap_or(path);
    let mut head = [0u8; 18];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    if &head[..16] != b"SQLite format 3\0" {
        return None;
    }
    match u16::from_be_bytes([head[16], head[17]]) {
        1 => Some(65536),
        n if n >= 512 && n.is_power_of_two() => Some(u64::from(n)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sqlite_file_gives_its_own_page() {
        let dir = std::env::temp_dir().join(format!("dbsweep-page-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("p.db");
        let c = rusqlite::Connection::open(&file).unwrap();
        c.execute_batch("PRAGMA page_size = 16384; CREATE TABLE t (a); VACUUM;")
            .unwrap();
        drop(c);
        let url = format!("sqlite://{}", file.display());
        let p = of_url(&url, Default::default()).unwrap();
        assert_eq!(p.page, 16384);
        assert_eq!(p.dir.as_deref(), Some(dir.as_path()));
        // A file not there yet gets SQLite's default.
        let p = of_url(
            &format!("sqlite://{}/new.db", dir.display()),
            Default::default(),
        )
        .unwrap();
        assert_eq!(p.page, SQLITE_PAGE);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
