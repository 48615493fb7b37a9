//! A pgbench script's commands, as the script reader makes them and the meta-commands' parser
//! and the client take them.

use super::expr::Expr;

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// SQL: its text pieces and the variables between them (`text[0] var[0] text[1] ...`).
    Sql {
        text: Vec<String>,
        vars: Vec<String>,
        /// The command as written, for messages and per-statement reports.
        source: String,
        /// `\gset` / `\aset` after it: where its result goes.
        store: Option<Store>,
        /// Its statements: more than one when `\;` joins them (sent in one query string, as
        /// pgbench sends them).
        parts: usize,
        /// Ended by a `;` (pgbench's text of it, which `-d` prints, keeps it).
        semicolon: bool,
    },
    Set(String, Expr),
    /// `\sleep`: a number or a variable's, times the unit in microseconds.
    Sleep(SleepTime, u64),
    If(Expr),
    Elif(Expr),
    Else,
    Endif,
    /// `\shell` (no variable) and `\setshell VAR`: a command line's words, each either text
    /// or (`:name`) a variable's value; `::` starts a word with a literal colon.
    Shell(Option<String>, Vec<String>),
    /// `\startpipeline`, `\syncpipeline`, `\endpipeline`: SQL between them is sent without
    /// waiting, its results read at the end (a Sync at `\syncpipeline` and at the end).
    StartPipeline,
    SyncPipeline,
    EndPipeline,
}

/// `\sleep`'s argument: pgbench takes no expression there, only an integer or `:name`.
#[derive(Clone, Debug, PartialEq)]
pub enum SleepTime {
    Lit(i64),
    Var(String),
}

/// Where an SQL command's result goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Store {
    /// `\gset PREFIX`: the one row's columns, each into PREFIX + its name; another number of
    /// rows is an error.
    One(String),
    /// `\aset PREFIX`: the last row's columns, when there is a row.
    All(String),
}
