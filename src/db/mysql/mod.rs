//! The MySQL and MariaDB target: `mysql://user:password@host:port/db`, or a Unix socket with
//! `?socket=/path`. Server-side prepared statements by default; `--ps-mode disable` sends text
//! queries. The URL is read by [`ServerUrl`]; the connection is dbsweep's own lean client
//! (`mywire`).

mod auth;
mod packet;
mod target;
pub(crate) mod wire;
pub use target::MysqlTarget;
