//! sql-bench's suite: its test groups, the workload that runs a group's tests in order, and the client's context.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::super::options::WorkloadOptions;
use super::super::rand::Rand;
use super::super::tables::TableSet;
use super::super::traits::{Client, Workload};
use crate::clock::Stamp;
use crate::db::{Conn, DbError, Dialect, Param, QueryCounts, StmtId, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;

/// The groups: (workload, tests, tables it makes).
pub(super) const GROUPS: [(&str, &[&str], &[&str]); 9] = [
    (
        "sqlbench_connect",
        &[
            "connect",
            "connect+select_simple",
            "select_simple",
            "select_simple_cache",
            "connect+select_1_row",
            "select_1_row",
            "select_1_row_cache",
            "select_2_rows",
            "select_column+column",
            "select_big_str",
        ],
        &["sqlbench_bench1"],
    ),
    (
        "sqlbench_create",
        &[
            "create_MANY_tables",
            "select_group_when_MANY_tables",
            "drop_table_when_MANY_tables",
            "create+drop",
            "create_key+drop",
        ],
        // And sqlbench_bench_N: see own_tables.
        &[],
    ),
    (
        "sqlbench_insert",
        &[
            "insert",
            "insert_duplicates",
            "prepared_select",
            "once_prepared_select",
            "select_big",
            "order_by_big_key",
            "order_by_big_key_desc",
            "order_by_big_key_prefix",
            "order_by_big_key2",
            "order_by_big_key_diff",
            "order_by_big",
            "order_by_range",
            "order_by_key_prefix",
            "order_by_key2_diff",
            "select_diff_key",
            "select_range_prefix",
            "select_range_key2",
            "select_key_prefix",
            "select_key",
            "select_key_return_key",
            "select_key2",
            "select_key2_return_key",
            "select_key2_return_prim",
            "select_group",
            "min_max_on_key",
            "min_max",
            "count_on_key",
            "count",
            "count_distinct_big",
            "update_of_key",
            "update_of_key_big",
            "update_with_key",
            "update_with_key_record_unchanged",
            "update_with_key_prefix",
            "update_big",
            "outer_join_on_key",
            "outer_join",
            "outer_join_found",
            "outer_join_not_found",
            "select_in",
            "select_join_in",
            "insert_select_1_key",
            "insert_select_2_keys",
            "drop table",
            "delete_key",
            "delete_range",
            "insert_key",
            "update_of_primary_key_many_keys",
            "delete_big_many_keys",
            "delete_all_many_keys",
            "multiple_value_insert",
        ],
        &["sqlbench_bench1", "sqlbench_bench2", "sqlbench_bench3"],
    ),
    (
        "sqlbench_select",
        &[
            "insert",
            "select_cache",
            "select_cache2",
            "select_big",
            "select_range",
            "min_max_on_key",
            "count_on_key",
            "count_group_on_key_parts",
            "count_group",
            "count_group_with_order",
            "count_distinct_key_prefix",
            "count_distinct",
            "count_distinct_2",
            "count_distinct_group_on_key",
            "count_distinct_group_on_key_parts",
            "count_distinct_group",
            "count_distinct_big",
        ],
        &["sqlbench_bench1"],
    ),
    (
        "sqlbench_alter",
        &[
            "insert",
            "alter_table_add",
            "create_index",
            "drop_index",
            "alter_table_drop",
        ],
        &["sqlbench_bench"],
    ),
    (
        "sqlbench_transactions",
        &[
            "insert_commit",
            "insert_autocommit",
            "insert_rollback",
            "update_rollback",
            "delete_rollback",
            "update_commit",
            "update_autocommit",
            "delete_commit",
            "delete_autocommit",
        ],
        &["sqlbench_bench1", "sqlbench_bench2"],
    ),
    (
        "sqlbench_big_tables",
        &["select_many_fields", "insert_many_fields"],
        &["sqlbench_bench1"],
    ),
    (
        "sqlbench_wisconsin",
        &["create_table", "insert", "delete_big", "wisc_benchmark"],
        &super::wisconsin::TABLES,
    ),
    (
        "sqlbench_atis",
        &super::atis::TESTS,
        &super::atis::TABLE_NAMES,
    ),
];

/// Whether `workload` is one of the suite's groups.
pub fn is_group(workload: &str) -> bool {
    GROUPS.iter().any(|(n, ..)| *n == workload)
}

pub fn build(name: &'static str, o: &WorkloadOptions) -> Option<Box<dyn Workload>> {
    let g = GROUPS.iter().position(|(n, ..)| *n == name)?;
    Some(Box::new(SqlBench {
        name,
        group: g,
        small: o.families.sqlbench.small_test,
        data_dir: o
            .families
            .sqlbench
            .sqlbench_data
            .clone()
            .map(Into::into)
            .or_else(|| std::env::var_os("SQLBENCH_HOME").map(Into::into)),
        data: std::sync::OnceLock::new(),
    }))
}

struct SqlBench {
    name: &'static str,
    group: usize,
    /// sql-bench's --small-test.
    small: bool,
    /// The sql-bench checkout whose `Data/` files the Wisconsin and ATIS groups load (None:
    /// Wisconsin's rows generated, ATIS not run).
    data_dir: Option<std::path::PathBuf>,
    /// The group's rows, read (and checked) once.
    data: std::sync::OnceLock<Result<Data, String>>,
}

/// The rows a group loads from the user's files.
#[derive(Clone)]
enum Data {
    None,
    Wisconsin(Arc<super::wisconsin::Data>),
    Atis(Arc<super::atis::Data>),
}

impl SqlBench {
    /// The group's rows, or why they cannot be read.
    fn data(&self) -> Result<Data, String> {
        self.data
            .get_or_init(|| {
                let dir = self.data_dir.as_deref();
                Ok(match GROUPS[self.group].0 {
                    "sqlbench_wisconsin" => Data::Wisconsin(Arc::new(super::wisconsin::data(dir)?)),
                    "sqlbench_atis" => Data::Atis(Arc::new(super::atis::data(dir)?)),
                    _ => Data::None,
                })
            })
            .clone()
    }

    /// Every table this group makes (the create group's numbered ones too).
    fn own_tables(&self) -> Vec<String> {
        let mut t: Vec<String> = GROUPS[self.group].2.iter().map(|s| s.to_string()).collect();
        if GROUPS[self.group].0 == "sqlbench_create" {
            let (many, loops) = super::create::counts(self.small);
            t.extend((1..=many.max(loops)).map(super::create::table));
        }
        t
    }

    /// Which of this group's tables are there: one look at the catalogue, however many.
    fn present(&self, conn: &mut dyn Conn) -> Result<Vec<String>, DbError> {
        let sql = match conn.dialect() {
            Dialect::Postgres => {
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() \
                 AND tablename LIKE 'sqlbench%'"
            }
            Dialect::Mysql => {
                "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() \
                 AND table_name LIKE 'sqlbench%'"
            }
            Dialect::Sqlite => {
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'sqlbench%'"
            }
            Dialect::Any => return Ok(Vec::new()),
        };
        let there: std::collections::HashSet<String> = conn
            .query_rows(sql, 1)?
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        Ok(self
            .own_tables()
            .into_iter()
            .filter(|t| there.contains(t))
            .collect())
    }
}

impl Workload for SqlBench {
    fn name(&self) -> &'static str {
        self.name
    }

    fn tables(&self) -> TableSet {
        // Its own tables, made and dropped by each event.
        TableSet::bulk(0)
    }

    fn prepare(
        &self,
        target: &dyn Target,
        _: &WorkloadOptions,
        _: bool,
        _: &AtomicBool,
    ) -> Result<LoadReport, Error> {
        // Nothing to load: each group makes its tables in its event. The database is made
        // (a SQLite file), so that the run finds what the prepare said it made.
        target
            .connect()
            .map_err(|e| Error::db(target.display_url(), e))?;
        Ok(LoadReport::new(0, 0, 0.0, 0.0))
    }

    fn cleanup(&self, target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        let mut dropped = 0;
        for t in self
            .present(conn.as_mut())
            .map_err(|e| Error::db(&url, e))?
        {
            o.notes.progress(&format!("Dropping table '{t}'..."));
            conn.batch(&format!("DROP TABLE {t}"))
                .map_err(|e| Error::db(format!("dropping {t}"), e))?;
            dropped += 1;
        }
        Ok(dropped)
    }

    fn tables_missing(&self, _: &mut dyn Conn) -> Result<bool, DbError> {
        Ok(false)
    }

    fn inputs(&self) -> Result<(), Error> {
        self.data().map(|_| ()).map_err(Error::Usage)
    }

    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        o: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        if o.threads > 1 {
            return Err(Error::Option {
                option: "threads".into(),
                why: format!(
                    "{}: one client, as sql-bench (its figures are single-stream times); leave out --threads",
                    self.name
                ),
            });
        }
        if o.scale != 1 {
            return Err(Error::Option {
                option: "scale".into(),
                why: format!(
                    "{}: its counts are sql-bench's own; --small-test gives the original's small test",
                    self.name
                ),
            });
        }
        if let Data::Wisconsin(w) = self.data().map_err(Error::Usage)?
            && w.generated
        {
            o.notes.progress(
                "sqlbench_wisconsin: its rows generated as the original's Data/Wisconsin \
                 files hold them (unique1 in an order of dbsweep's); --sqlbench-data DIR \
                 (or SQLBENCH_HOME) loads the files of a sql-bench checkout",
            );
        }
        if let Some(t) = self
            .present(conn)
            .map_err(|e| Error::db(url, e))?
            .into_iter()
            .next()
        {
            return Err(Error::Usage(format!(
                "{url}: table {t} is already there (an interrupted {} run's?); dbsweep drops \
                 only tables it made: `dbsweep cleanup {}` drops the group's tables",
                self.name, self.name
            )));
        }
        Ok(())
    }

    fn statements(&self) -> &'static [&'static str] {
        GROUPS[self.group].1
    }

    fn shares_connections(&self) -> bool {
        false
    }

    fn client(&self, _: &mut dyn Conn, _: u32) -> Result<Box<dyn Client>, DbError> {
        Err(DbError::new(
            crate::db::ErrorClass::Fatal,
            "sqlbench",
            "a sql-bench group runs on its target (client_on)",
        ))
    }

    fn client_on(
        &self,
        _: &mut dyn Conn,
        _: u32,
        target: &dyn Target,
    ) -> Result<Box<dyn Client>, DbError> {
        Ok(Box::new(SqlBenchClient {
            group: self.group,
            small: self.small,
            dialect: target.dialect(),
            target: target.shared(),
            data: self
                .data()
                .map_err(|e| DbError::new(crate::db::ErrorClass::Fatal, self.name, &e))?,
            laps: Vec::new(),
            last: crate::clock::now(),
            warnings: Vec::new(),
        }))
    }
}

