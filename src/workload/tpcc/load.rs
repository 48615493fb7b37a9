//! The TPC-C loader: the specification's cardinalities and random data (clause 4.3.3), in
//! parallel over warehouses, through each database's bulk path (COPY, LOAD DATA, large SQLite
//! transactions).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::schema;
use crate::db::{Conn, DbError, Dialect, RowValue, Target};
use crate::error::Error;
use crate::output::Events;
use crate::workload::loader::LoadBar;

pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3000;
pub const ITEMS: i64 = 100_000;
pub const ORDERS: i64 = 3000;
/// Orders from this id on are undelivered (new_order rows): the last 900.
pub const FIRST_NEW_ORDER: i64 = 2101;

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999): its three digits as syllables.
pub fn last_name(n: i64) -> String {
    let n = n.clamp(0, 999) as usize;
    format!(
        "{}{}{}",
        SYLLABLES[n / 100],
        SYLLABLES[n / 10 % 10],
        SYLLABLES[n % 10]
    )
}

/// The random data rules of the specification.
pub struct Gen {
    rng: SmallRng,
    /// The run-time constant C of NURand for last names at load time.
    pub c_last: i64,
}

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

impl Gen {
    pub fn new(seed: u64, c_last: i64) -> Gen {
        Gen {
            rng: SmallRng::seed_from_u64(seed),
            c_last,
        }
    }

    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.random_range(lo..=hi)
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
    pub fn nurand(&mut self, a: i64, x: i64, y: i64, c: i64) -> i64 {
        (((self.int(0, a) | self.int(x, y)) + c) % (y - x + 1)) + x
    }

    /// A random alphanumeric string of `lo` to `hi` characters.
    pub fn astring(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.random_range(lo..=hi);
        (0..n)
            .map(|_| ALNUM[self.rng.random_range(0..ALNUM.len())] as char)
            .collect()
    }

    pub fn nstring(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.random_range(lo..=hi);
        (0..n)
            .map(|_| char::from(b'0' + self.rng.random_range(0..10u8)))
            .collect()
    }

    /// Item and stock data: 26 to 50 characters, 10% with "ORIGINAL" at a random place.
    pub fn data(&mut self) -> String {
        let mut s = self.astring(26, 50);
        if self.rng.random_range(0..10) == 0 {
            let at = self.rng.random_range(0..=s.len() - 8);
            s.replace_range(at..at + 8, "ORIGINAL");
        }
        s
    }

    pub fn zip(&mut self) -> String {
        format!("{}11111", self.nstring(4, 4))
    }

    /// A decimal with `scale` digits drawn uniformly from lo..=hi (in units of 10^-scale).
    pub fn decimal(&mut self, lo: i64, hi: i64, scale: usize) -> String {
        let v = self.int(lo, hi);
        fixed(v, scale)
    }

    fn address(&mut self, row: &mut Vec<RowValue>) {
        for _ in 0..3 {
            row.push(RowValue::Text(self.astring(10, 20)));
        }
        let state: String = (0..2)
            .map(|_| char::from(b'A' + self.rng.random_range(0..26u8)))
            .collect();
        row.push(RowValue::Text(state));
        row.push(RowValue::Text(self.zip()));
    }
}

/// `v` in units of 10^-scale as a decimal string: fixed(1234, 2) = "12.34".
pub fn fixed(v: i64, scale: usize) -> String {
    let p = 10i64.pow(scale as u32);
    let sign = if v < 0 { "-" } else { "" };
    format!("{sign}{}.{:0scale$}", v.abs() / p, v.abs() % p)
}

/// What a TPC-C load did.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TpccLoadReport {
    pub warehouses: u32,
    pub rows: u64,
    pub seconds: f64,
    pub rows_per_s: f64,
    pub client_cpu_s: f64,
    /// NURand's C for last names at load time (the run must use another, per clause 2.1.6.1).
    pub c_last_load: i64,
}

