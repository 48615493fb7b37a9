//! sql-bench's `server-cfg` for the servers dbsweep drives: the statements that make a table
//! from the scripts' ANSI-ish field and key lists, and the one that drops an index. MySQL and
//! MariaDB take the lists as they are (`db_MySQL::create`); PostgreSQL maps the integer types
//! to `int`, `double` to `float`, `blob` to `text`, and makes every key, the primary one too, a
//! `create [unique] index TABLE_index_N` of its own (`db_Pg::create`, its numbering from an
//! empty suffix as the original's); SQLite, which sql-bench never knew, keeps the fields and
//! the primary and unique keys and makes each plain index a statement of its own (it has no
//! inline INDEX).

use crate::db::Dialect;

/// The statements that make `table` with `fields` and `keys`, as sql-bench's `create` gives
/// them for `d`.
pub(super) fn create(d: Dialect, table: &str, fields: &[String], keys: &[String]) -> Vec<String> {
    match d {
        Dialect::Mysql => {
            let all: Vec<&str> = fields.iter().chain(keys).map(String::as_str).collect();
            vec![format!("create table {table} ({})", all.join(","))]
        }
        Dialect::Postgres => {
            let fields: Vec<String> = fields.iter().map(|f| pg_field(f)).collect();
            let mut out = vec![format!("create table {table} ({})", fields.join(","))];
            for (nr, key) in keys.iter().enumerate() {
                // The original's counter starts undefined: "index_", then "index_1", ...
                let suffix = if nr == 0 {
                    String::new()
                } else {
                    nr.to_string()
                };
                let key = replace_ci(key, "primary key", "unique index primary_key");
                let columns = last_parens(&key);
                let kind = if key.to_ascii_lowercase().starts_with("unique") {
                    "unique index"
                } else {
                    "index"
                };
                out.push(format!(
                    "create {kind} {table}_index_{suffix} on {table}  {columns}"
                ));
            }
            out
        }
        Dialect::Sqlite | Dialect::Any => {
            let mut inline: Vec<&str> = fields.iter().map(String::as_str).collect();
            let mut after = Vec::new();
            for key in keys {
                let lower = key.to_ascii_lowercase();
                if lower.starts_with("primary key") || lower.starts_with("unique") {
                    inline.push(key);
                } else {
                    // "index NAME (COLUMNS)"
                    let name = key.split_whitespace().nth(1).unwrap_or("index");
                    after.push(format!(
                        "create index {table}_{name} on {table} {}",
                        last_parens(key)
                    ));
                }
            }
            let mut out = vec![format!("create table {table} ({})", inline.join(","))];
            out.extend(after);
            out
        }
    }
}

/// `db_Pg::create`'s field mapping: the first integer type word to `int`, `double` to
/// `float`, `blob` to `text`.
fn pg_field(f: &str) -> String {
    let mut f = f.to_string();
    for t in ["tinyint", "smallint", "mediumint", "integer"] {
        if let Some(at) = f.find(t) {
            f.replace_range(at..at + t.len(), "int");
            break;
        }
    }
    // `int(6)` -> `int`, `float(7,2)` -> `float`.
    for t in ["int(", "float("] {
        if let Some(at) = f.find(t)
            && let Some(end) = f[at..].find(')')
            && f[at + t.len()..at + end]
                .chars()
                .all(|c| c.is_ascii_digit() || c == ',')
        {
            f.replace_range(at + t.len() - 1..at + end + 1, "");
        }
    }
    f.replacen(" double", " float", 1)
        .replacen(" blob", " text", 1)
}

fn replace_ci(s: &str, from: &str, to: &str) -> String {
    match s.to_ascii_lowercase().find(from) {
        Some(at) => format!("{}{to}{}", &s[..at], &s[at + from.len()..]),
        None => s.to_string(),
    }
}

/// The last parenthesised part of a key: its columns.
fn last_parens(key: &str) -> &str {
    key.rfind('(').map_or("", |at| &key[at..])
}

/// `drop_index`: MySQL names the table, the others do not.
pub(super) fn drop_index(d: Dialect, table: &str, index: &str) -> String {
    match d {
        Dialect::Mysql => format!("DROP INDEX {index} ON {table}"),
        _ => format!("DROP INDEX {index}"),
    }
}

/// A number as Perl prints it (`%.15g`): the scripts interpolate `$id/$groups` into their
/// statements, a fraction the server rounds into an integer column.
pub(super) fn perl_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (14 - magnitude).max(0) as usize;
    let s = format!("{x:.decimals$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tables_are_made_as_server_cfg_makes_them() {
        let fields = v(&["i int NOT NULL", "d double", "b blob", "t tinyint not null"]);
        assert_eq!(pg_field("idn integer(6) NOT NULL"), "idn int NOT NULL");
        let keys = v(&["primary key (i)", "index index2 (d)", "unique (t,i)"]);
        assert_eq!(
            create(Dialect::Mysql, "bench_1", &fields, &keys),
            [
                "create table bench_1 (i int NOT NULL,d double,b blob,t tinyint not null,primary key (i),index index2 (d),unique (t,i))"
            ]
        );
        assert_eq!(
            create(Dialect::Postgres, "bench_1", &fields, &keys),
            [
                "create table bench_1 (i int NOT NULL,d float,b text,t int not null)",
                "create unique index bench_1_index_ on bench_1  (i)",
                "create index bench_1_index_1 on bench_1  (d)",
                "create unique index bench_1_index_2 on bench_1  (t,i)",
            ]
        );
        assert_eq!(
            create(Dialect::Sqlite, "bench_1", &fields, &keys),
            [
                "create table bench_1 (i int NOT NULL,d double,b blob,t tinyint not null,primary key (i),unique (t,i))",
                "create index bench_1_index2 on bench_1 (d)",
            ]
        );
        assert_eq!(drop_index(Dialect::Mysql, "b", "i1"), "DROP INDEX i1 ON b");
        assert_eq!(drop_index(Dialect::Postgres, "b", "i1"), "DROP INDEX i1");
    }

    #[test]
    fn numbers_print_as_perls() {
        assert_eq!(perl_number(0.0), "0");
        assert_eq!(perl_number(27.0 / 27.0), "1");
        assert_eq!(perl_number(1.0 / 27.0), "0.037037037037037");
        assert_eq!(perl_number(100.0 / 27.0), "3.7037037037037");
        assert_eq!(perl_number(499_999.0 / 27.0), "18518.4814814815");
    }
}
