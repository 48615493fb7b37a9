//! ATIS's data from the user's Data/ATIS: the tests, the rounds, the query groups and the rows read.

use std::path::{Path, PathBuf};

use super::super::{Ctx, SqlBenchClient};
use crate::db::{DbError, Dialect};

use super::queries::QUERIES;
use super::tables::TABLES;

/// The tests, as the original's output names them.
pub(crate) const TESTS: [&str; 8] = [
    "create_table",
    "insert",
    "select_simple_join",
    "select_join",
    "select_key_prefix_join",
    "select_distinct",
    "select_group",
    "drop_table",
];

/// The round whose row counts are checked (`$i == 100`).
const CHECKED_ROUND: u64 = 100;

/// Rounds of each query group: 5,000, or 500 with --small-test.
pub(crate) fn rounds(small: bool) -> u64 {
    if small { 500 } else { 5_000 }
}

/// The queries of group `g` that a server of dialect `d` runs, their tables named as dbsweep
/// names them, with the rows each gives on the original's data.
pub(crate) fn queries(d: Dialect, g: usize) -> Vec<(String, u64)> {
    QUERIES[g]
        .iter()
        .filter(|q| q.2.met(d))
        .map(|q| (own_tables(q.0), q.1))
        .collect()
}

/// `sql` with each table of its FROM list named as dbsweep names it and called by the
/// original's name (`from city,state` -> `from sqlbench_city city,sqlbench_state state`;
/// `airport AS from_airport` -> `sqlbench_airport AS from_airport`): the rest of the query,
/// which names columns by their tables, is the original's to the byte.
fn own_tables(sql: &str) -> String {
    let lower = sql.to_ascii_lowercase();
    let Some(from) = lower.find(" from ").map(|at| at + " from ".len()) else {
        return sql.to_string();
    };
    let end = [" where ", " group by ", " order by "]
        .iter()
        .filter_map(|w| lower[from..].find(w).map(|at| from + at))
        .min()
        .unwrap_or(sql.len());
    let list: Vec<String> = sql[from..end]
        .split(',')
        .map(|item| {
            let item = item.trim();
            match item.split_once(" AS ").or_else(|| item.split_once(" as ")) {
                Some((table, alias)) => format!("sqlbench_{table} AS {alias}"),
                None => format!("sqlbench_{item} {item}"),
            }
        })
        .collect();
    format!("{}{}{}", &sql[..from], list.join(","), &sql[end..])
}

/// The rows of each table, in the tables' order, each line a list of values checked to be
/// only that (and with the original's `\'` -> `''`, as its `double_quotes` servers get it).
pub(crate) struct Data {
    rows: Vec<Vec<String>>,
}

/// Reads the ATIS files of the sql-bench checkout `dir` (`Data/ATIS/TABLE.txt`; the older
/// checkouts' `connection.txt` and `stop.txt` where a table's own file is not there).
pub(crate) fn data(dir: Option<&Path>) -> Result<Data, String> {
    let Some(dir) = dir else {
        return Err(
            "sqlbench_atis: needs the original's Data/ATIS files (real airline data, which no \
             rule generates): --sqlbench-data DIR (or SQLBENCH_HOME) naming a sql-bench checkout"
                .into(),
        );
    };
    let mut rows = Vec::with_capacity(TABLES.len());
    for (name, fields, _) in TABLES {
        let atis = dir.join("Data/ATIS");
        let mut path: PathBuf = atis.join(format!("{name}.txt"));
        let older = match name {
            "fconnection" => Some("connection.txt"),
            "stop1" => Some("stop.txt"),
            _ => None,
        };
        if let Some(older) = older
            && !path.exists()
        {
            path = atis.join(older);
        }
        // Only a regular file, and a bounded one (a FIFO or a device ends in an error at once).
        let text = crate::input::read_text(&path, crate::input::SMALL)
            .map_err(|e| format!("sqlbench_atis: {}: {e}", path.display()))?;
        let mut table = Vec::new();
        // The original skips lines without a word character.
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.chars().any(|c| c.is_alphanumeric() || c == '_'))
        {
            let sent = line.replace("\\'", "''");
            match values(&sent) {
                Some(n) if n == fields.len() => table.push(sent),
                found => {
                    return Err(format!(
                        "sqlbench_atis: {}:{}: not a row of {name}'s {} values{}",
                        path.display(),
                        i + 1,
                        fields.len(),
                        found.map_or(String::new(), |n| format!(" ({n} found)"))
                    ));
                }
            }
        }
        rows.push(table);
    }
    Ok(Data { rows })
}