/// Which TPC-C tables exist in the database.
pub fn existing_tables(conn: &mut dyn Conn) -> Result<Vec<&'static str>, DbError> {
    let mut out = Vec::new();
    for t in schema::TABLES {
        if conn.table_exists(t)? {
            out.push(t);
        }
    }
    Ok(out)
}

/// Drops the TPC-C tables that exist; returns their names. Only when every one of them is a
/// plain table with exactly the columns and types dbsweep creates: a user's own `orders` or
/// `customer` (or a view of that name) is left alone, and then nothing is dropped (exit 2,
/// naming the tables and why).
pub fn drop_tables(conn: &mut dyn Conn, url: &str) -> Result<Vec<String>, Error> {
    let own: Vec<_> = schema::TABLES
        .iter()
        .zip(schema::create_tables(conn.dialect()))
        .map(|(t, ddl)| crate::workload::tables::OwnTable {
            name: t.to_string(),
            ddl: vec![ddl],
            partitioned: false,
        })
        .collect();
    crate::workload::tables::drop_own(conn, url, "TPC-C", &own, &|_| {})
}

/// The rows of one warehouse, about (its order lines average 10 an order): the warehouse,
/// its districts, stock, customers, history, orders, order lines and new orders.
const WAREHOUSE_ROWS: u64 = (1
    + DISTRICTS
    + ITEMS
    + DISTRICTS * CUSTOMERS * 2
    + DISTRICTS * ORDERS * 11
    + DISTRICTS * (ORDERS - FIRST_NEW_ORDER + 1)) as u64;

/// Creates and loads `warehouses` warehouses with up to `threads` loaders.
pub fn prepare(
    target: &dyn Target,
    warehouses: u32,
    threads: u32,
    seed: u64,
    force: bool,
    stop: &AtomicBool,
    notes: Events,
) -> Result<TpccLoadReport, Error> {
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    let existing = existing_tables(conn.as_mut()).map_err(|e| Error::db(&url, e))?;
    if !existing.is_empty() {
        if !force {
            return Err(Error::Usage(format!(
                "TPC-C table(s) {} already exist in {url}; run `dbsweep tpcc cleanup` first or add --force to drop and reload them",
                existing.join(", ")
            )));
        }
        notes.progress(&format!(
            "Dropping the TPC-C tables {}...",
            existing.join(", ")
        ));
        drop_tables(conn.as_mut(), &url)?;
    }
    let (tables, after): (Vec<String>, Vec<(String, Vec<String>)>) =
        schema::load_plan(target.dialect()).into_iter().unzip();
    for sql in tables {
        conn.batch(&sql)
            .map_err(|e| Error::db(format!("{url}: {sql}"), e))?;
    }
    let start = Instant::now();
    let cpu_start = crate::metrics::process_cpu_seconds();
    let c_last = SmallRng::seed_from_u64(seed).random_range(0..=255);
    // Job 0 is the item table; job w is warehouse w.
    let jobs = 0..=warehouses;
    let writers = crate::workload::loader::writers(target, threads, &jobs);
    notes.progress(&format!(
        "Loading {warehouses} warehouse(s) with {writers} loader(s)..."
    ));
    let expected = ITEMS as u64 + u64::from(warehouses) * WAREHOUSE_ROWS;
    let bar = LoadBar::new(notes, expected, warehouses, "warehouses");
    let rows = crate::workload::loader::run(target, jobs, writers, stop, |conn, job| {
        let mut g = Gen::new(seed ^ (u64::from(job) << 32), c_last);
        let rows = if job == 0 {
            load_items(conn, &bar, &mut g)
        } else {
            load_warehouse(conn, &bar, &mut g, i64::from(job))
        }
        .map_err(|e| Error::db(format!("{url}: loading"), e))?;
        if job > 0 {
            bar.job_done();
        }
        Ok(rows)
    })?;
    drop(bar);
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Run(
            "interrupted during prepare: the TPC-C tables are partly loaded; run `dbsweep tpcc cleanup` before preparing again".into(),
        ));
    }
    notes.progress("Creating the secondary indexes...");
    crate::workload::loader::after_rows(target, &after, threads, stop)?;
    let analyze = match target.dialect() {
        // PostgreSQL's after_load runs ANALYZE: once is enough.
        Dialect::Postgres => None,
        Dialect::Sqlite => Some("ANALYZE".to_string()),
        Dialect::Mysql => Some(format!("ANALYZE TABLE {}", schema::TABLES.join(", "))),
        Dialect::Any => None,
    };
    if let Some(sql) = analyze {
        conn.query_rows(&sql, 1)
            .map_err(|e| Error::db(format!("{url}: {sql}"), e))?;
    }
    target
        .after_load(conn.as_mut())
        .map_err(|e| Error::db(&url, e))?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(TpccLoadReport {
        warehouses,
        rows,
        seconds,
        rows_per_s: rows as f64 / seconds.max(1e-9),
        client_cpu_s: crate::metrics::process_cpu_seconds() - cpu_start,
        c_last_load: c_last,
    })
}

