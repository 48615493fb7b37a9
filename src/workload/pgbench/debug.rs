//! pgbench's `-d`: what each client says it executes, prepares, sends and waits for, on
//! stderr, in pgbench's words and its query mode's form of the SQL.

use super::client::PgbenchClient;
use super::command::Command;

/// One of pgbench's debugging lines (`-d`), as its logging prints them.
#[cold]
pub(super) fn debug_line(line: std::fmt::Arguments<'_>) {
    eprintln!("pgbench: {line}");
}

impl PgbenchClient {
    /// `-d`: the SQL command `(s, i)` sent, as pgbench's query mode names it: the text with
    /// the values in it (`simple`, the text sent), with `$1` for each variable, or the
    /// prepared statement's name (numbered over every script's SQL, as pgbench numbers them).
    #[cold]
    pub(super) fn debug_sending(
        &self,
        (s, i): (usize, usize),
        (text, semicolon): (&[String], bool),
        simple: Option<&str>,
    ) {
        let end = if semicolon { ";" } else { "" };
        let shown = match (self.debug, simple) {
            (None, _) => return,
            (Some(super::Debug::Simple), Some(sql)) => format!("{sql}{end}"),
            (Some(super::Debug::Prepared), _) => {
                let name = self.prep_name(s, i);
                // pgbench prepares each statement where it first runs it.
                let mut said = self.debug_prepared.borrow_mut();
                if !said.contains(&(s, i)) {
                    said.push((s, i));
                    debug_line(format_args!("client {} preparing {name}", self.id));
                }
                name
            }
            _ => dollar_text(text, semicolon),
        };
        debug_line(format_args!("client {} sending {shown}", self.id));
    }

    /// The name pgbench gives SQL command `(s, i)`'s prepared statement: `P_N`, numbered over
    /// every script's SQL.
    pub(super) fn prep_name(&self, s: usize, i: usize) -> String {
        let before: usize = self.scripts[..s]
            .iter()
            .map(|(sc, _)| sql_commands(&sc.commands))
            .sum();
        format!(
            "P_{}",
            before + sql_commands(&self.scripts[s].0.commands[..i])
        )
    }

    /// `-d`: the client waits for the answer.
    pub(super) fn debug_receiving(&self) {
        if self.debug.is_some() {
            debug_line(format_args!("client {} receiving", self.id));
        }
    }
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

/// How many of `commands` are SQL.
fn sql_commands(commands: &[Command]) -> usize {
    commands
        .iter()
        .filter(|c| matches!(c, Command::Sql { .. }))
        .count()
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
