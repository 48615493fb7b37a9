//! An SQL command's statement in pgbench's extended and prepared query modes, and a failed
//! one's error with its text.

use crate::db::{DbError, StmtId};

/// An SQL command's statement in the extended and prepared query modes.
#[derive(Clone, Debug)]
pub(super) enum Stmt {
    /// Sent as text: the simple query mode, and commands whose result goes into variables.
    Text,
    /// Not prepared yet: its text, with `?` for each variable.
    Later(String),
    Ready(StmtId),
    /// The server refused to prepare it (under `-M prepared`, said once): each run of it
    /// fails as pgbench's does, on a statement that does not exist.
    Refused,
}

/// `e` with the statement it failed in, where the server said more than its message (libpq
/// words such an error with the statement's line and a caret under the position).
pub(super) fn said_in(mut e: DbError, sql: impl FnOnce() -> String) -> DbError {
    if e.notes.is_some() {
        e.statement = Some(sql());
    }
    e
}