pub(super) struct SqlBenchClient {
    group: usize,
    pub(super) small: bool,
    pub(super) dialect: Dialect,
    pub(super) target: Arc<dyn Target>,
    /// The rows of the Wisconsin or ATIS group.
    data: Data,
    laps: Vec<(u16, u64)>,
    /// The end of the test before (or the event's start).
    last: Stamp,
    /// What the run should hear at its end (ATIS's row counts that are not the original's).
    pub(super) warnings: Vec<String>,
}

/// What a test runs on: the connection and the query counts.
pub(super) struct Ctx<'a> {
    pub(super) conn: &'a mut dyn Conn,
    pub(super) q: &'a mut QueryCounts,
}

/// Ctrl-C between two statements of a group: a group is one event of thousands of quick
/// statements, none of which waits long enough to see the signal itself.
pub(super) fn not_interrupted() -> Result<(), DbError> {
    if crate::interrupt::interrupted() {
        return Err(DbError::new(
            crate::db::ErrorClass::Fatal,
            "interrupted",
            "interrupted",
        ));
    }
    Ok(())
}

impl Ctx<'_> {
    pub(super) fn sql(&mut self, sql: &str) -> Result<(), DbError> {
        not_interrupted()?;
        self.conn.batch(sql)?;
        self.q.others += 1;
        Ok(())
    }

    pub(super) fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        self.conn.prepare(sql)
    }

    /// A text statement that reads (as DBI's `do` sends it), its rows fetched; how many.
    pub(super) fn text_read(&mut self, sql: &str) -> Result<u64, DbError> {
        not_interrupted()?;
        let o = self.conn.simple(sql, &mut |_| {})?;
        self.q.read(o.rows);
        Ok(o.rows)
    }

    /// A text statement that writes.
    pub(super) fn text_write(&mut self, sql: &str) -> Result<(), DbError> {
        not_interrupted()?;
        let o = self.conn.simple(sql, &mut |_| {})?;
        self.q.dml(o.changed);
        Ok(())
    }

    /// The statements of sql-bench's `create` for `d`.
    pub(super) fn create(
        &mut self,
        d: Dialect,
        table: &str,
        fields: &[String],
        keys: &[String],
    ) -> Result<(), DbError> {
        for sql in super::ddl::create(d, table, fields, keys) {
            self.sql(&sql)?;
        }
        Ok(())
    }

    pub(super) fn read(&mut self, stmt: StmtId, p: &[Param]) -> Result<(), DbError> {
        not_interrupted()?;
        let n = self.conn.query(stmt, p)?;
        self.q.read(n);
        Ok(())
    }
}