fn load(
    conn: &mut dyn Conn,
    bar: &LoadBar,
    table: &str,
    next: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
) -> Result<u64, DbError> {
    let cols = schema::columns(table);
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    conn.bulk_load(table, &cols, &mut bar.counting(next))
}

fn load_items(conn: &mut dyn Conn, bar: &LoadBar, g: &mut Gen) -> Result<u64, DbError> {
    let mut i = 0;
    load(conn, bar, "item", &mut |row| {
        i += 1;
        if i > ITEMS {
            return false;
        }
        row.clear();
        row.push(RowValue::Int(i));
        row.push(RowValue::Int(g.int(1, 10_000)));
        row.push(RowValue::Text(g.astring(14, 24)));
        row.push(RowValue::Text(g.decimal(100, 10_000, 2)));
        row.push(RowValue::Text(g.data()));
        true
    })
}

/// Walks (district, id) over ids `first..=last` of every district, district by district.
struct PerDistrict {
    d: i64,
    i: i64,
    first: i64,
    last: i64,
}

impl PerDistrict {
    fn new(first: i64, last: i64) -> PerDistrict {
        PerDistrict {
            d: 1,
            i: first - 1,
            first,
            last,
        }
    }

    fn next(&mut self) -> Option<(i64, i64)> {
        self.i += 1;
        if self.i > self.last {
            self.i = self.first;
            self.d += 1;
        }
        (self.d <= DISTRICTS).then_some((self.d, self.i))
    }
}

