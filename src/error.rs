//! The library's error type: what went wrong, and whether it was the user's input (exit 2) or
//! the run (exit 1), and a database's error with its class (what the runner does with it). Only
//! `main` turns these into exit codes.

use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: an unknown option or workload, a malformed URL, a missing table, an unwritable
    /// path. Detected before any table is touched.
    #[error("{0}")]
    Usage(String),
    /// A command-line option's value that does not do: which option, and why (exit 2).
    #[error("--{option}: {why}")]
    Option { option: String, why: String },
    /// An entry of a plan file that does not do: where (file and line), and why (exit 2).
    #[error("{file}:{line}: {why}")]
    Plan {
        file: String,
        line: usize,
        why: String,
    },
    /// The run failed after it started.
    #[error("{0}")]
    Run(String),
    /// A refusal worded as the tool that dbsweep acts as words it (sysbench's "invalid
    /// option: --x"): its personality prints it as it is (exit 2 as dbsweep's own).
    #[error("{0}")]
    Worded(String),
    #[error("{context}: {source}")]
    Db { context: String, source: DbError },
}

impl Error {
    pub fn db(context: impl Into<String>, source: DbError) -> Error {
        Error::Db {
            context: context.into(),
            source,
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Option { .. } | Error::Plan { .. } | Error::Worded(_) => 2,
            Error::Run(_) | Error::Db { .. } => 1,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What the runner does with a failed statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorClass {
    Deadlock,
    LockWaitTimeout,
    SerializationFailure,
    DuplicateKey,
    /// SQLite's SQLITE_BUSY / SQLITE_LOCKED ("database is locked") after the busy timeout.
    Busy,
    /// Any other error that a sysbench script declared ignorable (`--mysql-ignore-errors`, the
    /// `sql_error_ignorable` hook): the event restarts, as in sysbench.
    Ignored,
    ConnectionLost,
    /// Anything else: the run stops.
    Fatal,
}

impl ErrorClass {
    /// Classes whose event is rolled back and retried.
    pub const RETRYABLE: [ErrorClass; 6] = [
        ErrorClass::Deadlock,
        ErrorClass::LockWaitTimeout,
        ErrorClass::SerializationFailure,
        ErrorClass::DuplicateKey,
        ErrorClass::Busy,
        ErrorClass::Ignored,
    ];

    pub fn is_retryable(self) -> bool {
        Self::RETRYABLE.contains(&self)
    }

    /// Stable name used in results files.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Deadlock => "deadlock",
            ErrorClass::LockWaitTimeout => "lock_wait_timeout",
            ErrorClass::SerializationFailure => "serialization_failure",
            ErrorClass::DuplicateKey => "duplicate_key",
            ErrorClass::Busy => "busy",
            ErrorClass::Ignored => "ignored",
            ErrorClass::ConnectionLost => "connection_lost",
            ErrorClass::Fatal => "fatal",
        }
    }

    /// Index into per-class counter arrays (retryable classes only).
    pub fn retry_slot(self) -> Option<usize> {
        Self::RETRYABLE.iter().position(|c| *c == self)
    }
}

/// A database error with its class, the server's code and message.
#[derive(Debug, Clone)]
pub struct DbError {
    pub class: ErrorClass,
    pub code: String,
    pub message: String,
    /// The statement that failed, where known.
    pub statement: Option<String>,
    /// What the server said beyond its code and message (PostgreSQL's other fields).
    pub notes: Option<Box<ServerNotes>>,
}

/// A PostgreSQL error's fields beyond its code and message, for text that gives the whole of
/// it as libpq does (pgbench's and sysbench's messages).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerNotes {
    /// ERROR, FATAL, PANIC, as the server words it.
    pub severity: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// Where in the statement it failed: a character position, from 1.
    pub position: Option<usize>,
    /// A statement the server ran for this one (a function's), and the position in it.
    pub internal_query: Option<String>,
    pub internal_position: Option<usize>,
    pub context: Option<String>,
}

