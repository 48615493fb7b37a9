//! pgbench's variables as it keeps them: a value's text as it came (`-D`, `\\gset`), the number
//! or boolean an expression reads it as, and SQL NULL.

use std::collections::HashMap;

use super::expr::Value;

/// A value read back from the server (`\gset`), as pgbench keeps it: a number when it reads
/// as one, else text; NULL as an empty value.
/// A value that came as text (`-D`, `\gset`, `\aset`): its text, kept for SQL and `\shell`
/// as it came (`007` stays `007`), and the number it reads as in an expression, if any (as
/// pgbench parses a variable when an expression uses it). SQL NULL is a value of its own.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Stored {
    Null,
    Text(String, Option<Value>),
}

pub(super) fn stored(v: Option<&[u8]>) -> Stored {
    let Some(v) = v else { return Stored::Null };
    let t = String::from_utf8_lossy(v).into_owned();
    let n = numeric(&t);
    Stored::Text(t, n)
}

/// `t` as pgbench reads a variable's text in an expression: a decimal integer, else a double
/// that does not overflow (`1e400` is malformed, not infinity).
pub(super) fn numeric(t: &str) -> Option<Value> {
    // As pgbench's makeVariableValue: "null"; "true", "yes" and their prefixes, "on"; "false",
    // "no" and their prefixes, "off", "of" (not "o"); then an integer or a double.
    let prefix_of = |word: &str| {
        !t.is_empty() && t.len() <= word.len() && word[..t.len()].eq_ignore_ascii_case(t)
    };
    if t.eq_ignore_ascii_case("null") {
        return Some(Value::Null);
    }
    if prefix_of("true") || prefix_of("yes") || t.eq_ignore_ascii_case("on") {
        return Some(Value::Bool(true));
    }
    if prefix_of("false")
        || prefix_of("no")
        || t.eq_ignore_ascii_case("off")
        || t.eq_ignore_ascii_case("of")
    {
        return Some(Value::Bool(false));
    }
    let s = t.trim();
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::Int(i));
    }
    let d = s.parse::<f64>().ok()?;
    let spelled_infinite = s.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if d.is_infinite() && !spelled_infinite.starts_with("inf") {
        return None;
    }
    Some(Value::Double(d))
}

/// Keeps `v` as variable `name` in `vars` and `texts`.
pub(super) fn keep(
    vars: &mut HashMap<String, Value>,
    texts: &mut HashMap<String, String>,
    name: String,
    v: Stored,
) {
    match v {
        Stored::Null => {
            texts.remove(&name);
            vars.insert(name, Value::Null);
        }
        Stored::Text(t, n) => {
            match n {
                Some(n) => vars.insert(name.clone(), n),
                None => vars.remove(&name),
            };
            texts.insert(name, t);
        }
    }
}
