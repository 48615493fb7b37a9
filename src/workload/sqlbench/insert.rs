//! test-insert: a table of 300,000 rows inserted in key order, reverse order and random order,
//! then read by key, by ranges, sorted, grouped and joined, updated and deleted; a table of
//! 16 keys filled, updated and emptied; a multi-row insert.

use super::{Ctx, SqlBenchClient, not_interrupted};
use crate::db::{DbError, Dialect, Param};

/// The original's counts: rows/3 (`$opt_loop_count`), the whole-table loops, the range loops,
/// the many-keys rows and the key reads; --small-test's.
struct Counts {
    loops: u64,
    small_loops: u64,
    range_loops: u64,
    many_keys: u64,
    read_keys: u64,
}

fn counts(small: bool) -> Counts {
    if small {
        Counts {
            loops: 1_000,
            small_loops: 10,
            range_loops: 10,
            many_keys: 100,
            read_keys: 10,
        }
    } else {
        Counts {
            loops: 100_000,
            small_loops: 10,
            range_loops: 500,
            many_keys: 100_000,
            read_keys: 100_000,
        }
    }
}

/// The largest statement the multi-row insert builds (server-cfg's MySQL `query_size`; the
/// same for every server, as the script says).
const QUERY_SIZE: usize = 1_000_000;

/// The simple ranges of `check_select_range` and the rows each finds (`!id!` is the column).
fn ranges(total: u64, loops: u64) -> Vec<(String, u64)> {
    let half = loops / 2;
    [
        ("!id!=3 or !id!=2 or !id!=1 or !id!=4 or !id!=16 or !id!=10".to_string(), 6),
        (format!("!id!>={} or !id!<1", total - 1), 2),
        ("!id!>=1 and !id!<=2".into(), 2),
        ("(!id!>=1 and !id!<=2) or (!id!>=1 and !id!<=2)".into(), 2),
        ("!id!>=1 and !id!<=10 and !id!<=5".into(), 5),
        (format!("(!id!>0 and !id!<2) or !id!>={}", total - 1), 2),
        (
            format!(
                "(!id!>0 and !id!<2) or (!id!>= {half} and !id! <= {}) or !id! = {}",
                half + 2,
                half - 1
            ),
            5,
        ),
        ("(!id!>=5 and !id!<=10) or (!id!>=1 and !id!<=4)".into(), 10),
        ("(!id!=1 or !id!=2) and (!id!=3 or !id!=4)".into(), 0),
        ("(!id!=1 or !id!=2) and (!id!=2 or !id!=3)".into(), 1),
        (
            "(!id!=1 or !id!=5 or !id!=20 or !id!=40) and (!id!=1 or !id!>=20 or !id!=4)".into(),
            3,
        ),
        ("((!id!=1 or !id!=3) or (!id!>1 and !id!<3)) and !id!<=2".into(), 2),
        ("(!id! >= 0 and !id! < 4) or (!id! >=4 and !id! < 6)".into(), 6),
        (
            "!id! <= -1 or (!id! >= 0 and !id! <= 5) or (!id! >=4 and !id! < 6) or (!id! >=6 and !id! <=7) or (!id!>7 and !id! <= 8)".into(),
            9,
        ),
        ("(!id!>=1 and !id!<=2 or !id!>=4 and !id!<=5) or (!id!>=0 and !id! <=10)".into(), 11),
        ("(!id!>=1 and !id!<=2 or !id!>=4 and !id!<=5) or (!id!>2 and !id! <=10)".into(), 10),
        ("(!id!>1 or !id! <1) and !id!<=2".into(), 2),
        ("!id! <= 2 and (!id!>1 or !id! <=1)".into(), 3),
        ("(!id!>=1 or !id! <1) and !id!<=2".into(), 3),
        ("(!id!>=1 or !id! <=2) and !id!<=2".into(), 3),
    ]
    .into_iter()
    .map(|(q, n)| (format!("select * from sqlbench_bench1 where {q}"), n))
    .collect()
}

/// The script's running pseudo-random value (`$tmpvar`), stepped as it steps it.
struct TmpVar(u64);

impl TmpVar {
    fn step(&mut self, i: u64, modulo: u64) -> u64 {
        self.0 ^= ((self.0 + 63) + i) * 3 % modulo;
        self.0
    }
}

