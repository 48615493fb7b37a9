//! Managed throwaway servers: PostgreSQL or MariaDB/MySQL started from the locally installed
//! binaries, in a fresh data directory, on a free loopback port, with the settings a plan asks
//! for; stopped and removed on every exit path unless `--keep`.

pub mod builds;
mod certs;
pub mod cgroup;
pub mod durability;
pub mod effective;
pub mod fetch;
mod instance;
mod kind;
mod managed;
mod mariadb;
pub mod orphans;
mod postgres;
pub(crate) mod setup;
mod spec;
mod tables_cache;

pub use instance::ManagedServer;
pub use kind::ServerKind;
pub(crate) use managed::start;
pub use managed::{binary_version, kill_all, parse_setting, process_tree};
pub(crate) use setup::check_datadir_in;
pub use spec::ServerSpec;
