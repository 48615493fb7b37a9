//! The kinds of server dbsweep manages.

/// Which server to start.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    Postgres,
    Mariadb,
    Mysql,
}
