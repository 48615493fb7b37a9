//! What a table in the database is (a plain table, a view, a partitioned table or a partition)
//! and its columns with their types, compared with the `CREATE TABLE` dbsweep would run: the
//! check before any drop, so that dbsweep drops only tables of its own shape, never a user's
//! `sbtest1(id, k, c text, pad text)`, a view or a partitioned table that happen to share a name.

use super::conn::{Conn, Dialect};
use crate::error::DbError;

/// A table as the database's catalog describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableShape {
    /// `table`, `view`, `partitioned table`, `partition` or the catalog's own word.
    pub kind: String,
    /// Lower-case column names with their types in canonical form (see [`canonical_type`]),
    /// sorted by name.
    pub columns: Vec<(String, String)>,
}

impl TableShape {
    /// `name(col type, ...)` for messages.
    pub fn describe(&self, name: &str) -> String {
        let cols: Vec<String> = self
            .columns
            .iter()
            .map(|(c, t)| format!("{c} {t}"))
            .collect();
        format!("{name}({})", cols.join(", "))
    }
}

/// The shape of `table` in the connection's current schema; `None` when there is none.
pub fn table_shape(conn: &mut dyn Conn, table: &str) -> Result<Option<TableShape>, DbError> {
    let t = table.replace('\'', "''");
    let (kind_sql, columns_sql) = match conn.dialect() {
        Dialect::Postgres => (
            format!(
                "SELECT CASE WHEN c.relispartition THEN 'partition' ELSE c.relkind::text END, '' \
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relname = '{t}'"
            ),
            format!(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod) \
                 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relname = '{t}' \
                 AND a.attnum > 0 AND NOT a.attisdropped"
            ),
        ),
        Dialect::Mysql => (
            format!(
                "SELECT table_type, coalesce(create_options, '') FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_name = '{t}'"
            ),
            format!(
                "SELECT column_name, column_type FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = '{t}'"
            ),
        ),
        Dialect::Sqlite | Dialect::Any => (
            format!("SELECT type, '' FROM sqlite_master WHERE name = '{t}'"),
            format!("SELECT name, type FROM pragma_table_info('{t}')"),
        ),
    };
    let Some(row) = conn.query_rows(&kind_sql, 2)?.into_iter().next() else {
        return Ok(None);
    };
    let mut row = row.into_iter().map(Option::unwrap_or_default);
    let (raw, options) = (
        row.next().unwrap_or_default(),
        row.next().unwrap_or_default(),
    );
    let kind = match (
        raw.as_str(),
        options.to_ascii_lowercase().contains("partitioned"),
    ) {
        ("r" | "BASE TABLE" | "table", false) => "table",
        ("p", _) | ("BASE TABLE", true) => "partitioned table",
        ("v" | "m" | "VIEW" | "SYSTEM VIEW" | "view", _) => "view",
        ("partition", _) => "partition",
        (other, _) => other,
    }
    .to_string();
    let mut columns: Vec<(String, String)> = conn
        .query_rows(&columns_sql, 2)?
        .into_iter()
        .map(|r| {
            let mut r = r.into_iter().map(Option::unwrap_or_default);
            let name = r.next().unwrap_or_default().to_ascii_lowercase();
            (name, canonical_type(&r.next().unwrap_or_default()))
        })
        .collect();
    columns.sort();
    Ok(Some(TableShape { kind, columns }))
}

/// The columns that `ddl` (one `CREATE TABLE name (...)` as dbsweep writes it) declares, with
/// canonical types, sorted by name: what [`table_shape`] reads back from a table it made.
pub fn declared_columns(ddl: &str) -> Vec<(String, String)> {
    let (Some(open), Some(close)) = (ddl.find('('), ddl.rfind(')')) else {
        return Vec::new();
    };
    let body = &ddl[open + 1..close.max(open + 1)];
    let mut columns: Vec<(String, String)> = split_top_level(body)
        .into_iter()
        .filter_map(|part| {
            let mut words = part.split_whitespace();
            let name = words.next()?.to_ascii_lowercase();
            if ["primary", "key", "unique", "index", "constraint", "foreign"]
                .contains(&name.as_str())
            {
                return None;
            }
            // The type runs up to the first constraint word.
            let ty: Vec<&str> = words
                .take_while(|w| {
                    !matches!(
                        w.to_ascii_uppercase().as_str(),
                        "NOT" | "NULL" | "DEFAULT" | "PRIMARY" | "AUTO_INCREMENT" | "UNIQUE"
                    )
                })
                .collect();
            Some((name, canonical_type(&ty.join(" "))))
        })
        .collect();
    columns.sort();
    columns
}

/// Splits on commas outside parentheses (`DECIMAL(12,2)` stays whole).
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(s[start..].trim());
    parts
}

/// One spelling per type across the dialects' catalogs and dbsweep's DDL: `int(11)`, `int`,
/// `int4` and `serial` are `integer`; `character(120)` is `char(120)`; `character varying(20)`
/// is `varchar(20)`; `numeric(12,2)` is `decimal(12,2)`; `timestamp without time zone` is
/// `timestamp`. Anything else stays as written, in lower case.
pub fn canonical_type(t: &str) -> String {
    let t = t.trim().to_ascii_lowercase().replace(", ", ",");
    let (base, args) = match t.find('(') {
        Some(i) => (t[..i].trim(), t[i..].trim()),
        None => (t.as_str(), ""),
    };
    let base = base.trim_end_matches(" signed");
    match base {
        "int" | "integer" | "int4" | "serial" | "serial4" => "integer".into(),
        "bigint" | "int8" | "bigserial" => "bigint".into(),
        // MariaDB and MySQL 5.x show a display width (`tinyint(4)`): not part of the type.
        "smallint" | "int2" => "smallint".into(),
        "tinyint" | "mediumint" => base.into(),
        "character" | "char" | "bpchar" => format!("char{args}"),
        "character varying" | "varchar" => format!("varchar{args}"),
        "numeric" | "decimal" => format!("decimal{args}"),
        "timestamp without time zone" => "timestamp".into(),
        _ => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_columns_read_types_up_to_constraints() {
        let ddl = "CREATE TABLE sbtest1 (\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)) /*! ENGINE = innodb */";
        assert_eq!(
            declared_columns(ddl),
            [
                ("c".to_string(), "char(120)".to_string()),
                ("id".into(), "integer".into()),
                ("k".into(), "integer".into()),
                ("pad".into(), "char(60)".into()),
            ]
        );
        let money = "CREATE TABLE w (w_id INT NOT NULL, w_ytd DECIMAL(12,2), PRIMARY KEY (w_id))";
        assert_eq!(
            declared_columns(money),
            [
                ("w_id".to_string(), "integer".to_string()),
                ("w_ytd".into(), "decimal(12,2)".into())
            ]
        );
    }

    #[test]
    fn catalog_spellings_meet_the_ddl_ones() {
        for (catalog, ddl) in [
            ("int(11)", "INTEGER"),
            ("int", "SERIAL"),
            ("character(120)", "CHAR(120)"),
            ("character varying(20)", "VARCHAR(20)"),
            ("numeric(12, 2)", "DECIMAL(12,2)"),
            ("timestamp without time zone", "TIMESTAMP"),
        ] {
            assert_eq!(canonical_type(catalog), canonical_type(ddl), "{catalog}");
        }
        assert_ne!(canonical_type("text"), canonical_type("CHAR(120)"));
        assert_ne!(canonical_type("varchar(120)"), canonical_type("CHAR(120)"));
        assert_ne!(canonical_type("bigint"), canonical_type("INTEGER"));
    }
}
