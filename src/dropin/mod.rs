//! dbsweep as another tool, picked by the name it is started under (or `dbsweep sysbench`,
//! `dbsweep pgbench`): each personality in its folder, with its command line read into a typed
//! run, its own options and its text (a `output::Voice`); nothing outside knows them.

pub mod pgbench;
pub mod sysbench;