/// How many values `line` lists (`'text'` or a number, separated by commas), or None when it
/// is anything else. A quote inside a string is doubled; a backslash may escape any other
/// character, never a quote or another backslash: so every server reads the same strings
/// (MySQL's backslash escapes and the standard strings of PostgreSQL and SQLite alike), and a
/// line can never end its statement and start another.
fn values(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = 0;
    let mut n = 0;
    loop {
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        match b.get(i)? {
            b'\'' => {
                i += 1;
                loop {
                    match *b.get(i)? {
                        b'\'' if b.get(i + 1) == Some(&b'\'') => i += 2,
                        b'\'' => break,
                        b'\\' if matches!(b.get(i + 1), Some(b'\'' | b'\\') | None) => {
                            return None;
                        }
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
                i += 1;
            }
            _ => {
                let start = i;
                if matches!(b[i], b'-' | b'+') {
                    i += 1;
                }
                let digits = i;
                while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
                    i += 1;
                }
                let number = &line[digits..i];
                if number.is_empty()
                    || !number.bytes().any(|c| c.is_ascii_digit())
                    || number.matches('.').count() > 1
                    || i == start
                {
                    return None;
                }
            }
        }
        n += 1;
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
        match b.get(i) {
            None => return Some(n),
            Some(b',') => i += 1,
            Some(_) => return None,
        }
    }
}

impl SqlBenchClient {
    /// The ATIS script: its tables, its rows, its five query groups, the drop.
    pub(crate) fn atis_original(&mut self, c: &mut Ctx, data: &Data) -> Result<(), DbError> {
        let d = self.dialect;
        for (name, fields, keys) in TABLES {
            // PostgreSQL has no backquotes; `rank` needs none there (MariaDB's script quotes
            // it for the servers where it became a reserved word).
            let fields: Vec<String> = fields
                .iter()
                .map(|f| match d {
                    Dialect::Postgres => f.replace('`', ""),
                    _ => f.to_string(),
                })
                .collect();
            let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
            c.create(d, &format!("sqlbench_{name}"), &fields, &keys)?;
        }
        self.lap(0);
        for ((name, ..), rows) in TABLES.iter().zip(&data.rows) {
            for row in rows {
                c.text_write(&format!("insert into sqlbench_{name} values ({row})"))?;
            }
        }
        self.lap(1);
        for g in 0..QUERIES.len() {
            let queries = queries(d, g);
            for round in 1..=rounds(self.small) {
                for (sql, rows) in &queries {
                    let got = c.text_read(sql)?;
                    if round == CHECKED_ROUND && got != *rows {
                        self.warnings.push(format!(
                            "sqlbench_atis: {}: query '{sql}' returned {got} rows where the \
                             original's data gives {rows}",
                            TESTS[2 + g]
                        ));
                    }
                }
            }
            self.lap(2 + g);
        }
        for (name, ..) in TABLES {
            c.sql(&format!("drop table sqlbench_{name}"))?;
        }
        self.lap(7);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tables::TABLE_NAMES;
    use super::*;

    #[test]
    fn the_from_lists_name_dbsweeps_tables_by_the_originals_names() {
        assert_eq!(
            own_tables(QUERIES[0][0].0),
            "select city.city_name,state.state_name,city.city_code from sqlbench_city city,sqlbench_state state where city.city_code='MATL' and city.state_code=state.state_code"
        );
        assert_eq!(
            own_tables("select distinct from_airport from flight"),
            "select distinct from_airport from sqlbench_flight flight"
        );
        let q = own_tables(QUERIES[4][21].0);
        assert!(
            q.contains(
                " FROM sqlbench_flight flight,sqlbench_airport AS from_airport,sqlbench_airport AS to_airport WHERE "
            ),
            "{q}"
        );
        // Every table a query names is one the group makes.
        for group in QUERIES {
            for (sql, ..) in group {
                let own = own_tables(sql);
                for word in own.split([' ', ',']) {
                    if let Some(t) = word.strip_prefix("sqlbench_") {
                        assert!(TABLES.iter().any(|(n, ..)| *n == t), "{t} in {own}");
                    }
                }
                assert!(own.contains("sqlbench_"), "{own}");
            }
        }
        assert_eq!(
            TABLE_NAMES.to_vec(),
            TABLES
                .iter()
                .map(|(n, ..)| format!("sqlbench_{n}"))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn the_limits_leave_out_what_server_cfg_leaves_out() {
        let counts = |d| (0..5).map(|g| queries(d, g).len()).collect::<Vec<_>>();
        // count(if(...)) never runs; PostgreSQL has no std(), no alias in HAVING and no
        // mod(double precision, integer); SQLite's build has no std(), floor() or mod().
        assert_eq!(counts(Dialect::Mysql), [5, 1, 1, 8, 28]);
        assert_eq!(counts(Dialect::Postgres), [5, 1, 1, 8, 25]);
        assert_eq!(counts(Dialect::Sqlite), [5, 1, 1, 8, 25]);
    }

    #[test]
    fn a_row_is_values_and_nothing_else() {
        assert_eq!(
            values("'ATR','AEROSPATIALE',2,'TURBOPROP',80.58,-3"),
            Some(6)
        );
        assert_eq!(values("'CHILDREN''S FARES','',7"), Some(3));
        assert_eq!(values("'CHILDREN\\S FARES',1"), Some(2));
        for bad in [
            "'a',1); drop table x; --",
            "'a\\'',1",
            "'a\\\\',1",
            "'open",
            "1,,2",
            "1.2.3",
            "now()",
            "'a' 'b'",
            "",
        ] {
            assert_eq!(values(bad), None, "{bad}");
        }
    }
}
