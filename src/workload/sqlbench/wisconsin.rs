//! sql-bench's test-wisconsin: the Wisconsin benchmark's four tables (onek, tenk1, tenk2 and
//! Bprime, here `sqlbench_*`) made with their unique keys and an index on `hundred`, filled a
//! row a statement from the original's `Data/Wisconsin` files (or the same rows generated),
//! Bprime cut to its first 1,000 rows, then the script's 24 queries in order: each select
//! 5,000 times (1,000 with --small-test), each write once, every row fetched.

use std::path::{Path, PathBuf};

use super::{Ctx, SqlBenchClient};
use crate::db::DbError;
use crate::workload::rand::Rand;

const ONEK: &str = "sqlbench_onek";
const TENK1: &str = "sqlbench_tenk1";
const TENK2: &str = "sqlbench_tenk2";
const BPRIME: &str = "sqlbench_bprime";

/// The selects' repetitions: the script's `$opt_loop_count`, a fifth of it at --small-test.
pub(super) fn loops(small: bool) -> u64 {
    if small { 1_000 } else { 5_000 }
}

/// The rows of the two data files: onek's and tenk's (tenk1, tenk2 and Bprime load it).
pub(super) struct Data {
    pub onek: Vec<String>,
    pub tenk: Vec<String>,
    /// Whether the rows are generated (no checkout, or one without `Data/Wisconsin`).
    pub generated: bool,
}

/// The Wisconsin data: the files of the sql-bench checkout `dir` (`Data/Wisconsin/onek.data`
/// and `tenk.data`), each line checked to be a row of the benchmark's 16 columns (the line is
/// sent as the original sends it, inside `values (...)`); or, without a checkout, the same
/// rows generated (also for a checkout without `Data/Wisconsin`: one that holds only the ATIS
/// group's files).
pub(super) fn data(dir: Option<&Path>) -> Result<Data, String> {
    let Some(dir) = dir.filter(|d| d.join("Data/Wisconsin").exists()) else {
        return Ok(Data {
            onek: generated(1_000, 0x0_0e1c),
            tenk: generated(10_000, 0x7e4c),
            generated: true,
        });
    };
    let read = |name: &str| -> Result<Vec<String>, String> {
        let path: PathBuf = dir.join("Data/Wisconsin").join(name);
        // Only a regular file, and a bounded one (a FIFO or a device ends in an error at once).
        let text = crate::input::read_text(&path, crate::input::SMALL)
            .map_err(|e| format!("sqlbench_wisconsin: {}: {e}", path.display()))?;
        let rows: Vec<String> = text.lines().map(str::to_string).collect();
        for (i, row) in rows.iter().enumerate() {
            if !is_row(row) {
                return Err(format!(
                    "sqlbench_wisconsin: {}:{}: not a Wisconsin row of 13 numbers and 3 quoted \
                     strings",
                    path.display(),
                    i + 1
                ));
            }
        }
        if rows.is_empty() {
            return Err(format!("sqlbench_wisconsin: {}: no rows", path.display()));
        }
        Ok(rows)
    };
    Ok(Data {
        onek: read("onek.data")?,
        tenk: read("tenk.data")?,
        generated: false,
    })
}

/// Whether `line` is a row as the data files hold them: 13 integers, then 3 strings in single
/// quotes of letters, digits and spaces (so that it can go into a statement as it is).
fn is_row(line: &str) -> bool {
    let fields: Vec<&str> = line.split(',').collect();
    fields.len() == 16
        && fields[..13]
            .iter()
            .all(|f| !f.is_empty() && f.len() < 10 && f.bytes().all(|b| b.is_ascii_digit()))
        && fields[13..].iter().all(|f| {
            f.len() >= 2
                && f.starts_with('\'')
                && f.ends_with('\'')
                && f[1..f.len() - 1]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b' ')
        })
}

/// The data files' string of `n`: the two base-26 digits of `n` mod 676 as letters, lowest
/// first, then AAAA.
fn wisconsin_string(n: u64) -> String {
    let n = n % 676;
    let letter = |d: u64| (b'A' + d as u8) as char;
    let mut s = String::with_capacity(6);
    s.push(letter(n % 26));
    s.push(letter(n / 26));
    s.push_str("AAAA");
    s
}

