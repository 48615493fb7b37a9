//! What a client says while it runs, handed to the personality that prints it
//! ([`super::Style::client_note`]): the runner and the workloads never print.

use std::num::NonZeroU32;

/// Where in its scripts a client's error came: the script and its command (pgbench's numbers,
/// from 0).
#[derive(Clone, Copy, Debug)]
pub struct At {
    pub script: usize,
    pub command: usize,
}

/// Something a client says while the run goes on.
pub enum ClientNote<'a> {
    /// A retryable error (`--verbose-errors`) at try `tries`; `last`: its event fails with it.
    Retryable {
        client: u32,
        at: Option<At>,
        message: &'a str,
        tries: u32,
        max_tries: Option<NonZeroU32>,
        last: bool,
    },
    /// A remark of the workload's about what it saw (a row count that is not the original's).
    Warning { message: &'a str },
    /// The client ended alone after an error that is not retried (pgbench's abort).
    Aborted {
        client: u32,
        at: Option<At>,
        /// The error's code (a SQLSTATE when the server sent it).
        code: &'a str,
        message: &'a str,
        how: Aborted,
    },
}

/// Where an aborted client was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aborted {
    /// A statement failed with an error that is not retried.
    InCommand,
    /// The server went away while a statement ran, without a word.
    Lost,
    /// Its next connection (pgbench's `-C`) could not be opened.
    Connecting,
}
