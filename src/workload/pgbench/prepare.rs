//! pgbench's statements in the extended and prepared query modes: each prepared where the
//! client first runs it, as pgbench prepares, and a refusal said as pgbench says it.

use super::client::PgbenchClient;
use super::command::SleepTime;
use super::said::{dollar_text, said_error};
use super::script::{Command, Script};
use super::stmt::Stmt;
use crate::db::{Conn, DbError, ErrorClass, StmtId};

impl PgbenchClient {
    /// SQL command `(s, i)`'s prepared statement, prepared now if it was not (None: sent as
    /// text). Under `-M prepared` a statement the server refuses is said once, as pgbench says
    /// it, and each run of it then fails on the statement pgbench would have sent, which does
    /// not exist; under `-M extended` the refusal is the command's error.
    pub(super) fn statement(
        &mut self,
        conn: &mut dyn Conn,
        (s, i): (usize, usize),
    ) -> Result<Option<StmtId>, DbError> {
        match &self.stmts[s][i] {
            Stmt::Text => Ok(None),
            Stmt::Ready(id) => Ok(Some(*id)),
            Stmt::Refused => Err(DbError::new(
                ErrorClass::Fatal,
                "26000",
                format!(
                    "prepared statement \"{}\" does not exist",
                    self.prep_name(s, i)
                ),
            )),
            Stmt::Later(sql) => match conn.prepare(sql) {
                Ok(id) => {
                    self.stmts[s][i] = Stmt::Ready(id);
                    Ok(Some(id))
                }
                Err(e) if e.notes.is_none() => Err(e),
                Err(mut e) => {
                    // libpq shows the text pgbench sent, with `$N` for the variables.
                    if let Command::Sql {
                        text, semicolon, ..
                    } = &self.scripts[s].0.commands[i]
                    {
                        e.statement = Some(dollar_text(text, *semicolon));
                    }
                    if self.extended {
                        return Err(e);
                    }
                    said_error(&e.libpq_text(e.statement.as_deref()));
                    self.stmts[s][i] = Stmt::Refused;
                    self.statement(conn, (s, i))
                }
            },
        }
    }

    /// pgbench prepares a pipeline's statements before it enters it (the `\startpipeline`
    /// at `(s, i)`); one the server refuses under `-M prepared` fails where it runs.
    pub(super) fn prepare_pipeline(
        &mut self,
        conn: &mut dyn Conn,
        script: &Script,
        (s, i): (usize, usize),
    ) -> Result<(), DbError> {
        let end = script.commands[i..]
            .iter()
            .position(|c| matches!(c, Command::EndPipeline))
            .map_or(script.commands.len(), |n| i + n);
        for j in i + 1..end {
            if let Err(e) = self.statement(conn, (s, j))
                && !matches!(self.stmts[s][j], Stmt::Refused)
            {
                return Err(e);
            }
        }
        Ok(())
    }

    /// `\sleep`'s number: a variable's value read as pgbench reads it (C's `atoi` of its text).
    pub(super) fn sleep_time(&self, time: &SleepTime) -> Result<i64, String> {
        let name = match time {
            SleepTime::Lit(n) => return Ok(*n),
            SleepTime::Var(name) => name,
        };
        let text = match (self.vars.get(name), self.texts.get(name)) {
            (_, Some(t)) => t.clone(),
            (Some(v), None) => v.text(),
            (None, None) => return Err(format!("sleep: undefined variable \"{name}\"")),
        };
        let n = super::meta::atoi(&text);
        if n == 0 && !text.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "sleep: invalid sleep time \"{text}\" for variable \"{name}\""
            ));
        }
        Ok(n)
    }
}
