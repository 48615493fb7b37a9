//! test-select: selects on keys of many parts: cached and uncached sums, big selects, ranges of
//! many ORs, MIN/MAX and COUNT on keys, GROUP BY and COUNT(DISTINCT).

use super::{Ctx, SqlBenchClient};
use crate::db::DbError;

const REGIONS: u64 = 6;

/// The letter of region `i` (A, B, ...).
fn region(i: u64) -> char {
    char::from(b'A' + i as u8)
}

impl SqlBenchClient {
    /// Rows 10,000, the medium loops 7,000, the small ones 10, 100 groups (--small-test: a
    /// tenth of each); the ranges of 500 conditions.
    pub(super) fn select_original(&mut self, c: &mut Ctx) -> Result<(), DbError> {
        let t = "sqlbench_bench1";
        let (loops, medium, small_loops, groups) = if self.small {
            (1_000u64, 700u64, 1u64, 10u64)
        } else {
            (10_000, 7_000, 10, 100)
        };
        let columns = 500u64;
        let fields: Vec<String> = [
            "region char(1) NOT NULL",
            "idn integer(6) NOT NULL",
            "rev_idn integer(6) NOT NULL",
            "grp integer(6) NOT NULL",
            "grp_no_key integer(6) NOT NULL",
        ]
        .map(String::from)
        .to_vec();
        let keys: Vec<String> = [
            "primary key (region,idn)",
            "unique (region,rev_idn)",
            "unique (region,grp,idn)",
        ]
        .map(String::from)
        .to_vec();
        c.create(self.dialect, t, &fields, &keys)?;
        self.restart();
        // Half the rows by VALUES alone, the rest with the columns named.
        let mut head = format!("insert into {t} values (");
        let half = loops / 2;
        for id in 0..loops {
            let grp = id * 3 % groups;
            let r = region(id % REGIONS);
            c.text_write(&format!("{head}'{r}',{id},{},{grp},{grp})", loops - 1 - id))?;
            if id == half {
                head = format!("insert into {t} (region,idn,rev_idn,grp,grp_no_key) values (");
            }
        }
        self.lap(0); // insert
        // The table read once into memory first.
        c.text_read(&format!("select sum(idn+1000),sum(rev_idn-1000) from {t}"))?;
        self.restart();
        for _ in 0..loops {
            c.text_read(&format!("select sum(idn+100),sum(rev_idn-100) from {t}"))?;
        }
        self.lap(1); // select_cache
        for i in 0..loops {
            c.text_read(&format!("select sum(idn+{i}),sum(rev_idn-{i}) from {t}"))?;
        }
        self.lap(2); // select_cache2
        for i in 0..small_loops {
            let grp = i * 11 % groups;
            // One region past the last: misses.
            let r = region(i % (REGIONS + 1));
            for sql in [
                format!("select idn from {t} where region='{r}'"),
                format!("select idn from {t} where region='{r}' and idn={i}"),
                format!("select idn from {t} where region='{r}' and rev_idn={i}"),
                format!("select idn from {t} where region='{r}' and grp={grp}"),
                format!("select idn from {t} where region>='B' and region<='C' and grp={grp}"),
                format!("select idn from {t} where region>='B' and region<='E' and grp={grp}"),
                format!("select idn from {t} where grp={grp}"),
            ] {
                c.text_read(&sql)?;
            }
        }
        self.lap(3); // select_big
        select_ranges(c, t, small_loops, columns, groups)?;
        self.lap(4); // select_range
        min_max_on_key(c, t, loops, groups)?;
        self.lap(5); // min_max_on_key
        count_on_key(c, t, loops, groups)?;
        self.lap(6); // count_on_key
        let medium_tests = [
            format!("select grp,count(*) from {t} group by grp"),
            format!("select grp_no_key,count(*) from {t} group by grp_no_key"),
            format!("select grp_no_key,count(*) as cnt from {t} group by grp_no_key order by cnt"),
            format!("select count(distinct region) from {t}"),
            format!("select count(distinct grp) from {t}"),
            format!("select count(distinct grp),count(distinct rev_idn) from {t}"),
            format!("select region,count(distinct idn) from {t} group by region"),
            format!("select grp,count(distinct idn) from {t} group by grp"),
            format!("select grp,count(distinct rev_idn) from {t} group by grp"),
        ];
        for (k, sql) in medium_tests.iter().enumerate() {
            for _ in 0..medium {
                c.text_read(sql)?;
            }
            // count_group_on_key_parts, count_group, count_group_with_order,
            // count_distinct_key_prefix, count_distinct, count_distinct_2,
            // count_distinct_group_on_key, count_distinct_group_on_key_parts,
            // count_distinct_group
            self.lap(7 + k);
        }
        for _ in 0..medium / 10 {
            c.text_read(&format!(
                "select idn,count(distinct region) from {t} group by idn"
            ))?;
        }
        self.lap(16); // count_distinct_big
        c.sql(&format!("drop table {t}"))?;
        Ok(())
    }
}

