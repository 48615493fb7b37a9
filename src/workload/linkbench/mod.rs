//! LinkBench (docs/workloads.md section 10), written from its public description (the SIGMOD
//! 2013 paper and its published configuration): a social graph of nodes, links between them
//! and a count of each node's links per type, and the mix of ten operations its requesters
//! send. Each event is one operation; each operation's time (its transaction whole) is kept
//! apart as a statement kind, so that the results have ops/s and latency per operation.
//!
//! The out-degrees are the original's measured ones, read from the `nlinks` section of the
//! user's LinkBench checkout's `config/Distribution.dat` (`--linkbench-data FILE`, or
//! `$LINKBENCH_HOME/config/Distribution.dat`), each node's place in them shuffled as the
//! original shuffles it; `linkbench_synthetic` is the same workload with a power law of the
//! same shape in their place (for a machine without the checkout), under its own name.
//!
//! History reads are LinkBench's: 0.3% of list reads, each reading on from the last link of a
//! list that filled the limit before (a cache of such tails per client, as its requester's).

mod client;
mod dist;
mod family;
mod graph;
mod load;
pub mod options;
mod report;

pub use family::LinkBench;

pub use dist::{DegreeSource, Degrees};
use graph::{
    COUNT_COLUMNS, HISTORY_SHARE, LINK_COLUMNS, LINK_DATA_MAX, LINK_DATA_MEDIAN,
    LINK_TIME_HALF_SPAN, LIST_LIMIT, LOAD_CHUNK, MULTIGET_MAX, MULTIGET_P, NEXT_NODE, NODE_COLUMNS,
    NODE_DATA_MAX, NODE_DATA_MEDIAN, NODE_TYPE, OP_ORDER, OPS, Op, P_ADD_EXIST, P_DELETE_EXIST,
    P_GET_EXIST, P_UPDATE_EXIST, READS_CORRELATED, TAILS_MAX, WRITES_CORRELATED, count_change_sql,
    link_type_id, now_ms, payload, schema, upsert_link_sql,
};
pub use graph::{COUNTS, LINKS, MAX_NODES, NODES, TABLES, build, data_file, shares};
