//! The SQL of pgbench's scripts delimited as psql's lexer (which pgbench uses) delimits it:
//! where a command ends, and where a dollar-quoted string does.

/// Where an SQL command ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum SqlEnd {
    /// At the `;` at this offset.
    Semicolon(usize),
    /// At a `\gset` or `\aset` at this offset.
    Store(usize),
    Eof,
}

/// The SQL command starting at `from`, as psql's lexer (which pgbench uses) delimits it: its
/// text without `--` comments, and where it ends. Quotes ('' doubled, E'' with backslash
/// escapes), quoted identifiers, dollar quotes, nested block comments and parentheses hide
/// a `;`; `\;` joins statements into one command.
pub(super) fn scan_sql(text: &str, from: usize) -> (String, SqlEnd) {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = from;
    let mut depth = 0usize;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80;
    let mut copied = from;
    let flush = |out: &mut String, a: usize, z: usize| out.push_str(&text[a..z]);
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' => {
                let escapes = i > from
                    && matches!(b[i - 1], b'e' | b'E')
                    && (i - 1 == from || !ident(b[i - 2]));
                i += 1;
                while i < b.len() {
                    if escapes && b[i] == b'\\' {
                        i += 2;
                    } else if b[i] == b'\'' {
                        i += 1;
                        if b.get(i) != Some(&b'\'') {
                            break;
                        }
                        i += 1;
                    } else {
                        i += 1;
                    }
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() {
                    if b[i] == b'"' {
                        i += 1;
                        if b.get(i) != Some(&b'"') {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'$' if i == from || !ident(b[i - 1]) => {
                // $tag$ ... $tag$, the tag empty or an identifier not starting with a digit.
                let tag_end = text[i + 1..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || !ch.is_ascii()))
                    .map(|n| i + 1 + n);
                match tag_end {
                    Some(t) if b[t] == b'$' && (t == i + 1 || !b[i + 1].is_ascii_digit()) => {
                        let tag = &text[i..=t];
                        i = match text[t + 1..].find(tag) {
                            Some(n) => t + 1 + n + tag.len(),
                            None => b.len(),
                        };
                    }
                    _ => i += 1,
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                flush(&mut out, copied, i);
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
                copied = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut nest = 1;
                i += 2;
                while i < b.len() && nest > 0 {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        nest += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        nest -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'\\' if b.get(i + 1) == Some(&b';') => i += 2,
            b'\\' => {
                let w = text.get(i + 1..i + 5).unwrap_or("");
                if w.eq_ignore_ascii_case("gset") || w.eq_ignore_ascii_case("aset") {
                    flush(&mut out, copied, i);
                    return (out, SqlEnd::Store(i));
                }
                i += 1;
            }
            b';' if depth == 0 => {
                flush(&mut out, copied, i);
                return (out, SqlEnd::Semicolon(i));
            }
            _ => i += 1,
        }
    }
    flush(&mut out, copied, b.len().min(i));
    (out, SqlEnd::Eof)
}

/// Where the dollar-quoted string starting at `at` (a `$tag$`) ends, if one starts there.
pub(super) fn dollar_quote_end(source: &str, at: usize) -> Option<usize> {
    let b = source.as_bytes();
    let t =
        at + 1 + source[at + 1..].find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))?;
    if b[t] != b'$' || (t > at + 1 && b[at + 1].is_ascii_digit()) {
        return None;
    }
    let tag = &source[at..=t];
    Some(
        source[t + 1..]
            .find(tag)
            .map_or(source.len(), |n| t + 1 + n + tag.len()),
    )
}
