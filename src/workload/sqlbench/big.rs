//! test-big-tables: a table of 1,000 columns read and written whole.

use super::{Ctx, SqlBenchClient};
use crate::db::DbError;

impl SqlBenchClient {
    /// 70,000 of each (--small-test: 7,000) on 1,000 columns (100).
    pub(super) fn big(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        let t = "sqlbench_bench1";
        let (loops, fields) = if self.small {
            (7_000, 100)
        } else {
            (70_000, 1000)
        };
        let names: Vec<String> = (1..=fields).map(|i| format!("i{i}")).collect();
        let columns: Vec<String> = names.iter().map(|n| format!("{n} int")).collect();
        let values = vec!["1"; fields].join(",");
        let list = names.join(",");
        c.create(self.dialect, t, &columns, &[])?;
        c.text_write(&format!("insert into {t} values ({values})"))?;
        self.restart();
        for _ in 0..loops {
            c.text_read(&format!("select * from {t}"))?;
        }
        self.lap(0); // select_many_fields
        for _ in 0..loops {
            c.text_read(&format!("select {list} from {t}"))?;
        }
        self.lap(0); // select_many_fields, with the columns named
        for _ in 0..loops {
            c.text_write(&format!("insert into {t} values({values})"))?;
        }
        self.lap(1); // insert_many_fields
        for _ in 0..loops {
            c.text_write(&format!("insert into {t} ({list}) values({values})"))?;
        }
        self.lap(1); // insert_many_fields, with the columns named
        c.sql(&format!("drop table {t}"))?;
        Ok(())
    }
}