/// The script's tables.
const TABLES: (&str, &str, &str) = ("sqlbench_bench1", "sqlbench_bench2", "sqlbench_bench3");

/// The columns of the script's tables of four.
fn row4() -> Vec<String> {
    [
        "id int NOT NULL",
        "id2 int NOT NULL",
        "id3 int NOT NULL",
        "dummy1 char(30)",
    ]
    .map(String::from)
    .to_vec()
}

/// What the script's sections share: its counts, its random keys and its key generator's state
/// (each section steps it on where the one before left it, as the script does).
struct InsertRun {
    loops: u64,
    small_loops: u64,
    range_loops: u64,
    many_keys: u64,
    read_keys: u64,
    total: u64,
    random: Vec<u64>,
    tmpvar: TmpVar,
}

/// A wrong result, as the original's `die`.
fn wrong(what: String) -> DbError {
    DbError::new(crate::db::ErrorClass::Fatal, "", what)
}

impl SqlBenchClient {
    pub(super) fn insert_original(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        let Counts {
            loops,
            small_loops,
            range_loops,
            many_keys,
            read_keys,
        } = counts(self.small);
        let range_loops = range_loops.min(loops);
        let total = loops * 3;
        // The random keys: loops..2*loops shuffled by the script's own steps, and one more
        // element, 0.
        let mut random: Vec<u64> = (0..loops).map(|i| i + loops).collect();
        random.push(0);
        let mut tmpvar = TmpVar(1);
        for i in 0..loops {
            let swap = (tmpvar.step(i, loops) % loops) as usize;
            random.swap(i as usize, swap);
        }
        let mut run = InsertRun {
            loops,
            small_loops,
            range_loops,
            many_keys,
            read_keys,
            total,
            random,
            tmpvar,
        };
        self.insert_load(c, &mut run)?;
        self.insert_orders(c, &mut run)?;
        self.insert_keys_and_groups(c, &mut run)?;
        self.insert_updates(c, &mut run)?;
        self.insert_joins(c, &mut run)?;
        self.insert_deletes_and_many_keys(c, &mut run)?;
        Ok(())
    }

    /// The table made and its rows inserted three ways; duplicates refused; selects by key,
    /// prepared each time and once.
    fn insert_load(&mut self, c: &mut Ctx, run: &mut InsertRun) -> Result<(), DbError> {
        let (t, _, _) = TABLES;
        let (loops, total) = (run.loops, run.total);
        let random = &run.random;
        c.create(
            self.dialect,
            t,
            &row4(),
            &["primary key (id,id2)".into(), "index ix_id3 (id3)".into()],
        )?;
        self.restart();
        let query = format!("insert into {t} (id,id2,id3,dummy1) values ");
        for i in 0..loops {
            c.text_write(&format!("{query}({i},{i},{i},'ABCDEFGHIJ')"))?;
        }
        for i in 0..loops {
            let v = total - 1 - i;
            c.text_write(&format!("{query}({v},{v},{v},'BCDEFGHIJK')"))?;
        }
        for &v in &random[..loops as usize] {
            c.text_write(&format!("{query}({v},{v},{v},'CDEFGHIJKL')"))?;
        }
        self.lap(0); // insert
        for i in 0..loops {
            let tmp = run.tmpvar.step(i, loops) % total;
            not_interrupted()?;
            if c.conn
                .simple(&format!("{query} ({tmp},{tmp},2,'D')"), &mut |_| {})
                .is_ok()
            {
                return Err(wrong(format!(
                    "no error inserting the duplicate record {tmp}"
                )));
            }
            c.q.others += 1;
        }
        self.lap(1); // insert_duplicates
        // Prepared each time (a text statement: what DBD::mysql sends for it), and once.
        for r in &random[1..=loops as usize] {
            c.text_read(&format!("select * from {t} where id={r}"))?;
        }
        self.lap(2); // prepared_select
        let once = c.prepare(&format!("select * from {t} where id=?"))?;
        for &r in &random[1..=loops as usize] {
            c.read(once, &[Param::Int(r as i64)])?;
        }
        self.lap(3); // once_prepared_select
        Ok(())
    }