impl DbError {
    pub fn new(class: ErrorClass, code: impl Into<String>, message: impl Into<String>) -> DbError {
        DbError {
            class,
            code: code.into(),
            message: message.into(),
            statement: None,
            notes: None,
        }
    }

    /// Names the statement that failed.
    pub fn in_statement(mut self, sql: &str) -> DbError {
        self.statement = Some(sql.to_string());
        self
    }

    /// The error as libpq's `PQerrorMessage` gives it (default verbosity), `query` the
    /// statement that failed where the client sent it as text: `ERROR:  message`, the line of
    /// the statement with a caret under the position, then DETAIL, HINT, QUERY and CONTEXT;
    /// each line ends with a newline.
    pub fn libpq_text(&self, query: Option<&str>) -> String {
        let Some(n) = &self.notes else {
            return format!("ERROR:  {}\n", self.message);
        };
        let severity = if n.severity.is_empty() {
            "ERROR"
        } else {
            &n.severity
        };
        let mut s = format!("{severity}:  {}", self.message);
        let mut cursor = None;
        match (n.position, query, n.internal_position, &n.internal_query) {
            (Some(pos), Some(q), _, _) => cursor = Some((q, pos)),
            (Some(pos), None, _, _) => s.push_str(&format!(" at character {pos}")),
            (None, _, Some(pos), Some(q)) => cursor = Some((q.as_str(), pos)),
            (None, _, Some(pos), None) => s.push_str(&format!(" at character {pos}")),
            _ => {}
        }
        s.push('\n');
        if let Some((q, pos)) = cursor {
            s.push_str(&error_position(q, pos));
        }
        for (label, v) in [
            ("DETAIL", &n.detail),
            ("HINT", &n.hint),
            ("QUERY", &n.internal_query),
            ("CONTEXT", &n.context),
        ] {
            if let Some(v) = v {
                s.push_str(&format!("{label}:  {v}\n"));
            }
        }
        s
    }
}

/// libpq's "LINE n: ..." and the caret under character `pos` (from 1) of `query`: the line
/// that holds it, tabs as spaces, cut to 60 columns (keeping 10 after the position where it
/// can) with "..." where cut. Empty when the position is past the statement.
fn error_position(query: &str, pos: usize) -> String {
    const DISPLAY: usize = 60;
    const MIN_RIGHT_CUT: usize = 10;
    let Some(loc) = pos.checked_sub(1) else {
        return String::new();
    };
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let (mut line_no, mut begin, mut end) = (1, 0, chars.len());
    for (i, &c) in chars.iter().enumerate() {
        if c == '\r' || c == '\n' {
            if i < loc {
                if c == '\r' || i == 0 || chars[i - 1] != '\r' {
                    line_no += 1;
                }
                begin = i + 1;
            } else {
                end = i;
                break;
            }
        }
    }
    if loc > end {
        return String::new();
    }
    let (mut cut_before, mut cut_after) = (false, false);
    if end - begin > DISPLAY {
        if begin + DISPLAY >= loc + MIN_RIGHT_CUT {
            end = begin + DISPLAY;
            cut_after = true;
        } else {
            if loc + MIN_RIGHT_CUT < end {
                end = loc + MIN_RIGHT_CUT;
                cut_after = true;
            }
            if end - begin > DISPLAY {
                begin = end - DISPLAY;
                cut_before = true;
            }
        }
    }
    let mut prefix = format!("LINE {line_no}: ");
    if cut_before {
        prefix.push_str("...");
    }
    let text: String = chars[begin..end].iter().collect();
    format!(
        "{prefix}{text}{}\n{}^\n",
        if cut_after { "..." } else { "" },
        " ".repeat(prefix.chars().count() + loc - begin)
    )
}

#[cfg(test)]
mod libpq_tests {
    use super::*;

