//! sql-bench's test-ATIS (MariaDB's `sql-bench/test-ATIS.sh`): the 28 tables of the ATIS
//! airline database made as server-cfg makes them, loaded a row a statement from the
//! original's `Data/ATIS/TABLE.txt` files (real airline data, which no rule generates: they are
//! read from the user's sql-bench checkout, `--sqlbench-data DIR` or `SQLBENCH_HOME`), then the
//! five groups of selects, each group's queries run in turn 5,000 times (500 with
//! `--small-test`), the row counts of the hundredth round checked against the original's, and
//! the tables dropped. A query the server cannot run by server-cfg's limits is left out as the
//! original leaves it out.

mod data;
mod queries;
mod tables;
pub(crate) use data::{Data, TESTS, data, rounds};
pub(crate) use tables::TABLE_NAMES;
