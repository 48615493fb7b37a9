//! test-connect: connecting, and sending small results and a big one.

use super::{Ctx, SqlBenchClient, not_interrupted};
use crate::db::{DbError, QueryCounts};

impl SqlBenchClient {
    /// The original's loop count (500,000; --small-test: 5,000), a tenth of it for the tests
    /// that connect; the big record is 65,000 bytes (the servers' limits allow it).
    pub(super) fn connect(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        let loops = if self.small { 5_000 } else { 500_000 };
        let small_loops = loops / 10;
        let t = "sqlbench_bench1";
        for _ in 0..small_loops {
            not_interrupted()?;
            drop(self.target.connect()?);
        }
        self.lap(0); // connect
        for i in 0..small_loops {
            self.connect_and_read(c, &format!("select {i}"))?;
        }
        self.lap(1); // connect+select_simple
        for i in 0..loops {
            c.text_read(&format!("select {i}"))?;
        }
        self.lap(2); // select_simple
        for _ in 0..loops {
            c.text_read("select 10000")?;
        }
        self.lap(3); // select_simple_cache
        let fields = ["a int NOT NULL".into(), "i int".into(), "s char(10)".into()];
        c.create(self.dialect, t, &fields, &["primary key (a)".into()])?;
        c.text_write(&format!("insert into {t} values(1,100,'AAA')"))?;
        self.restart();
        for i in 0..small_loops {
            self.connect_and_read(c, &format!("select a,i,s,{i} from {t}"))?;
        }
        self.lap(4); // connect+select_1_row
        for i in 0..loops {
            c.text_read(&format!("select a,i,s,{i} from {t}"))?;
        }
        self.lap(5); // select_1_row
        for _ in 0..loops {
            c.text_read(&format!("select a,i,s from {t}"))?;
        }
        self.lap(6); // select_1_row_cache
        c.text_write(&format!("insert into {t} values(2,200,'BBB')"))?;
        self.restart();
        for i in 0..loops {
            c.text_read(&format!("select a,i,s,{i} from {t}"))?;
        }
        self.lap(7); // select_2_rows
        for i in 0..loops {
            c.text_read(&format!("select a+a+a+a+a+a+a+a+a+{i} from {t}"))?;
        }
        self.lap(8); // select_column+column
        c.sql(&format!("drop table {t}"))?;
        c.create(self.dialect, t, &["b blob".into()], &[])?;
        // The original binds the string to a placeholder, which DBD::mysql sends as a literal.
        c.text_write(&format!("insert into {t} values('{}')", "A".repeat(65_000)))?;
        self.restart();
        for i in 0..small_loops {
            c.text_read(&format!("select b,{i} from {t}"))?;
        }
        self.lap(9); // select_big_str
        c.sql(&format!("drop table {t}"))?;
        Ok(())
    }

    /// One of the tests that connect: a new connection, `sql` on it, the connection closed.
    fn connect_and_read(&self, c: &mut Ctx, sql: &str) -> Result<(), DbError> {
        not_interrupted()?;
        let mut conn = self.target.connect()?;
        let mut q = QueryCounts::default();
        Ctx {
            conn: conn.as_mut(),
            q: &mut q,
        }
        .text_read(sql)?;
        c.q.reads += q.reads;
        Ok(())
    }
}