    fn with(pos: usize) -> DbError {
        DbError {
            notes: Some(Box::new(ServerNotes {
                severity: "ERROR".into(),
                position: Some(pos),
                ..Default::default()
            })),
            ..DbError::new(ErrorClass::Fatal, "42P01", "relation \"x\" does not exist")
        }
    }

    #[test]
    fn the_position_is_a_caret_under_its_line_or_words_without_the_statement() {
        assert_eq!(
            with(15).libpq_text(Some("SELECT * FROM x")),
            "ERROR:  relation \"x\" does not exist\nLINE 1: SELECT * FROM x\n                      ^\n"
        );
        assert_eq!(
            with(15).libpq_text(None),
            "ERROR:  relation \"x\" does not exist at character 15\n"
        );
        assert_eq!(
            with(18).libpq_text(Some("SELECT 1;\nSELECT x")),
            "ERROR:  relation \"x\" does not exist\nLINE 2: SELECT x\n               ^\n"
        );
    }

    #[test]
    fn a_long_line_is_cut_around_the_position() {
        let q = format!("SELECT {} FROM x", "a, ".repeat(40));
        let t = with(q.len()).libpq_text(Some(&q));
        let line = t.lines().nth(1).unwrap();
        assert!(
            line.starts_with("LINE 1: ...") && !line.ends_with("..."),
            "{line}"
        );
        assert_eq!(line.chars().count(), "LINE 1: ...".len() + 60);
        let caret = t.lines().nth(2).unwrap();
        assert_eq!(caret.len() - 1, line.len() - 1, "{t}");
        let t = with(8).libpq_text(Some(&q));
        let line = t.lines().nth(1).unwrap();
        assert!(
            line.starts_with("LINE 1: SELECT") && line.ends_with("..."),
            "{line}"
        );
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.message.is_empty(), self.code.is_empty()) {
            (false, false) => write!(f, "{} ({})", self.message, self.code)?,
            (false, true) => write!(f, "{}", self.message)?,
            (true, false) => write!(f, "an error without a message ({})", self.code)?,
            (true, true) => write!(f, "an error without a message or code")?,
        }
        if let Some(sql) = &self.statement {
            write!(f, " in statement: {sql}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DbError {}

/// How a successful command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Ctrl-C stopped a run; what it measured was reported and saved.
    Interrupted,
    /// The run stopped on an error; what it measured was reported and saved.
    Failed,
}

/// `text` with its control characters written as escapes (`\x1b`, `\u{9b}`), so that text
/// from outside (a results file's names, a server's message, a file name) printed to a
/// terminal cannot move the cursor, retitle the window or clear the screen. Line feeds and tabs
/// stay. With `keep_colors`, the colour sequences dbsweep itself writes (`ESC[31m`, `ESC[32m`,
/// `ESC[0m`) stay too.
pub fn escape_controls(text: &str, keep_colors: bool) -> std::borrow::Cow<'_, str> {
    const OWN_COLORS: [&str; 3] = ["[31m", "[32m", "[0m"];
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for (i, c) in text.char_indices() {
        let own_color =
            keep_colors && c == '\x1b' && OWN_COLORS.iter().any(|k| text[i + 1..].starts_with(k));
        if !unsafe_char(c) || own_color {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod escape_tests {
    use super::escape_controls;

    #[test]
    fn control_characters_are_escaped_and_only_our_own_colours_kept() {
        let hostile = "w\x1b]0;owned\x07\x1b[2J\u{9b}31m\rx\ny\tz";
        assert_eq!(
            escape_controls(hostile, false),
            "w\\x1b]0;owned\\x07\\x1b[2J\\u{9b}31m\\x0dx\ny\tz"
        );
        let ours = "\x1b[31m-5%\x1b[0m \x1b[1m";
        assert_eq!(escape_controls(ours, true), "\x1b[31m-5%\x1b[0m \\x1b[1m");
        assert!(matches!(
            escape_controls("plain", false),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
