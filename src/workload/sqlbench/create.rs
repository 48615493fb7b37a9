//! test-create: many tables made, read and dropped; tables made and dropped at once, plain
//! and with 16 keys.

use super::{Ctx, SqlBenchClient};
use crate::db::DbError;

/// The tables of the many-tables tests (the original's 400; --small-test: 10), and of the
/// create+drop loops (its 10,000; --small-test: 10).
pub(super) fn counts(small: bool) -> (u64, u64) {
    if small { (10, 10) } else { (400, 10_000) }
}

pub(super) fn table(i: u64) -> String {
    format!("sqlbench_bench_{i}")
}

impl SqlBenchClient {
    pub(super) fn create(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        let (max_tables, create_loops) = counts(self.small);
        let fields: Vec<String> = [
            "i int NOT NULL",
            "d double",
            "f float",
            "s char(10)",
            "v varchar(100)",
        ]
        .map(String::from)
        .to_vec();
        let keys = vec!["primary key (i)".to_string()];
        for i in 1..=max_tables {
            c.create(self.dialect, &table(i), &fields, &keys)?;
        }
        self.lap(0); // create_MANY_tables
        for i in 1..=max_tables {
            c.text_read(&format!("select count(*) from  {}", table(i)))?;
        }
        self.lap(1); // select_group_when_MANY_tables
        for i in 1..=max_tables {
            c.sql(&format!("drop table {}", table(i)))?;
        }
        self.lap(2); // drop_table_when_MANY_tables
        for i in 1..=create_loops {
            c.create(self.dialect, &table(i), &fields, &keys)?;
            c.sql(&format!("drop table {}", table(i)))?;
        }
        self.lap(3); // create+drop
        // 16 fields of the important types, a primary key of all 16, an index on each but
        // the first.
        let mut fields: Vec<String> = [
            "field1 tinyint not null",
            "field2 mediumint not null",
            "field3 smallint not null",
            "field4 char(16) not null",
            "field5 integer not null",
            "field6 float not null",
            "field7 double not null",
        ]
        .map(String::from)
        .to_vec();
        fields.extend((8..=16).map(|i| format!("field{i} char(5) not null")));
        let all: Vec<String> = (1..=16).map(|i| format!("field{i}")).collect();
        let mut keys = vec![format!("primary key ({})", all.join(","))];
        keys.extend((2..=16).map(|i| format!("index index{i} (field{i})")));
        for i in 1..=create_loops {
            c.create(self.dialect, &table(i), &fields, &keys)?;
            c.sql(&format!("drop table {}", table(i)))?;
        }
        self.lap(4); // create_key+drop
        Ok(())
    }
}
