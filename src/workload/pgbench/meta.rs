//! pgbench's meta-commands (`\\set`, `\\sleep`, `\\shell`, `\\if` ...) read from their line, and
//! their errors with the place pgbench's caret points to.

use super::command::Command;
use super::expr::{self, Expr};

/// A variable's name as pgbench takes it: letters, digits, underscores and any character
/// beyond ASCII, not starting with a digit.
pub(super) fn valid_name(name: &str) -> bool {
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii())
        && name.chars().next().is_some_and(|c| !c.is_ascii_digit())
}

/// What is wrong with a meta-command, and where in its line if pgbench would point there.
pub(super) type MetaError = (String, Option<usize>);

/// Byte offset of `part` (a slice of `line`) in `line`.
fn offset_in(line: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize)
}

pub(super) fn meta(line: &str) -> Result<Command, MetaError> {
    meta_words(line).map_err(|e| e.into_parts())
}

/// A meta-command's error: its words alone, or with the column pgbench's caret points to.
enum MetaErr {
    Plain(String),
    At(String, usize),
}

impl MetaErr {
    fn into_parts(self) -> MetaError {
        match self {
            MetaErr::Plain(e) => (e, None),
            MetaErr::At(e, at) => (e, Some(at)),
        }
    }
}

impl From<String> for MetaErr {
    fn from(e: String) -> Self {
        MetaErr::Plain(e)
    }
}

impl From<&str> for MetaErr {
    fn from(e: &str) -> Self {
        MetaErr::Plain(e.to_string())
    }
}

fn meta_words(line: &str) -> Result<Command, MetaErr> {
    let body = line.trim_start_matches('\\');
    let (word, rest) = body
        .split_once(char::is_whitespace)
        .map_or((body, ""), |(w, r)| (w, r.trim()));
    // An expression's error points into the line, as pgbench's `^ error found here`.
    // (An empty expression stands at the line's end.)
    let expr = |s: &str| {
        let start = if s.is_empty() {
            line.len()
        } else {
            offset_in(line, s)
        };
        expr::parse_at(s).map_err(|(e, at)| MetaErr::At(e, start + at))
    };
    Ok(match word.to_ascii_lowercase().as_str() {
        "set" => {
            if rest.is_empty() {
                return Err("missing argument".into());
            }
            // A name without an expression: the empty expression's syntax error.
            let (name, e) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            if !valid_name(name) {
                return Err(format!("invalid variable name: \"{name}\"").into());
            }
            Command::Set(name.to_string(), expr(e.trim())?)
        }
        "sleep" => {
            // pgbench points at the first word too many.
            if let Some(extra) = rest.split_whitespace().nth(2) {
                return Err(MetaErr::At(
                    "too many arguments".into(),
                    offset_in(line, extra),
                ));
            }
            let mut parts = rest.split_whitespace();
            let n = parts.next().ok_or("missing argument")?;
            let us = match parts.next().map(str::to_ascii_lowercase).as_deref() {
                None | Some("s") => 1_000_000,
                Some("ms") => 1000,
                Some("us") => 1,
                Some(u) => {
                    return Err(format!("unrecognized time unit, must be us, ms or s: {u}").into());
                }
            };
            if parts.next().is_some() {
                return Err("too many arguments".into());
            }
            let e = if let Some(v) = n.strip_prefix(':') {
                Expr::Var(v.to_string())
            } else {
                expr(n)?
            };
            Command::Sleep(e, us)
        }
        // pgbench keeps at most 256 words of a command, its name the first.
        "shell" | "setshell" if rest.split_whitespace().count() + 1 > 256 => {
            return Err("too many arguments".into());
        }
        "shell" => {
            let words: Vec<String> = rest.split_whitespace().map(String::from).collect();
            if words.is_empty() {
                return Err("missing command".into());
            }
            Command::Shell(None, words)
        }
        "setshell" => {
            let mut words = rest.split_whitespace().map(String::from);
            let (Some(name), Some(first)) = (words.next(), words.next()) else {
                return Err("missing argument".into());
            };
            if !valid_name(&name) {
                return Err(format!("invalid variable name: \"{name}\"").into());
            }
            Command::Shell(Some(name), std::iter::once(first).chain(words).collect())
        }
        "startpipeline" | "syncpipeline" | "endpipeline" if !rest.is_empty() => {
            return Err("too many arguments".into());
        }
        "startpipeline" => Command::StartPipeline,
        "syncpipeline" => Command::SyncPipeline,
        "endpipeline" => Command::EndPipeline,
        "if" => Command::If(expr(rest)?),
        "elif" => Command::Elif(expr(rest)?),
        "else" | "endif" if !rest.is_empty() => return Err("unexpected argument".into()),
        "else" => Command::Else,
        "endif" => Command::Endif,
        _ => return Err("invalid command".into()),
    })
}
