//! What the runner and the workloads say while they work (a load's progress, a client's note),
//! handed through [`Events`] to the voice of the command that prints it ([`client_note_text`]
//! is dbsweep's own wording): the runner and the workloads never print, and cannot print an
//! interval or a summary.

use std::num::NonZeroU32;

/// What measuring a step says of it, typed so that whoever listens decides by its kind and
/// words it by [`Said::line`], never by matching its text.
#[derive(Clone, Copy, Debug)]
pub enum Said<'a> {
    /// A remark on the run: which database, where the results went.
    Remark(&'a str),
    /// A warning of this kind (its text without the "warning: " that [`Said::line`] adds).
    Warning(Warning, &'a str),
}

/// What a warning is about, where a listener treats it apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warning {
    /// A sampler that needs the server lost it (the wait profile stopped, the counters went
    /// unread): after a crash a sweep made, what the crash did and not news.
    ServerLost,
    /// Any other.
    Other,
}

impl Said<'_> {
    /// The line as dbsweep prints it.
    pub fn line(&self) -> String {
        match self {
            Said::Remark(text) => (*text).to_string(),
            Said::Warning(_, text) => format!("warning: {text}"),
        }
    }
}

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

/// The codes of the errors that end a client of a pgbench script, which a voice words
/// apart from a server's error (the script's client gives them; see [`ClientNote::Aborted`]).
///
/// The code of a meta-command's failure, followed by `WORD: HOW` (the command's name, and
/// pgbench's "evaluation of meta-command failed" or the like): the voice words the abort as pgbench's
/// `commandFailed` does, after the error itself; dbsweep's own error line reads it as it is.
pub const META_FAILED: &str = "pgbench \\";

/// The code of a `\gset`/`\aset` into a name no variable can have (the name is the message).
pub const STORE_FAILED: &str = "pgbench store";

/// The code of the abort after a script that ended inside a transaction block.
pub const OPEN_AT_END: &str = "pgbench open transaction";

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