/// `rows` rows as the data files have them: unique2 the row's number, unique1 a fixed
/// permutation of 0..rows (the one thing the files hold that a rule does not give), every
/// other column unique1 modulo 2, 4, 10, 20 and the hundredth, tenth, fifth, half and whole
/// of the rows (tenk's hundred is unique1 mod 100, onek's mod 10), odd twice the first of
/// those, even one more; the strings of unique1 and unique2, and string4 by unique2.
fn generated(rows: u64, seed: u64) -> Vec<String> {
    let mut unique1: Vec<u64> = (0..rows).collect();
    let mut rand = Rand::for_thread(seed, 0);
    for i in (1..rows as usize).rev() {
        unique1.swap(i, rand.uniform(0, i as u64) as usize);
    }
    let m = |v: u64, by: u64| v % by.max(1);
    unique1
        .iter()
        .enumerate()
        .map(|(unique2, &u1)| {
            let odd = m(u1, rows / 100) * 2;
            format!(
                "{u1},{unique2},{},{},{},{},{},{},{},{},{},{odd},{},'{}','{}','{}xx'",
                m(u1, 2),
                m(u1, 4),
                m(u1, 10),
                m(u1, 20),
                m(u1, rows / 100),
                m(u1, rows / 10),
                m(u1, rows / 5),
                m(u1, rows / 2),
                m(u1, rows),
                odd + 1,
                wisconsin_string(u1),
                wisconsin_string(unique2 as u64),
                ["AAAA", "HHHH", "OOOO", "VVVV"][unique2 % 4],
            )
        })
        .collect()
}

/// The Wisconsin columns, in the tables' and the files' order.
const COLUMNS: [&str; 16] = [
    "unique1",
    "unique2",
    "two",
    "four",
    "ten",
    "twenty",
    "hundred",
    "thousand",
    "twothousand",
    "fivethous",
    "tenthous",
    "odd",
    "even",
    "stringu1",
    "stringu2",
    "string4",
];

/// The columns of the four tables as the script makes them (onek's unique1 is int(5), the
/// others' int(4); unique1, unique2 and hundred NOT NULL; the strings char(16)).
fn fields(first: &str) -> Vec<String> {
    COLUMNS
        .iter()
        .map(|&c| match c {
            "unique1" => format!("unique1 {first} NOT NULL"),
            "unique2" | "hundred" => format!("{c} int(4) NOT NULL"),
            _ if c.starts_with("string") => format!("{c} char(16)"),
            _ => format!("{c} int(4)"),
        })
        .collect()
}

/// The script's queries in order, its table names prefixed, with whether each is a select
/// (run `loops` times).
fn queries() -> Vec<String> {
    let all = COLUMNS[..13].join(", ");
    let named = |p: &str| -> String { COLUMNS.map(|c| format!("{p}.{c} AS {p}{c}")).join(", ") };
    let insert = |u1: u32, u2: u32, spaced: bool| {
        let (cols, strings) = if spaced {
            (
                format!("{all}, stringu1, stringu2, string4"),
                "'ron may choi', 'jae kwang choi', 'u. c. berkeley'",
            )
        } else {
            (
                format!("{all},stringu1,stringu2, string4"),
                "'ron may choi','jae kwang choi', 'u. c. berkeley'",
            )
        };
        format!(
            "insert into {TENK1} ({cols}) values ({u1}, {u2}, 0, 2, 0, 10, 50, 688, 1950, 4950, \
             9950, 1, 100, {strings})"
        )
    };
    let delete = |u2: u32| format!("delete from {TENK1} where {TENK1}.unique2 = {u2}");
    let update =
        |to: u32, u2: u32| format!("update {TENK1} set unique2 = {to} where {TENK1}.unique2 ={u2}");
    vec![
        format!("select * from {TENK1} where (unique2 > 301) and (unique2 < 402)"),
        format!("select * from {TENK1} where (unique1 > 647) and (unique1 < 1648)"),
        format!("select * from {TENK1} where unique2 = 2001"),
        format!("select * from {TENK1} where (unique2 > 301) and (unique2 < 402)"),
        format!(
            "select t1.*, {} from {TENK1} t1, {TENK1} t2 where (t1.unique2 = t2.unique2) and \
             (t2.unique2 < 1000)",
            named("t2")
        ),
        format!(
            "select t.*,{} from {TENK1} t, {BPRIME} B where t.unique2 = B.unique2",
            named("B")
        ),
        format!(
            "select t1.*,{} from {ONEK} o, {TENK1} t1, {TENK1} t2 where (o.unique2 = \
             t1.unique2) and (t1.unique2 = t2.unique2) and (t1.unique2 < 1000) and (t2.unique2 \
             < 1000)",
            named("o")
        ),
        format!("select two, four, ten, twenty, hundred, string4 from {TENK1}"),
        format!("select * from {ONEK}"),
        format!("select MIN(unique2) as x from {TENK1}"),
        insert(10001, 74001, false),
        insert(19991, 60001, false),
        delete(877),
        delete(876),
        update(10001, 1491),
        update(10023, 1480),
        insert(20002, 70002, true),
        insert(50002, 40002, true),
        delete(10001),
        delete(900),
        update(10088, 187),
        update(10003, 2000),
        update(10020, 1974),
        update(16001, 1140),
    ]
}

/// The tables the group makes.
pub(super) const TABLES: [&str; 4] = [ONEK, TENK1, TENK2, BPRIME];

