//! pgbench's `-d`: what each client says it executes, prepares, sends and waits for, on
//! stderr, in pgbench's words and its query mode's form of the SQL.

use super::client::PgbenchClient;
use super::command::Command;
use super::said::{debug_line, dollar_text};

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

/// How many of `commands` are SQL.
fn sql_commands(commands: &[Command]) -> usize {
    commands
        .iter()
        .filter(|c| matches!(c, Command::Sql { .. }))
        .count()
}
