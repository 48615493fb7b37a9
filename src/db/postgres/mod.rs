//! The PostgreSQL target: `postgres://user:password@host:port/db`, or a Unix socket directory
//! as host (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`). Server-side prepared statements
//! by default; `--ps-mode disable` sends text queries. The URL is read by
//! [`ServerUrl`]; the connection is dbsweep's own lean client (`pgwire`).

pub(crate) mod startup;
mod target;
pub(crate) mod wire;
pub use target::PostgresTarget;