impl SqlBenchClient {
    pub(super) fn wisconsin_original(&mut self, c: &mut Ctx, data: &Data) -> Result<(), DbError> {
        let d = self.dialect;
        for (i, t) in TABLES.iter().enumerate() {
            let first = if i == 0 { "int(5)" } else { "int(4)" };
            let keys = [
                "UNIQUE (unique1)".to_string(),
                "UNIQUE (unique2)".to_string(),
                format!("INDEX hundred{} (hundred)", i + 1),
            ];
            c.create(d, t, &fields(first), &keys)?;
        }
        self.lap(0); // create_table
        for t in TABLES {
            let rows = if t == ONEK { &data.onek } else { &data.tenk };
            let mut sql = String::new();
            for row in rows {
                sql.clear();
                sql.push_str("insert into ");
                sql.push_str(t);
                sql.push_str(" values (");
                sql.push_str(row);
                sql.push(')');
                c.text_write(&sql)?;
            }
        }
        self.lap(1); // insert
        c.text_write(&format!(
            "delete from {BPRIME} where {BPRIME}.unique2 >= 1000"
        ))?;
        self.lap(2); // delete_big
        let loops = loops(self.small);
        for q in queries() {
            if q.starts_with("select") {
                for _ in 0..loops {
                    c.text_read(&q)?;
                }
            } else {
                c.text_write(&q)?;
            }
        }
        self.lap(3); // wisc_benchmark
        for t in TABLES {
            c.sql(&format!("drop table {t}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_rows_are_the_data_files_rows() {
        // Rows of the original's files, rebuilt from their unique1 and unique2 alone.
        let rebuilt = |rows: u64, u1: u64, u2: usize| -> String {
            let g = generated(rows, 3);
            let at = g
                .iter()
                .position(|r| r.starts_with(&format!("{u1},")))
                .unwrap();
            // The row of unique1 u1 as it would be at row u2.
            let mut f: Vec<String> = g[at].split(',').map(str::to_string).collect();
            f[1] = u2.to_string();
            f[14] = format!("'{}'", wisconsin_string(u2 as u64));
            f[15] = format!("'{}xx'", ["AAAA", "HHHH", "OOOO", "VVVV"][u2 % 4]);
            f.join(",")
        };
        for (rows, u1, u2, line) in [
            (
                10_000,
                8800,
                0,
                "8800,0,0,0,0,0,0,800,800,3800,8800,0,1,'MAAAAA','AAAAAA','AAAAxx'",
            ),
            (
                10_000,
                1891,
                1,
                "1891,1,1,3,1,11,91,891,1891,1891,1891,182,183,'TUAAAA','BAAAAA','HHHHxx'",
            ),
            (
                1_000,
                147,
                0,
                "147,0,1,3,7,7,7,47,147,147,147,14,15,'RFAAAA','AAAAAA','AAAAxx'",
            ),
            (
                1_000,
                931,
                1,
                "931,1,1,3,1,11,1,31,131,431,931,2,3,'VJAAAA','BAAAAA','HHHHxx'",
            ),
        ] {
            assert_eq!(rebuilt(rows, u1, u2), line);
        }
        // In place: unique2 the row's number, unique1 a permutation that is not the identity.
        let rows = generated(10_000, 7);
        assert!(rows.iter().all(|r| is_row(r)), "{}", rows[0]);
        assert!(
            rows.iter()
                .enumerate()
                .all(|(i, r)| r.split(',').nth(1) == Some(&*i.to_string()))
        );
        let mut u1: Vec<u64> = rows
            .iter()
            .map(|r| r.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert_ne!(u1[..10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        u1.sort_unstable();
        assert!(u1.iter().enumerate().all(|(i, &v)| v == i as u64));
    }

    #[test]
    fn a_data_line_that_is_not_a_row_is_refused() {
        assert!(is_row(
            "147,0,1,3,7,7,7,47,147,147,147,14,15,'RFAAAA','AAAAAA','AAAAxx'"
        ));
        assert!(!is_row(
            "147,0,1,3,7,7,7,47,147,147,147,14,15,'RFAAAA','AAAAAA','AA'); drop table x; --'"
        ));
        assert!(!is_row(
            "147,0,1,3,7,7,7,47,147,147,147,14,'RFAAAA','AAAAAA','AAAAxx'"
        ));
        assert!(!is_row(
            "1a,0,1,3,7,7,7,47,147,147,147,14,15,'RFAAAA','AAAAAA','AAAAxx'"
        ));
        assert!(!is_row(""));
    }

    #[test]
    fn the_script_has_ten_selects_and_fourteen_writes() {
        let q = queries();
        assert_eq!(q.len(), 24);
        assert_eq!(q.iter().filter(|q| q.starts_with("select")).count(), 10);
        assert!(
            q.iter()
                .all(|q| !q.contains(" tenk1") && !q.contains(" onek "))
        );
    }
}