fn now_text() -> String {
    crate::results::utc_datetime(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// One warehouse: its row, 10 districts, 100,000 stock rows, 30,000 customers with a history
/// row each, 30,000 orders with 5 to 15 lines, the last 900 per district undelivered.
fn load_warehouse(conn: &mut dyn Conn, bar: &LoadBar, g: &mut Gen, w: i64) -> Result<u64, DbError> {
    let now = now_text();
    let mut rows = warehouse_row(conn, bar, g, w)?;
    rows += districts(conn, bar, g, w)?;
    rows += stock(conn, bar, g, w)?;
    rows += customers(conn, bar, g, w, &now)?;
    rows += history(conn, bar, g, w, &now)?;
    let (orders, line_counts) = orders(conn, bar, g, w, &now)?;
    rows += orders;
    rows += order_lines(conn, bar, g, w, &now, &line_counts)?;
    rows += new_orders(conn, bar, w)?;
    Ok(rows)
}

/// The warehouse's own row.
fn warehouse_row(conn: &mut dyn Conn, bar: &LoadBar, g: &mut Gen, w: i64) -> Result<u64, DbError> {
    let mut once = true;
    load(conn, bar, "warehouse", &mut |row| {
        if !std::mem::take(&mut once) {
            return false;
        }
        row.clear();
        row.push(RowValue::Int(w));
        row.push(RowValue::Text(g.astring(6, 10)));
        g.address(row);
        row.push(RowValue::Text(g.decimal(0, 2000, 4)));
        row.push(RowValue::Text("300000.00".into()));
        true
    })
}

/// Its ten districts.
fn districts(conn: &mut dyn Conn, bar: &LoadBar, g: &mut Gen, w: i64) -> Result<u64, DbError> {
    let mut d = 0;
    load(conn, bar, "district", &mut |row| {
        d += 1;
        if d > DISTRICTS {
            return false;
        }
        row.clear();
        row.extend([
            RowValue::Int(d),
            RowValue::Int(w),
            RowValue::Text(g.astring(6, 10)),
        ]);
        g.address(row);
        row.push(RowValue::Text(g.decimal(0, 2000, 4)));
        row.push(RowValue::Text("30000.00".into()));
        row.push(RowValue::Int(ORDERS + 1));
        true
    })
}

/// Its stock: a row per item.
fn stock(conn: &mut dyn Conn, bar: &LoadBar, g: &mut Gen, w: i64) -> Result<u64, DbError> {
    let mut i = 0;
    load(conn, bar, "stock", &mut |row| {
        i += 1;
        if i > ITEMS {
            return false;
        }
        row.clear();
        row.extend([
            RowValue::Int(i),
            RowValue::Int(w),
            RowValue::Int(g.int(10, 100)),
        ]);
        for _ in 0..10 {
            row.push(RowValue::Text(g.astring(24, 24)));
        }
        row.extend([RowValue::Int(0), RowValue::Int(0), RowValue::Int(0)]);
        row.push(RowValue::Text(g.data()));
        true
    })
}

/// Its customers, district by district.
fn customers(
    conn: &mut dyn Conn,
    bar: &LoadBar,
    g: &mut Gen,
    w: i64,
    now: &str,
) -> Result<u64, DbError> {
    let mut ids = PerDistrict::new(1, CUSTOMERS);
    load(conn, bar, "customer", &mut |row| {
        let Some((d, c)) = ids.next() else {
            return false;
        };
        row.clear();
        row.extend([RowValue::Int(c), RowValue::Int(d), RowValue::Int(w)]);
        row.push(RowValue::Text(g.astring(8, 16)));
        row.push(RowValue::Text("OE".into()));
        let n = if c <= 1000 {
            c - 1
        } else {
            let cl = g.c_last;
            g.nurand(255, 0, 999, cl)
        };
        row.push(RowValue::Text(last_name(n)));
        g.address(row);
        row.push(RowValue::Text(g.nstring(16, 16)));
        row.push(RowValue::Text(now.to_string()));
        row.push(RowValue::Text(
            if g.int(1, 10) == 1 { "BC" } else { "GC" }.into(),
        ));
        row.push(RowValue::Text("50000.00".into()));
        row.push(RowValue::Text(g.decimal(0, 5000, 4)));
        row.push(RowValue::Text("-10.00".into()));
        row.push(RowValue::Text("10.00".into()));
        row.extend([RowValue::Int(1), RowValue::Int(0)]);
        row.push(RowValue::Text(g.astring(300, 500)));
        true
    })
}

/// A history row per customer.
fn history(
    conn: &mut dyn Conn,
    bar: &LoadBar,
    g: &mut Gen,
    w: i64,
    now: &str,
) -> Result<u64, DbError> {
    let mut ids = PerDistrict::new(1, CUSTOMERS);
    load(conn, bar, "history", &mut |row| {
        let Some((d, c)) = ids.next() else {
            return false;
        };
        row.clear();
        row.extend([
            RowValue::Int(c),
            RowValue::Int(d),
            RowValue::Int(w),
            RowValue::Int(d),
            RowValue::Int(w),
        ]);
        row.push(RowValue::Text(now.to_string()));
        row.push(RowValue::Text("10.00".into()));
        row.push(RowValue::Text(g.astring(12, 24)));
        true
    })
}

/// Its orders: customers in a random permutation per district; the line count of each order is kept for the order lines.
fn orders(
    conn: &mut dyn Conn,
    bar: &LoadBar,
    g: &mut Gen,
    w: i64,
    now: &str,
) -> Result<(u64, Vec<i64>), DbError> {
    let mut line_counts = Vec::with_capacity((DISTRICTS * ORDERS) as usize);
    let mut ids = PerDistrict::new(1, ORDERS);
    let mut perm: Vec<i64> = Vec::new();
    let rows = load(conn, bar, "orders", &mut |row| {
        let Some((d, o)) = ids.next() else {
            return false;
        };
        if o == 1 {
            perm = (1..=CUSTOMERS).collect();
            for k in (1..perm.len()).rev() {
                let j = g.int(0, k as i64) as usize;
                perm.swap(k, j);
            }
        }
        let lines = g.int(5, 15);
        line_counts.push(lines);
        row.clear();
        row.extend([
            RowValue::Int(o),
            RowValue::Int(d),
            RowValue::Int(w),
            RowValue::Int(perm[(o - 1) as usize]),
            RowValue::Text(now.to_string()),
        ]);
        row.push(if o < FIRST_NEW_ORDER {
            RowValue::Int(g.int(1, 10))
        } else {
            RowValue::Null
        });
        row.extend([RowValue::Int(lines), RowValue::Int(1)]);
        true
    })?;
    Ok((rows, line_counts))
}

/// The lines of every order, as many as its line count.
fn order_lines(
    conn: &mut dyn Conn,
    bar: &LoadBar,
    g: &mut Gen,
    w: i64,
    now: &str,
    line_counts: &[i64],
) -> Result<u64, DbError> {
    let (mut d, mut o, mut n) = (1, 1, 0);
    let mut k = 0usize;
    load(conn, bar, "order_line", &mut |row| {
        loop {
            if d > DISTRICTS {
                return false;
            }
            n += 1;
            if n <= line_counts[k] {
                break;
            }
            n = 0;
            k += 1;
            o += 1;
            if o > ORDERS {
                o = 1;
                d += 1;
            }
        }
        let delivered = o < FIRST_NEW_ORDER;
        row.clear();
        row.extend([
            RowValue::Int(o),
            RowValue::Int(d),
            RowValue::Int(w),
            RowValue::Int(n),
            RowValue::Int(g.int(1, ITEMS)),
            RowValue::Int(w),
        ]);
        row.push(if delivered {
            RowValue::Text(now.to_string())
        } else {
            RowValue::Null
        });
        row.push(RowValue::Int(5));
        row.push(RowValue::Text(if delivered {
            "0.00".into()
        } else {
            g.decimal(1, 999_999, 2)
        }));
        row.push(RowValue::Text(g.astring(24, 24)));
        true
    })
}

/// The undelivered orders (the last of each district).
fn new_orders(conn: &mut dyn Conn, bar: &LoadBar, w: i64) -> Result<u64, DbError> {
    let mut ids = PerDistrict::new(FIRST_NEW_ORDER, ORDERS);
    load(conn, bar, "new_order", &mut |row| {
        let Some((d, o)) = ids.next() else {
            return false;
        };
        row.clear();
        row.extend([RowValue::Int(o), RowValue::Int(d), RowValue::Int(w)]);
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_are_three_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn random_rules() {
        let mut g = Gen::new(1, 123);
        for _ in 0..1000 {
            let v = g.nurand(255, 0, 999, 123);
            assert!((0..=999).contains(&v));
            let s = g.astring(8, 16);
            assert!((8..=16).contains(&s.len()));
        }
        let original = (0..10_000)
            .filter(|_| g.data().contains("ORIGINAL"))
            .count();
        assert!((800..1200).contains(&original), "{original}");
        assert_eq!(fixed(1234, 2), "12.34");
        assert_eq!(fixed(5, 4), "0.0005");
        assert_eq!(fixed(-1000, 2), "-10.00");
    }
}