    /// Big selects, orderings and ranges, the ORs of `check_or_range`, selects by key (a found
    /// and an impossible id).
    fn insert_orders(&mut self, c: &mut Ctx, run: &mut InsertRun) -> Result<(), DbError> {
        let (t, _, _) = TABLES;
        let (loops, small_loops, range_loops, read_keys, total) = (
            run.loops,
            run.small_loops,
            run.range_loops,
            run.read_keys,
            run.total,
        );
        let random = &run.random;
        for (k, sql) in [
            format!("select id from {t}"),
            format!("select id,id2 from {t} order by id,id2"),
            format!("select id,id2 from {t} order by id desc, id2 desc"),
            format!("select id from {t} order by id desc"),
            format!("select id3 from {t} order by id3"),
            format!("select id2 from {t} order by id3"),
            format!("select id from {t} order by id2,id3"),
        ]
        .iter()
        .enumerate()
        {
            for _ in 0..small_loops {
                c.text_read(sql)?;
            }
            // select_big, order_by_big_key, order_by_big_key_desc, order_by_big_key_prefix,
            // order_by_big_key2, order_by_big_key_diff, order_by_big
            self.lap(4 + k);
        }
        let per = loops / range_loops;
        for i in 1..=range_loops {
            let start = per * i;
            c.text_read(&format!(
                "select dummy1 from {t} where id>={start} and id <= {} order by id3",
                start + i
            ))?;
        }
        self.lap(11); // order_by_range
        for i in 1..=range_loops {
            let start = per * i;
            c.text_read(&format!(
                "select dummy1 from {t} where id>={start} and id <= {} order by id",
                start + i
            ))?;
        }
        self.lap(12); // order_by_key_prefix
        for i in 1..=range_loops {
            let start = per * i;
            c.text_read(&format!(
                "select id2 from {t} where id3>={start} and id3 <= {} order by id3",
                start + range_loops
            ))?;
        }
        self.lap(13); // order_by_key2_diff
        for i in 1..=range_loops {
            c.text_read(&format!(
                "select id2 from {t} where id={i} or id3={}",
                random[i as usize]
            ))?;
        }
        self.lap(14); // select_diff_key
        for (k, column) in ["id", "id3"].into_iter().enumerate() {
            self.or_range(c, &mut run.tmpvar, column, range_loops, loops)?;
            self.lap(15 + k); // select_range_prefix, select_range_key2
        }
        for (k, (columns, key, key2)) in [
            ("*", "id", None),
            ("*", "id", Some("id2")),
            ("id,id2", "id", Some("id2")),
            ("*", "id3", None),
            ("id3", "id3", None),
            ("id,id2", "id3", None),
        ]
        .into_iter()
        .enumerate()
        {
            for i in 1..=read_keys {
                let tmp = run.tmpvar.step(i, loops) % total;
                for v in [tmp, tmp + total] {
                    let cond = match key2 {
                        Some(k2) => format!("{key}={v} and {k2}={v}"),
                        None => format!("{key}={v}"),
                    };
                    let rows = c.text_read(&format!("select {columns} from {t} where {cond}"))?;
                    if v >= total && rows > 0 {
                        return Err(wrong(format!("found {rows} rows on impossible id {v}")));
                    }
                }
            }
            // select_key_prefix, select_key, select_key_return_key, select_key2,
            // select_key2_return_key, select_key2_return_prim
            self.lap(17 + k);
        }
        Ok(())
    }

