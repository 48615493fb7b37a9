//! What PostgreSQL and MySQL connections share: prepared or text statements, transactions,
//! and the small queries dbsweep asks itself, over a [`Protocol`] that each wire client
//! implements.

use std::collections::BTreeMap;

use super::{Conn, DbError, Outcome, Param, RowValue, StmtId, TextRow, interpolate};

/// One database's protocol client, as [`ServerConn`] drives it.
pub trait Protocol: Send {
    /// A statement prepared on the server.
    type Stmt: Send;
    const DIALECT: super::Dialect;
    /// Whether backslashes escape in string literals (MySQL: yes; PostgreSQL: no).
    const BACKSLASH_ESCAPES: bool;
    /// Prepares `sql` (with `?` placeholders) as the `n`th statement of the connection.
    fn prepare(&mut self, n: usize, sql: &str) -> Result<Self::Stmt, DbError>;
    /// Runs a prepared statement; `on_row`, if given, sees each row's values as text.
    fn execute(
        &mut self,
        st: &Self::Stmt,
        params: &[Param],
        on_row: Option<super::OnRow<'_>>,
    ) -> Result<Outcome, DbError>;
    /// Runs a text statement; `on_row` sees each row.
    fn simple(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<Outcome, DbError>;
    /// A query counting the tables called `name` in the current schema or database.
    fn table_count_sql(name: &str) -> String;
    /// A query returning one `name=value` row per server setting worth saving.
    const SETTINGS_SQL: &'static str;
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError>;
}

pub struct ServerConn<P: Protocol> {
    proto: P,
    /// Prepared statements (none under --ps-mode disable) and their SQL with `?` marks.
    stmts: Vec<P::Stmt>,
    sql: Vec<String>,
    text: bool,
    in_txn: bool,
}

impl<P: Protocol> ServerConn<P> {
    pub fn new(proto: P, text: bool) -> ServerConn<P> {
        ServerConn {
            proto,
            stmts: Vec::new(),
            sql: Vec::new(),
            text,
            in_txn: false,
        }
    }

    fn simple(&mut self, sql: &str) -> Result<Outcome, DbError> {
        self.proto
            .simple(sql, &mut |_| {})
            .map_err(|e| e.in_statement(sql))
    }

    fn run(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: Option<super::OnRow<'_>>,
    ) -> Result<Outcome, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, P::BACKSLASH_ESCAPES);
            return match on_row {
                None => self.simple(&sql),
                Some(f) => self.proto.simple(&sql, f).map_err(|e| e.in_statement(&sql)),
            };
        }
        self.proto
            .execute(&self.stmts[stmt.0], params, on_row)
            .map_err(|e| e.in_statement(&self.sql[stmt.0]))
    }
}

impl<P: Protocol> Conn for ServerConn<P> {
    fn dialect(&self) -> super::Dialect {
        P::DIALECT
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        if !self.text {
            let st = self
                .proto
                .prepare(self.stmts.len(), sql)
                .map_err(|e| e.in_statement(sql))?;
            self.stmts.push(st);
        }
        self.sql.push(sql.to_string());
        Ok(StmtId(self.sql.len() - 1))
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.run(stmt, params, None).map(|o| o.rows)
    }

    fn query_each(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<u64, DbError> {
        self.run(stmt, params, Some(on_row)).map(|o| o.rows)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.run(stmt, params, None).map(|o| o.changed)
    }

    fn begin(&mut self, _write: bool) -> Result<(), DbError> {
        self.simple("BEGIN")?;
        self.in_txn = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.in_txn = false;
        self.simple("COMMIT").map(drop)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if std::mem::take(&mut self.in_txn) {
            self.simple("ROLLBACK").map(drop)
        } else {
            Ok(())
        }
    }

    fn simple(&mut self, sql: &str, on_row: super::OnRow) -> Result<Outcome, DbError> {
        self.proto
            .simple(sql, on_row)
            .map_err(|e| e.in_statement(sql))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.simple(sql).map(drop)
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_text(sql)?.and_then(|v| v.parse().ok()))
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        let mut first: Option<Option<String>> = None;
        self.proto
            .simple(sql, &mut |row| {
                if first.is_none() {
                    first = Some(row.get(0).map(|b| String::from_utf8_lossy(b).into_owned()));
                }
            })
            .map_err(|e| e.in_statement(sql))?;
        Ok(first.flatten())
    }

    fn query_rows(
        &mut self,
        sql: &str,
        columns: usize,
    ) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let mut rows = Vec::new();
        self.proto
            .simple(sql, &mut |row| {
                rows.push(
                    (0..columns)
                        .map(|i| row.get(i).map(|b| String::from_utf8_lossy(b).into_owned()))
                        .collect(),
                );
            })
            .map_err(|e| e.in_statement(sql))?;
        Ok(rows)
    }

    fn table_exists(&mut self, name: &str) -> Result<bool, DbError> {
        Ok(self
            .query_i64(&P::table_count_sql(&name.replace('\'', "''")))?
            .unwrap_or(0)
            > 0)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.proto.bulk_load(table, columns, next_row)
    }

    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let mut out = BTreeMap::new();
        self.proto
            .simple(P::SETTINGS_SQL, &mut |row| {
                if let Some((k, v)) = row
                    .get(0)
                    .map(String::from_utf8_lossy)
                    .as_deref()
                    .and_then(|t| t.split_once('='))
                {
                    out.insert(k.to_ascii_lowercase(), v.to_string());
                }
            })
            .map_err(|e| e.in_statement(P::SETTINGS_SQL))?;
        Ok(out)
    }
}
