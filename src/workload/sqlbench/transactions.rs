//! test-transactions: inserts, updates and deletes in one transaction and in autocommit, and
//! inserts, updates and deletes rolled back in batches.

use super::{Ctx, SqlBenchClient, ddl};
use crate::db::DbError;

const GROUPS: u64 = 27;

impl SqlBenchClient {
    /// 500,000 rows a test (--small-test: 5,000), rolled back every 10,000 (1,000).
    pub(super) fn transactions(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        let (loops, medium) = if self.small {
            (5_000u64, 1_000u64)
        } else {
            (500_000, 10_000)
        };
        let fields: Vec<String> = [
            "idn int NOT NULL",
            "rev_idn int NOT NULL",
            "region char(1) NOT NULL",
            "grp int NOT NULL",
            "updated tinyint NOT NULL",
        ]
        .map(String::from)
        .to_vec();
        let keys = vec![
            "primary key (idn)".to_string(),
            "unique (region,grp)".into(),
        ];
        let (b1, b2) = ("sqlbench_bench1", "sqlbench_bench2");
        c.create(self.dialect, b1, &fields, &keys)?;
        c.create(self.dialect, b2, &fields, &keys)?;
        self.restart();
        // The row of id: its reverse id, its region letter, its group as Perl prints id / 27.
        let row = |t: &str, id: u64, rev: u64| {
            let region = char::from(b'A' + (id % GROUPS) as u8);
            let grp = ddl::perl_number(id as f64 / GROUPS as f64);
            format!("insert into {t} values ({id},{rev},'{region}',{grp},0)")
        };
        for (i, (t, autocommit)) in [(b1, false), (b2, true)].into_iter().enumerate() {
            if !autocommit {
                c.conn.begin(true)?;
            }
            for id in 0..loops {
                c.text_write(&row(t, id, loops - 1 - id))?;
            }
            if !autocommit {
                c.conn.commit()?;
            }
            self.lap(i); // insert_commit, insert_autocommit
        }
        // Rolled back every `medium` statements, and at the end when a batch is open.
        let rolled_back = |c: &mut Ctx, sql: &dyn Fn(u64) -> String, ids: std::ops::Range<u64>| {
            c.conn.begin(true)?;
            let mut in_batch = 1;
            for id in ids {
                c.text_write(&sql(id))?;
                if in_batch >= medium {
                    c.conn.rollback()?;
                    c.conn.begin(true)?;
                    in_batch = 0;
                }
                in_batch += 1;
            }
            c.conn.rollback()
        };
        let end = 2 * loops;
        rolled_back(c, &|id| row(b1, id, end - id), loops..end)?;
        self.lap(2); // insert_rollback
        rolled_back(
            c,
            &|id| format!("update {b1} set updated=2 where idn={id}"),
            0..loops,
        )?;
        self.lap(3); // update_rollback
        rolled_back(
            c,
            &|id| format!("delete from {b1} where idn={id}"),
            0..loops,
        )?;
        self.lap(4); // delete_rollback
        for (i, (t, autocommit)) in [(b1, false), (b2, true)].into_iter().enumerate() {
            if !autocommit {
                c.conn.begin(true)?;
            }
            for id in 0..loops {
                c.text_write(&format!("update {t} set updated=1 where idn={id}"))?;
            }
            if !autocommit {
                c.conn.commit()?;
            }
            self.lap(5 + i); // update_commit, update_autocommit
        }
        for (i, (t, autocommit)) in [(b1, false), (b2, true)].into_iter().enumerate() {
            if !autocommit {
                c.conn.begin(true)?;
            }
            for id in 0..loops {
                c.text_write(&format!("delete from {t} where idn={id}"))?;
            }
            if !autocommit {
                c.conn.commit()?;
            }
            self.lap(7 + i); // delete_commit, delete_autocommit
        }
        c.sql(&format!("drop table {b1}"))?;
        c.sql(&format!("drop table {b2}"))?;
        Ok(())
    }
}