    /// The checked ranges, groups, MIN/MAX and counts.
    fn insert_keys_and_groups(&mut self, c: &mut Ctx, run: &mut InsertRun) -> Result<(), DbError> {
        let (t, _, _) = TABLES;
        let (loops, small_loops, range_loops, total) =
            (run.loops, run.small_loops, run.range_loops, run.total);
        for (k, column) in ["id", "id3"].into_iter().enumerate() {
            for _ in 0..range_loops {
                for (q, rows) in ranges(total, loops) {
                    let sql = q.replace("!id!", column);
                    let found = c.text_read(&sql)?;
                    if found != rows {
                        return Err(wrong(format!(
                            "'{sql}' returned {found} rows instead of {rows}"
                        )));
                    }
                }
            }
            self.lap(15 + k); // select_range_prefix, select_range_key2 (again)
        }
        let mut count = 1;
        for _ in 0..small_loops {
            c.text_read(&format!("select count(*) from {t}"))?;
            count += 7;
            for sql in [
                format!("select min(id) from {t}"),
                format!("select max(id) from {t}"),
                format!("select sum(id+0.0) from {t}"),
                format!("select min(id3),max(id3),sum(id3-0.0) from {t}"),
                format!("select min(dummy1),max(dummy1) from {t}"),
                format!("select count(*) from {t} where id >= {}", loops * 2),
                format!("select count(*),sum(id+0.0),min(id),max(id),avg(id-0.0) from {t}"),
                format!("select id % 10,count(*) from {t} group by 1"),
            ] {
                c.text_read(&sql)?;
            }
            count += 4;
            c.text_read(&format!(
                "select id,id3,dummy1 from {t} where id < 100+{count}-{count} group by id,id3,dummy1 order by id desc,id3,dummy1"
            ))?;
        }
        self.lap(23); // select_group
        for i in 1..=range_loops * 5 {
            for sql in [
                format!("select min(id) from {t}"),
                format!("select max(id) from {t}"),
                format!("select min(id2) from {t} where id={i}"),
                format!("select max(id2) from {t} where id={i}"),
                format!("select min(dummy1) from {t} where id={i}"),
                format!("select max(dummy1) from {t} where id={i}"),
            ] {
                c.text_read(&sql)?;
            }
        }
        self.lap(24); // min_max_on_key
        for i in 1..=small_loops {
            for sql in [
                format!("select min(id2) from {t}"),
                format!("select max(id2) from {t}"),
                format!("select min(id3) from {t} where id2={i}"),
                format!("select max(id3) from {t} where id2={i}"),
                format!("select min(dummy1) from {t} where id2={i}"),
                format!("select max(dummy1) from {t} where id2={i}"),
            ] {
                c.text_read(&sql)?;
            }
        }
        self.lap(25); // min_max
        for (k, sql) in [
            "select count(id) from sqlbench_bench1 where id < ",
            "select count(dummy1) from sqlbench_bench1 where id2 < ",
        ]
        .into_iter()
        .enumerate()
        {
            let mut v = 0;
            while v < total {
                c.text_read(&format!("{sql}{v}"))?;
                v += total / 100;
            }
            self.lap(26 + k); // count_on_key, count
        }
        for _ in 0..small_loops {
            c.text_read(&format!("select count(distinct dummy1) from {t}"))?;
            c.text_read(&format!(
                "select dummy1,count(distinct id) from {t} group by dummy1"
            ))?;
        }
        self.lap(28); // count_distinct_big
        Ok(())
    }

    /// Updates of a key, of many rows, by key and by key prefix, and of the whole table.
    fn insert_updates(&mut self, c: &mut Ctx, run: &mut InsertRun) -> Result<(), DbError> {
        let (t, _, _) = TABLES;
        let (loops, small_loops, range_loops, total) =
            (run.loops, run.small_loops, run.range_loops, run.total);
        let random = &run.random;
        for &r in &random[..(loops / 2) as usize] {
            let tmp = loops + r;
            c.text_write(&format!("update {t} set id3=-{tmp} where id3={tmp}"))?;
        }
        self.lap(29); // update_of_key
        let step = loops / range_loops + 1;
        let mut i = 0;
        while i < loops {
            c.text_write(&format!(
                "update {t} set id3= 0-id3 where id3 >= 0 and id3 <= {i}"
            ))?;
            i += step;
        }
        c.text_write(&format!(
            "update {t} set id3= 0-id3 where id3 >= 0 and id3 < {loops}"
        ))?;
        c.text_write(&format!(
            "update {t} set id3= 0-id3 where id3 >= {loops} and id3 < {}",
            loops * 2
        ))?;
        c.text_read(&format!("select count(*) from {t} where id3>=0"))?;
        // SQLite (which sql-bench never knew) has no floor() in this build: its integer
        // division gives the same values here, where 0-id3 is positive.
        let restore = if self.dialect == Dialect::Sqlite {
            "(0-id3)/20"
        } else {
            "floor((0-id3)/20)"
        };
        c.text_write(&format!("update {t} set id3={restore} where id3<0"))?;
        self.lap(30); // update_of_key_big
        for k in 0..2 {
            for i in 0..total {
                c.text_write(&format!(
                    "update {t} set dummy1='updated' where id={i} and id2={i}"
                ))?;
            }
            self.lap(31 + k); // update_with_key, update_with_key_record_unchanged
        }
        let mut i = 1;
        while i < total {
            c.text_write(&format!(
                "update {t} set dummy1='really updated' where id={i}"
            ))?;
            i += 3;
        }
        self.lap(33); // update_with_key_prefix
        for i in 0..small_loops {
            c.text_write(&format!("update {t} set dummy1='updated {i}'"))?;
        }
        self.lap(34); // update_big
        Ok(())
    }

