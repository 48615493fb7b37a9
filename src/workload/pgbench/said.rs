//! What pgbench says in its own words: its debugging lines (`-d`), a server's error it logs
//! and goes on after, a meta-command and an SQL command as `-d` shows them.

/// One of pgbench's debugging lines (`-d`), as its logging prints them.
#[cold]
pub(super) fn debug_line(line: std::fmt::Arguments<'_>) {
    eprintln!("pgbench: {line}");
}

/// A server's error that pgbench logs and goes on after (a statement it could not prepare),
/// libpq's text of it after pgbench's prefix.
#[cold]
pub(super) fn said_error(libpq_text: &str) {
    eprintln!("pgbench: error: {}", libpq_text.trim_end_matches('\n'));
}

/// A meta-command as pgbench's `-d` names it: its words, but for `\set` its variable only and
/// for `\if` and `\elif` nothing after the word (their expressions are parsed, not words).
pub(super) fn meta_words(source: &str) -> String {
    let words: Vec<&str> = source.split_whitespace().collect();
    let keep = match words.first().copied() {
        Some("\\set") => 2,
        Some("\\if" | "\\elif") => 1,
        _ => words.len(),
    };
    words[..keep.min(words.len())].join(" ")
}

/// An SQL command's text as pgbench sends it in the extended query mode: `$N` for its `N`th
/// variable, and its `;`.
pub(super) fn dollar_text(text: &[String], semicolon: bool) -> String {
    let mut t = String::new();
    for (k, piece) in text.iter().enumerate() {
        if k > 0 {
            t.push_str(&format!("${k}"));
        }
        t.push_str(piece);
    }
    if semicolon {
        t.push(';');
    }
    t
}
