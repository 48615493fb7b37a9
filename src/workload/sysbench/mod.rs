//! sysbench's workloads (its oltp_*, select_random_* and bulk_insert scripts, natively) and the
//! finer microbenchmarks on the same sbtest tables: two families that share their tables and
//! their options ([`options::SysbenchArgs`]).

mod micro;
mod oltp;
pub mod options;

use super::family::Family;
use super::{Workload, WorkloadOptions};
use crate::error::Error;

/// sysbench's own workloads: the registry's entry.
pub struct SysbenchScripts;

/// The microbenchmarks on sysbench's tables (docs/workloads.md section 3): the registry's entry.
pub struct Microbenchmarks;

impl Family for SysbenchScripts {
    fn workloads(&self) -> &'static [(&'static str, &'static str)] {
        SYSBENCH
    }

    fn build(
        &self,
        name: &'static str,
        opts: &WorkloadOptions,
    ) -> Result<Box<dyn Workload>, Error> {
        Ok(oltp::build(name, opts).expect("a family builds each of its workloads"))
    }
}

impl Family for Microbenchmarks {
    fn workloads(&self) -> &'static [(&'static str, &'static str)] {
        MICRO
    }

    fn build(
        &self,
        name: &'static str,
        opts: &WorkloadOptions,
    ) -> Result<Box<dyn Workload>, Error> {
        Ok(micro::build(name, opts).expect("a family builds each of its workloads"))
    }
}

const SYSBENCH: &[(&str, &str)] = &[
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
];

const MICRO: &[(&str, &str)] = &[
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
];
