//! The registry of built-in workloads: their names and what each does.

/// The built-in workloads with a one-line description each, in `dbsweep workloads` order.
pub const WORKLOADS: &[(&str, &str)] = &[
    (
        "oltp_point_select",
        "1 primary-key point select per event, autocommit",
    ),
    (
        "oltp_read_only",
        "transaction of 10 point selects and 4 range selects (simple, sum, order, distinct)",
    ),
    (
        "oltp_read_write",
        "the read-only transaction plus index update, non-index update, delete+insert",
    ),
    (
        "oltp_write_only",
        "transaction of index update, non-index update, delete+insert",
    ),
    (
        "oltp_update_index",
        "1 update of the indexed column k by primary key, autocommit",
    ),
    (
        "oltp_update_non_index",
        "1 update of the non-indexed column c by primary key, autocommit",
    ),
    ("oltp_delete", "1 delete by primary key, autocommit"),
    ("oltp_insert", "1 insert of a new row, autocommit"),
    (
        "select_random_points",
        "SELECT by 10 random k values with IN (), table sbtest1",
    ),
    (
        "select_random_ranges",
        "SELECT count(k) over 10 OR-ed k ranges, table sbtest1",
    ),
    (
        "bulk_insert",
        "each client appends (id, k) rows to its own table; one row per event",
    ),
    (
        "oltp_inlist_select",
        "SELECT c by --random-points (100) random ids in IN (); --hot-points: always the same ids",
    ),
    (
        "oltp_points_covered",
        "SELECT id [, c] (--covered) by random ids, or k [, c] by k values (--on-id=off), in IN ()",
    ),
    (
        "oltp_range_covered",
        "SELECT id [, c] (--covered) over an id range of --random-points rows, or a k range (--on-id=off)",
    ),
    (
        "oltp_scan",
        "full scan returning nothing (LENGTH(c) < 0); client i scans table i mod tables + 1; rows/s",
    ),
    (
        "oltp_inlist_update",
        "UPDATE c of --random-points (100) random ids in IN ()",
    ),
    (
        "oltp_read_only_count",
        "SELECT count(c) over a 1000-row id range",
    ),
    (
        "update-one",
        "the non-index update, always on id 1: one hot row per table",
    ),
    ("update-zipf", "the non-index update with zipfian ids"),
    (
        "ibench_insert",
        "Insert Benchmark: insert --rows-per-commit rows in key order per transaction",
    ),
    (
        "ibench_delete",
        "Insert Benchmark: delete the --rows-per-commit oldest rows per transaction",
    ),
    (
        "ibench_range",
        "Insert Benchmark: a 10-row range on the (price, dateandtime, customerid) index",
    ),
    (
        "ibench_point",
        "Insert Benchmark: a point query by primary key",
    ),
    (
        "ibench_index",
        "Insert Benchmark: create the three secondary indexes (one event: --events 1)",
    ),
    (
        "sqlbench_connect",
        "sql-bench's test-connect: connects, simple selects, 1- and 2-row selects, a 65 KB record; 500,000 a test (--small-test: 5,000) (one event: --events 1)",
    ),
    (
        "sqlbench_create",
        "sql-bench's test-create: 400 tables made, counted and dropped; 10,000 made and dropped, plain and with 16 keys (one event: --events 1)",
    ),
    (
        "sqlbench_insert",
        "sql-bench's test-insert: 300,000 rows in three orders, then key, range, sorted, grouped and joined reads, updates, deletes, a table of 16 keys, a multi-row insert (one event: --events 1)",
    ),
    (
        "sqlbench_select",
        "sql-bench's test-select: 10,000 rows on keys of many parts: sums, big selects, ranges of 500 ORs, MIN/MAX and COUNT on keys, GROUP BY, COUNT(DISTINCT) (one event: --events 1)",
    ),
    (
        "sqlbench_alter",
        "sql-bench's test-alter-table: 1,000 rows, widened to 1,000 columns one at a time, indexed, narrowed (one event: --events 1)",
    ),
    (
        "sqlbench_transactions",
        "sql-bench's test-transactions: 500,000 inserts, updates and deletes in one transaction, in autocommit, rolled back in batches (one event: --events 1)",
    ),
    (
        "sqlbench_big_tables",
        "sql-bench's test-big-tables: a table of 1,000 columns read and written whole, 70,000 times each (one event: --events 1)",
    ),
    (
        "sqlbench_wisconsin",
        "sql-bench's test-wisconsin: onek, tenk1, tenk2 and Bprime loaded, its 24 queries (one event: --events 1)",
    ),
    (
        "sqlbench_atis",
        "sql-bench's test-ATIS: its 28 tables from a sql-bench checkout's Data/ATIS files (--sqlbench-data), five groups of joins, DISTINCT and GROUP BY (one event: --events 1)",
    ),
    (
        "pgbench_tpcb_like",
        "pgbench's TPC-B (sort of): three updates, a select and an insert; its tables by prepare --scale",
    ),
    (
        "pgbench_simple_update",
        "pgbench's simple update (-N): the account's update, select and the history's insert",
    ),
    (
        "pgbench_select_only",
        "pgbench's select only (-S): one account by its key",
    ),
    (
        "pgbench",
        "pgbench scripts: --script FILE[@WEIGHT] (repeatable), with pgbench's language",
    ),
    (
        "linkbench",
        "LinkBench: the social graph's ten operations in their mix over --nodes, its measured out-degrees from --linkbench-data (see `dbsweep check`)",
    ),
    (
        "linkbench_synthetic",
        "LinkBench with a power law in place of its measured out-degrees (no Distribution.dat needed)",
    ),
    (
        "tpcc",
        "TPC-C: the five transactions from a shuffled deck over --warehouses (see `dbsweep tpcc`)",
    ),
];

/// The registered name equal to `name` (a workload keeps its name for its whole life).
pub(crate) fn static_name(name: &str) -> &'static str {
    WORKLOADS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, _)| *n)
        .expect("registered")
}
