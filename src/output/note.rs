//! What the runner and the workloads say while they work (a load's progress, a client's note),
//! handed through [`Events`] to the voice of the command that prints it ([`client_note_text`]
//! is dbsweep's own wording): the runner and the workloads never print, and cannot print an
//! interval or a summary.

use std::fmt::Write as _;
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
        /// The server's whole message as libpq words it (its severity, the statement's line
        /// and caret, DETAIL, HINT, CONTEXT), ending in a newline, where the server sent it.
        whole: Option<&'a str>,
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

/// What a client says while the run goes on, as pgbench 15 says it on stderr (dbsweep has no
/// other words for these).
pub fn client_note_text(note: &ClientNote) -> String {
    match *note {
        ClientNote::Retryable {
            client,
            at,
            message,
            tries,
            max_tries,
            last,
        } => {
            let mut out = String::new();
            if let Some(at) = at {
                let _ = writeln!(
                    out,
                    "pgbench: client {client} got an error in command {} (SQL) of script {}; ERROR:  {message}",
                    at.command, at.script
                );
            }
            let max = max_tries.map_or(String::new(), |m| format!("/{m}"));
            let what = if last {
                "ends the failed transaction"
            } else {
                "repeats the transaction after the error"
            };
            let _ = writeln!(out, "pgbench: client {client} {what} (try {tries}{max})");
            out
        }
        ClientNote::Aborted {
            client,
            at,
            code,
            message,
            whole,
            how,
        } => {
            // PostgreSQL's class 57P (the session ended by the server) comes as FATAL.
            let severity = if code.starts_with("57P") {
                "FATAL"
            } else {
                "ERROR"
            };
            let (command, script) = at.map_or((0, 0), |a| (a.command, a.script));
            // A meta-command's failure: its error, then pgbench's commandFailed line (which
            // counts commands from 0).
            if let Some((word, what)) = code
                .strip_prefix(crate::workload::pgbench::META_FAILED)
                .and_then(|r| r.split_once(": "))
            {
                let said = if message.is_empty() {
                    String::new()
                } else {
                    format!("pgbench: error: {message}\n")
                };
                return format!(
                    "{said}pgbench: error: client {client} aborted in command {command} ({word}) of script {script}; {what}\n"
                );
            }
            if code == crate::workload::pgbench::STORE_FAILED {
                return format!(
                    "pgbench: error: gset: invalid variable name: \"{message}\"\npgbench: error: client {client} script {script} command {command} query 0: error storing into variable {message}\n"
                );
            }
            if code == crate::db::postgres::wire::COPY_REFUSED {
                return "pgbench: error: COPY is not supported in pgbench, aborting\n".into();
            }
            if code == crate::workload::pgbench::OPEN_AT_END {
                return format!(
                    "pgbench: error: client {client} aborted: end of script reached without completing the last transaction\n"
                );
            }
            match how {
                Aborted::Lost => format!(
                    "pgbench: error: client {client} aborted in command {command} (SQL) of script {script}; perhaps the backend died while processing\n"
                ),
                Aborted::Connecting => {
                    format!(
                        "pgbench: error: client {client} aborted while establishing connection\n"
                    )
                }
                Aborted::InCommand => match whole {
                    Some(whole) => format!(
                        "pgbench: error: client {client} script {script} aborted in command {command} query 0: {whole}"
                    ),
                    None => format!(
                        "pgbench: error: client {client} script {script} aborted in command {command} query 0: {severity}:  {message}\n"
                    ),
                },
            }
        }
        ClientNote::Warning { message } => format!("pgbench: warning: {message}\n"),
    }
}

/// Where the runner and the workloads send what they have to say: the command's voice, of
/// which they see only these events.
#[derive(Clone, Copy, Debug)]
pub struct Events {
    style: super::Style,
    /// Whether progress bars may show on a terminal: not inside a sweep, whose own bar holds
    /// the terminal's last line.
    bars: bool,
}

impl Default for Events {
    fn default() -> Events {
        super::Style::Own.events()
    }
}

impl Events {
    /// A line of a load's or a cleanup's progress ("Creating table 'sbtest1'...").
    pub fn progress(self, line: &str) {
        self.style.progress(line);
    }

    /// What a client says while the run goes on (a retried error under `--verbose-errors`, a
    /// client that aborted, a workload's warning).
    pub fn client_note(self, note: &ClientNote) {
        self.style.client_note(note);
    }

    /// Every client has connected: the run begins.
    pub fn started(self) {
        if let Some(v) = self.style.voice() {
            v.started();
        }
    }

    /// Whether connecting many clients, or a load, may show a progress bar on a terminal (a
    /// personality whose output others parse says no, and so does a sweep's step).
    pub fn progress_bars(self) -> bool {
        self.bars && self.style.voice().is_none_or(|v| v.progress_bars())
    }

    /// These events without progress bars (a sweep's step: the sweep's bar is on the terminal).
    pub fn without_bars(self) -> Events {
        Events {
            bars: false,
            ..self
        }
    }
}

impl super::Style {
    /// The events of a command in this style.
    pub fn events(self) -> Events {
        Events {
            style: self,
            bars: true,
        }
    }
}
