//! pgbench's meta-commands (`\\set`, `\\sleep`, `\\shell`, `\\if` ...) read from their line, and
//! their errors with the place pgbench's caret points to.

use super::command::{Command, SleepTime};
use super::expr;

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
            Command::Set(name.to_string(), expr(e.trim())?)
        }
        "sleep" => sleep(line, rest)?,
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

/// `\\sleep N [us|ms|s]`, `\\sleep Nms` or `\\sleep :name [unit]`, read as pgbench reads it: the
/// number is C's `atoi` of the word's leading digits, a unit may stick to them.
fn sleep(line: &str, rest: &str) -> Result<Command, MetaErr> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    match words.len() {
        0 => return Err("missing argument".into()),
        1 | 2 => {}
        _ => {
            return Err(MetaErr::At(
                "too many arguments".into(),
                offset_in(line, words[2]),
            ));
        }
    }
    let arg = words[0];
    let mut unit = words.get(1).copied();
    let time = match arg.strip_prefix(':') {
        Some(name) => SleepTime::Var(name.to_string()),
        None => {
            let unsigned = arg.strip_prefix(['+', '-']).unwrap_or(arg);
            let digits = unsigned.len()
                - unsigned
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len();
            let tail = &unsigned[digits..];
            if !tail.is_empty() {
                if unit.is_none() && digits > 0 {
                    unit = Some(tail);
                } else {
                    return Err(MetaErr::At(
                        format!("invalid sleep time, must be an integer ({arg})"),
                        offset_in(line, arg),
                    ));
                }
            }
            SleepTime::Lit(atoi(&arg[..arg.len() - tail.len()]))
        }
    };
    let us = match unit.map(str::to_ascii_lowercase).as_deref() {
        None | Some("s") => 1_000_000,
        Some("ms") => 1000,
        Some("us") => 1,
        Some(_) => {
            let u = unit.unwrap_or_default();
            return Err(MetaErr::At(
                format!("unrecognized time unit, must be us, ms or s ({u})"),
                offset_in(line, u),
            ));
        }
    };
    Ok(Command::Sleep(time, us))
}

/// C's `atoi` as pgbench uses it: an optional sign and the digits that follow, 0 without any,
/// saturating where C's would overflow.
pub(super) fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg { -n } else { n }
}