/// select_range: ranges of `columns` ORs on the groups, their IN form, and both with more
/// conditions.
fn select_ranges(
    c: &mut Ctx,
    t: &str,
    small_loops: u64,
    columns: u64,
    groups: u64,
) -> Result<(), DbError> {
    let mut tmpvar: u64 = 0;
    let query = format!("select * from {t} where ");
    for i in 0..small_loops {
        let r = region(i % (REGIONS + 1));
        let mut or_part = "grp = 1".to_string();
        let mut or_part2 = "region='A' and grp=1".to_string();
        for j in 1..columns {
            tmpvar ^= ((tmpvar + 63) + j) * 3 % 100_000;
            let tmp = tmpvar % groups;
            let tmp_region = region(tmpvar % REGIONS);
            or_part.push_str(&format!(" or grp={tmp}"));
            or_part2.push_str(&format!(" or region='{tmp_region}' and grp={tmp}"));
        }
        let or_part = format!("region='{r}' and ({or_part})");
        // The same as an IN list.
        let in_part = format!(
            "{})",
            or_part.replacen(" = ", " IN (", 1).replace(" or grp=", ",")
        );
        c.text_read(&format!("{query}{in_part}"))?;
        for _ in 0..10 {
            c.text_read(&format!("{query}{or_part}"))?;
            c.text_read(&format!("{query}{or_part2}"))?;
            c.text_read(&format!("{query} ({or_part}) and idn < 50"))?;
            c.text_read(&format!(
                "{query} (({or_part}) or (region='A' and grp < 10)) and region <='B'"
            ))?;
        }
    }
    Ok(())
}

/// min_max_on_key: MIN and MAX on the keys' parts.
fn min_max_on_key(c: &mut Ctx, t: &str, loops: u64, groups: u64) -> Result<(), DbError> {
    for i in 0..loops {
        let grp = i * 3 % groups;
        let r = region(i % REGIONS);
        for sql in [
            format!("select min(region) from {t}"),
            format!("select max(region) from {t}"),
            format!("select min(region),max(region) from {t}"),
            format!("select min(rev_idn) from {t} where region='{r}'"),
            format!("select max(grp) from {t} where region='{r}'"),
            format!("select max(idn) from {t} where region='{r}' and grp={grp}"),
            format!("select max(region) from {t} where region<'{r}'"),
        ] {
            c.text_read(&sql)?;
        }
    }
    Ok(())
}

/// count_on_key: COUNT(*) on the keys' parts.
fn count_on_key(c: &mut Ctx, t: &str, loops: u64, groups: u64) -> Result<(), DbError> {
    for i in 0..loops {
        let grp = i * 3 % groups;
        let r = region(i % REGIONS);
        for sql in [
            format!("select count(*) from {t} where region='{r}'"),
            format!("select count(*) from {t} where region='{r}' and grp={grp}"),
            format!("select count(*) from {t} where region>'{r}'"),
            format!("select count(*) from {t} where region<='{r}'"),
            format!("select count(*) from {t} where region='{r}' and grp>{grp}"),
        ] {
            c.text_read(&sql)?;
        }
    }
    Ok(())
}