    /// Outer joins, IN lists against a second table, INSERT ... SELECT into two more.
    fn insert_joins(&mut self, c: &mut Ctx, run: &mut InsertRun) -> Result<(), DbError> {
        let (t, t2, t3) = TABLES;
        let (loops, small_loops, range_loops) = (run.loops, run.small_loops, run.range_loops);
        let join = format!("from {t} as a left outer join {t} as b on (a.id2=b.id3)");
        for (k, sql) in [
            format!("select count(*) {join}"),
            format!("select count(a.dummy1),count(b.dummy1) {join}"),
            format!("select count(a.dummy1),count(b.dummy1) {join} where b.id3 is not null"),
            format!("select count(a.dummy1),count(b.dummy1) {join} where b.id3 is null"),
        ]
        .iter()
        .enumerate()
        {
            for _ in 0..small_loops {
                c.text_read(sql)?;
            }
            // outer_join_on_key, outer_join, outer_join_found, outer_join_not_found
            self.lap(35 + k);
        }
        c.create(
            self.dialect,
            t2,
            &["id int NOT NULL".into()],
            &["primary key (id)".into()],
        )?;
        self.restart();
        for (from, to) in [(1, 10), (11, 100.min(loops)), (101, 1000.min(loops))] {
            if from >= to {
                continue;
            }
            let ids: Vec<String> = (1..=to).map(|i| i.to_string()).collect();
            for i in from..=to {
                c.text_write(&format!("insert into {t2} values({i})"))?;
            }
            self.restart();
            for _ in 0..range_loops {
                c.text_read(&format!(
                    "SELECT {t}.* FROM {t} WHERE id IN ({})",
                    ids.join(",")
                ))?;
            }
            self.lap(39); // select_in
            for _ in 0..range_loops {
                c.text_read(&format!(
                    "SELECT {t}.* FROM {t2} left outer join {t} on ({t}.id={t2}.id)"
                ))?;
            }
            self.lap(40); // select_join_in
        }
        c.sql(&format!("DROP TABLE {t2}"))?;
        c.create(self.dialect, t2, &row4(), &["primary key (id,id2)".into()])?;
        c.create(
            self.dialect,
            t3,
            &row4(),
            &[
                "primary key (id,id2)".into(),
                "index index_id3 (id3)".into(),
            ],
        )?;
        self.restart();
        c.text_write(&format!("INSERT INTO {t2} SELECT * from {t}"))?;
        self.lap(41); // insert_select_1_key
        c.text_write(&format!("INSERT INTO {t3} SELECT * from {t}"))?;
        self.lap(42); // insert_select_2_keys
        c.sql(&format!("DROP TABLE {t2}"))?;
        c.sql(&format!("DROP TABLE {t3}"))?;
        self.lap(43); // drop table
        Ok(())
    }

