//! test-alter-table: a table of 8 columns and 1,000 rows grown to 1,000 columns one ALTER at
//! a time, indexed and unindexed, and shrunk again as the original shrinks it.

use super::{Ctx, SqlBenchClient, ddl};
use crate::db::{DbError, Dialect};

impl SqlBenchClient {
    /// Rows 1,000 and columns 1,000 (--small-test: 100 and 100); one column a statement (the
    /// original adds int((fields - 8) / 10,000) + 1 at a time, 1).
    pub(super) fn alter(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        let t = "sqlbench_bench";
        let start = 8u64;
        let (rows, max_fields) = if self.small { (100, 100) } else { (1000, 1000) };
        let fields: Vec<String> = (1..=start).map(|i| format!("i{i} int not null")).collect();
        c.create(self.dialect, t, &fields, &[])?;
        self.restart();
        for i in 0..rows {
            let values = vec![i.to_string(); start as usize].join(",");
            c.text_write(&format!("insert into {t} values ( {values})"))?;
        }
        self.lap(0); // insert
        let mut field_count = start;
        while field_count < max_fields {
            field_count += 1;
            c.sql(&format!("ALTER TABLE {t} ADD  i{field_count} integer"))?;
        }
        self.lap(1); // alter_table_add
        for i in 1..=start {
            c.sql(&format!("CREATE INDEX {t}_ind{i} ON {t} (i{i})"))?;
        }
        self.lap(2); // create_index
        for i in 1..=start {
            c.sql(&ddl::drop_index(self.dialect, t, &format!("{t}_ind{i}")))?;
        }
        self.lap(3); // drop_index
        // The original's loop: `while (--$field_count >= $end)` drops the column below the
        // count and steps past the next, so every other column goes, one a statement.
        // PostgreSQL's server-cfg says it cannot drop columns: the original skips the test.
        if self.dialect != Dialect::Postgres {
            while field_count > start {
                let end = (field_count - 1).max(start);
                let mut drops = Vec::new();
                loop {
                    field_count -= 1;
                    if field_count < end {
                        break;
                    }
                    drops.push(format!("DROP i{field_count}"));
                }
                c.sql(&format!("ALTER TABLE {t} {}", drops.join(",")))?;
            }
            self.lap(4); // alter_table_drop
        }
        c.sql(&format!("drop table {t}"))?;
        Ok(())
    }
}