impl SqlBenchClient {
    /// Test `i` of the group is done now.
    pub(super) fn lap(&mut self, i: usize) {
        let now = crate::clock::now();
        self.laps.push((i as u16, now.nanos_since(self.last)));
        self.last = now;
    }

    /// Test `i` is done now, timed from `from` (where the original's timer for it started
    /// before the test before).
    pub(super) fn lap_from(&mut self, i: usize, from: Stamp) {
        let now = crate::clock::now();
        self.laps.push((i as u16, now.nanos_since(from)));
        self.last = now;
    }

    /// The next test begins now: what ran since the last one (making its tables, as the
    /// original does between its timings) is in the group's time only.
    pub(super) fn restart(&mut self) {
        self.last = crate::clock::now();
    }

    fn run_group(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        match (GROUPS[self.group].0, self.data.clone()) {
            ("sqlbench_connect", _) => self.connect(c),
            ("sqlbench_create", _) => self.create(c),
            ("sqlbench_insert", _) => self.insert_original(c),
            ("sqlbench_select", _) => self.select_original(c),
            ("sqlbench_alter", _) => self.alter(c),
            ("sqlbench_transactions", _) => self.transactions(c),
            ("sqlbench_big_tables", _) => self.big(c),
            ("sqlbench_wisconsin", Data::Wisconsin(data)) => self.wisconsin_original(c, &data),
            ("sqlbench_atis", Data::Atis(data)) => self.atis_original(c, &data),
            (group, _) => Err(DbError::new(
                crate::db::ErrorClass::Fatal,
                group,
                "its rows were not read",
            )),
        }
    }
}

impl Client for SqlBenchClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        self.timed_event(conn, rand, q, crate::clock::now())
            .map(|_| ())
    }

    fn timed_event(
        &mut self,
        conn: &mut dyn Conn,
        _: &mut Rand,
        q: &mut QueryCounts,
        start: Stamp,
    ) -> Result<Option<Stamp>, DbError> {
        self.laps.clear();
        self.last = start;
        self.run_group(&mut Ctx { conn, q })?;
        Ok(Some(self.last))
    }

    fn statement_times(&self) -> &[(u16, u64)] {
        &self.laps
    }

    fn warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_are_unique_within_a_group() {
        // Across groups a name may repeat, as the original's do (alter-table's and insert's
        // "insert"): the report keys a test by its group.
        for (group, tests, _) in GROUPS {
            let mut names = tests.to_vec();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), tests.len(), "{group}");
            assert!(tests.len() < 256);
        }
    }
}