    /// Deletes by key and range; the table of 16 keys; the insert of many values a statement.
    fn insert_deletes_and_many_keys(
        &mut self,
        c: &mut Ctx,
        run: &mut InsertRun,
    ) -> Result<(), DbError> {
        let (t, _, _) = TABLES;
        let (loops, many_keys, total) = (run.loops, run.many_keys, run.total);
        let random = &run.random;
        let mut i = 0;
        while i < loops {
            let tmp = loops + random[i as usize];
            c.text_write(&format!("delete from {t} where id3={tmp}"))?;
            i += 10;
        }
        self.lap(44); // delete_key
        let mut i = 0;
        while i < loops {
            c.text_write(&format!("delete from {t} where id3 >= 0 and id3 <= {i}"))?;
            i += loops / 10;
        }
        c.text_write(&format!(
            "delete from {t} where id3 >= 0 and id3 <= {loops}"
        ))?;
        c.text_write(&format!(
            "delete from {t} where id >= {loops} and id <= {}",
            loops * 2
        ))?;
        c.text_write(&format!("delete from {t} where id3 < {total}"))?;
        self.lap(45); // delete_range
        c.sql(&format!("drop table {t}"))?;
        // A table of 16 keys, a primary key of 16 parts.
        let mut fields: Vec<String> = [
            "field1 tinyint not null",
            "field_search tinyint not null",
            "field2 mediumint not null",
            "field3 smallint not null",
            "field4 char(16) not null",
            "field5 integer not null",
            "field6 float not null",
            "field7 double not null",
        ]
        .map(String::from)
        .to_vec();
        fields.extend((8..=16).map(|i| format!("field{i} char(6) not null")));
        let parts: Vec<String> = (1..=16).map(|i| format!("field{i}")).collect();
        let mut keys = vec![
            format!("primary key ({})", parts.join(",")),
            "index index2 (field_search)".to_string(),
        ];
        keys.extend((3..=16).map(|i| format!("index index{i} (field{i})")));
        c.create(self.dialect, t, &fields, &keys)?;
        self.restart();
        for i in 0..many_keys {
            let id = i & 127;
            let r = random[i as usize];
            let chars = vec![format!("'{r}'"); 9].join(",");
            c.text_write(&format!(
                "insert into {t} values ({id},{id},{r},{},'ABCDEF{r}',0,{r},{r}.0,{chars})",
                i & 32767
            ))?;
        }
        self.lap(46); // insert_key
        for i in 0..256 {
            c.text_write(&format!("update {t} set field5=1 where field_search={i}"))?;
        }
        self.lap(47); // update_of_primary_key_many_keys
        let deletes = crate::clock::now();
        for i in 0..128 {
            c.text_write(&format!("delete from {t} where field_search = {i}"))?;
        }
        self.lap(48); // delete_big_many_keys
        c.text_write(&format!("delete from {t} where field1 > 0"))?;
        // The original times this from the deletes' start: its figure holds both.
        self.lap_from(49, deletes); // delete_all_many_keys
        c.sql(&format!("drop table {t}"))?;
        c.create(
            self.dialect,
            t,
            &row4(),
            &[
                "primary key (id,id2)".into(),
                "index index_id3 (id3)".into(),
            ],
        )?;
        self.restart();
        // One statement of many rows, cut where the original cuts it (it measures the next
        // row by its number's length, as the script does).
        let head = format!("insert into {t} values ");
        let mut res = head.clone();
        for i in 0..loops {
            let row = format!("({i},{i},{i},'EFGHIJKLM'),");
            if i.to_string().len() + res.len() < QUERY_SIZE {
                res.push_str(&row);
            } else {
                res.pop();
                c.text_write(&res)?;
                res = format!("{head}{row}");
            }
        }
        res.pop();
        c.text_write(&res)?;
        self.lap(50); // multiple_value_insert
        c.sql(&format!("drop table {t}"))?;
        self.lap(43); // drop table (the original's "drop table (1)", added to "(2)")
        Ok(())
    }

    /// `check_or_range`: selects of up to 48 ORs on `column`, their IN form, and the same
    /// with one more range.
    fn or_range(
        &mut self,
        c: &mut Ctx,
        tmpvar: &mut TmpVar,
        column: &str,
        range_loops: u64,
        loops: u64,
    ) -> Result<(), DbError> {
        let t = "sqlbench_bench1";
        let columns = 48;
        let per = 15;
        let loop_count = range_loops * 10 + per - 1;
        let loop_count = loop_count - loop_count % per;
        let mut count = 0;
        while count < loop_count {
            let mut rowcnt = 0;
            while rowcnt <= columns {
                let mut or_part = format!("{column} = 1");
                count += 2;
                for i in 1..rowcnt {
                    let tmp = tmpvar.step(i, loops) % (loops * 4);
                    or_part.push_str(&format!(" or {column}={tmp}"));
                }
                let query = format!("select * from {t} where ");
                c.text_read(&format!("{query}{or_part}"))?;
                let in_part = format!(
                    "{})",
                    or_part
                        .replacen(" = ", " IN (", 1)
                        .replace(&format!(" or {column}="), ",")
                );
                c.text_read(&format!("{query}{in_part}"))?;
                count += 1;
                c.text_read(&format!("{query}({or_part}) and {column} < 10"))?;
                rowcnt += columns / 4;
            }
        }
        Ok(())
    }
}
