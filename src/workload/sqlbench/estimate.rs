//! How long a group takes, before it runs (`sweep --dry-run`'s schedule and the progress bar):
//! each test's work in units (statements, or statements by rows and columns where the work per
//! statement grows with them) times what a unit cost on the project's kind of machine (2 cores,
//! a virtual disk, the release build; PostgreSQL 15 and MariaDB 10.11 managed with their
//! defaults, embedded SQLite), measured with `--small-test`. A
//! machine of another kind, or a server of other settings, takes its own time: the figure is a
//! guess for the schedule, never a result.

use crate::db::Dialect;

/// Microseconds per unit of each test of each group, in GROUPS' order: SQLite, PostgreSQL,
/// MySQL and MariaDB (0: the test does not run there).
const COSTS: [&[[f64; 3]]; 9] = [
    // connect
    &[
        [33.1, 1670.0, 116.3],  // connect
        [33.46, 1731.0, 168.4], // connect+select_simple
        [0.8491, 29.43, 50.95], // select_simple
        [0.8034, 56.07, 52.05], // select_simple_cache
        [39.73, 1827.0, 150.5], // connect+select_1_row
        [3.596, 46.31, 53.52],  // select_1_row
        [3.41, 61.79, 61.26],   // select_1_row_cache
        [3.757, 62.63, 63.05],  // select_2_rows
        [4.252, 67.14, 63.62],  // select_column+column
        [4.88, 156.0, 74.35],   // select_big_str
    ],
    // create
    &[
        [276.4, 2804.0, 2988.0],     // create_MANY_tables
        [11.78, 126.1, 81.02],       // select_group_when_MANY_tables
        [245.9, 393.3, 798.1],       // drop_table_when_MANY_tables
        [522.0, 2819.0, 3790.0],     // create+drop
        [4504.0, 2.669e+04, 8746.0], // create_key+drop
    ],
    // insert
    &[
        [139.7, 192.0, 225.5],       // insert
        [6.072, 89.49, 42.98],       // insert_duplicates
        [4.179, 30.68, 31.06],       // prepared_select
        [2.023, 18.92, 30.7],        // once_prepared_select
        [0.04555, 0.1105, 0.1183],   // select_big
        [0.07431, 0.2345, 0.1224],   // order_by_big_key
        [0.07335, 0.2279, 0.1538],   // order_by_big_key_desc
        [0.04627, 0.1244, 0.2128],   // order_by_big_key_prefix
        [0.04637, 0.1319, 0.1305],   // order_by_big_key2
        [0.1076, 0.2213, 0.1018],    // order_by_big_key_diff
        [0.1112, 0.2079, 0.3133],    // order_by_big
        [8.067, 43.17, 34.34],       // order_by_range
        [4.91, 28.43, 25.56],        // order_by_key_prefix
        [5.33, 30.27, 33.86],        // order_by_key2_diff
        [6.653, 28.74, 39.95],       // select_diff_key
        [17.37, 119.2, 45.07],       // select_range_prefix
        [16.95, 115.1, 55.48],       // select_range_key2
        [4.248, 24.24, 23.65],       // select_key_prefix
        [4.229, 26.07, 21.83],       // select_key
        [3.797, 29.81, 21.0],        // select_key_return_key
        [4.034, 24.01, 23.47],       // select_key2
        [3.47, 23.29, 22.62],        // select_key2_return_key
        [4.965, 23.6, 22.7],         // select_key2_return_prim
        [0.02604, 0.07845, 0.07971], // select_group
        [3.886, 35.98, 20.32],       // min_max_on_key
        [0.02315, 0.04623, 0.07398], // min_max
        [0.01168, 0.04379, 0.07665], // count_on_key
        [0.02146, 0.05075, 0.1183],  // count
        [0.1012, 0.2308, 0.2566],    // count_distinct_big
        [120.8, 290.3, 372.9],       // update_of_key
        [0.3413, 1.595, 2.326],      // update_of_key_big
        [99.75, 303.7, 270.4],       // update_with_key
        [5.781, 222.9, 41.28],       // update_with_key_record_unchanged
        [100.5, 183.0, 212.3],       // update_with_key_prefix
        [0.1139, 5.105, 1.05],       // update_big
        [0.09615, 0.7862, 0.571],    // outer_join_on_key
        [0.1769, 0.8446, 0.9516],    // outer_join
        [0.1557, 0.8298, 0.9325],    // outer_join_found
        [0.1201, 0.2543, 0.7812],    // outer_join_not_found
        [0.4777, 1.117, 1.325],      // select_in
        [0.2582, 1.237, 1.066],      // select_join_in
        [0.2237, 1.205, 1.845],      // insert_select_1_key
        [0.2462, 1.821, 2.775],      // insert_select_2_keys
        [700.1, 2068.0, 3662.0],     // drop table
        [61.54, 109.8, 136.1],       // delete_key
        [0.148, 0.5333, 0.8315],     // delete_range
        [189.2, 214.5, 253.9],       // insert_key
        [67.48, 181.5, 128.7],       // update_of_primary_key_many_keys
        [194.2, 249.0, 261.2],       // delete_big_many_keys
        [194.4, 249.9, 262.4],       // delete_all_many_keys
        [1.289, 4.377, 3.849],       // multiple_value_insert
    ],
    // select
    &[
        [119.9, 142.1, 118.3],        // insert
        [0.03783, 0.1178, 0.1694],    // select_cache
        [0.03383, 0.1246, 0.1753],    // select_cache2
        [0.02197, 0.1585, 0.1194],    // select_big
        [1.158, 2.168, 1.089],        // select_range
        [9.43, 98.08, 61.96],         // min_max_on_key
        [0.007573, 0.09996, 0.09844], // count_on_key
        [0.06514, 0.146, 0.1762],     // count_group_on_key_parts
        [0.07628, 0.1474, 0.1904],    // count_group
        [0.07717, 0.149, 0.1948],     // count_group_with_order
        [0.02276, 0.1841, 0.1531],    // count_distinct_key_prefix
        [0.02992, 0.1201, 0.151],     // count_distinct
        [0.1099, 0.1606, 0.2634],     // count_distinct_2
        [0.03315, 0.1906, 0.1406],    // count_distinct_group_on_key
        [0.1313, 0.2057, 1.046],      // count_distinct_group_on_key_parts
        [0.1259, 0.2046, 1.053],      // count_distinct_group
        [0.1762, 0.7024, 0.9901],     // count_distinct_big
    ],
    // alter
    &[
        [168.0, 153.6, 117.4],  // insert
        [206.8, 164.9, 2401.0], // alter_table_add
        [2.106, 14.31, 30.36],  // create_index
        [187.1, 342.7, 2493.0], // drop_index
        [0.07958, 0.0, 0.4946], // alter_table_drop
    ],
    // transactions
    &[
        [3.567, 64.36, 47.57], // insert_commit
        [127.7, 181.4, 121.8], // insert_autocommit
        [3.416, 64.15, 54.97], // insert_rollback
        [2.639, 75.63, 60.79], // update_rollback
        [2.424, 65.61, 62.63], // delete_rollback
        [2.666, 72.17, 67.19], // update_commit
        [120.0, 179.3, 133.5], // update_autocommit
        [2.516, 68.87, 69.13], // delete_commit
        [120.0, 160.7, 140.5], // delete_autocommit
    ],
    // big_tables
    &[
        [0.5322, 1.077, 1.058], // select_many_fields
        [1.323, 2.328, 1.928],  // insert_many_fields
    ],
    // wisconsin
    &[
        [576.3, 2751.0, 2467.0], // create_table
        [120.5, 158.4, 127.1],   // insert
        [0.6711, 0.3212, 2.313], // delete_big
        [0.4805, 0.679, 0.674],  // wisc_benchmark
    ],
    // atis: on a made-up data set of the original's table sizes (8,094 rows), a round of each
    // query group a unit
    &[
        [296.0, 2700.0, 2561.0],  // create_table
        [121.0, 157.0, 124.0],    // insert
        [127.0, 631.0, 728.0],    // select_simple_join
        [147.0, 309.0, 602.0],    // select_join
        [223.0, 315.0, 1484.0],   // select_key_prefix_join
        [909.0, 2332.0, 2657.0],  // select_distinct
        [1476.0, 4817.0, 5889.0], // select_group
        [161.0, 479.0, 1007.0],   // drop_table
    ],
];

/// The rows of sql-bench's ATIS files (their lines, about).
const ATIS_ROWS: f64 = 9_800.0;

/// The work of each test of `group`, in the units [`COSTS`] prices: the original scripts'
/// by their counts (`small`: --small-test).
fn units(group: &str, small: bool) -> Vec<f64> {
    let k = if small { 1.0 } else { 100.0 };
    match group {
        "sqlbench_connect" => [500.0, 500.0, 5e3, 5e3, 500.0, 5e3, 5e3, 5e3, 5e3, 500.0]
            .map(|u| u * k)
            .to_vec(),
        "sqlbench_create" => {
            let (many, loops) = super::create::counts(small);
            let (many, loops) = (many as f64, loops as f64);
            vec![many, many, many, loops, loops]
        }
        "sqlbench_alter" => {
            let (rows, fields): (f64, f64) = if small { (100.0, 100.0) } else { (1e3, 1e3) };
            let drops = ((fields - 8.0) / 2.0).floor();
            vec![
                rows,
                fields - 8.0,
                8.0 * rows,
                8.0,
                drops * rows * (fields + 8.0) / 2.0,
            ]
        }
        "sqlbench_insert" => {
            // Rows/3, the whole-table loops, the range loops, the many-keys rows, key reads.
            let (l, s, r, k, rk): (f64, f64, f64, f64, f64) = if small {
                (1e3, 10.0, 10.0, 100.0, 10.0)
            } else {
                (1e5, 10.0, 500.0, 1e5, 1e5)
            };
            let t = 3.0 * l;
            let mut u = vec![3.0 * l, l, l, l];
            u.extend([s * t; 7]); // select_big and the big ORDER BYs
            u.extend([r; 4]); // the range ORDER BYs and select_diff_key
            u.extend([30.0 * r; 2]); // select_range_prefix, select_range_key2
            u.extend([2.0 * rk; 6]); // the key reads
            u.push(s * 10.0 * t); // select_group
            u.push(30.0 * r); // min_max_on_key
            u.push(s * 6.0 * t); // min_max (id2 has no index)
            u.extend([100.0 * t; 2]); // count_on_key, count
            u.push(2.0 * s * t); // count_distinct_big
            u.push(l / 2.0); // update_of_key
            u.push((r + 4.0) * l); // update_of_key_big
            u.extend([t, t, l]); // the updates by key
            u.push(s * t); // update_big
            u.extend([s * t; 4]); // the outer joins
            u.extend([r * 1110.0; 2]); // select_in, select_join_in
            u.extend([t, t, 1.0]); // INSERT ... SELECT, drop table
            u.extend([l / 10.0, 13.0 * l]); // delete_key, delete_range
            u.extend([k, 2.0 * k, k, k]); // the many-keys table
            u.push(l); // multiple_value_insert
            u
        }
        "sqlbench_select" => {
            let (l, m, s): (f64, f64, f64) = if small {
                (1e3, 700.0, 1.0)
            } else {
                (1e4, 7e3, 10.0)
            };
            // Sums, scans and groups read the table: their work grows with its rows too.
            let mut u = vec![
                l,
                l * l,
                l * l,
                s * 7.0 * l,
                s * 41.0 * l,
                l * 7.0,
                l * 5.0 * l,
            ];
            u.extend([m * l; 9]);
            u.push((m / 10.0).floor() * l);
            u
        }
        "sqlbench_transactions" => vec![if small { 5e3 } else { 5e5 }; 9],
        "sqlbench_wisconsin" => {
            // The tables; the rows inserted; Bprime's deleted; the selects' rows by their
            // repetitions (the writes are a handful).
            let loops = super::wisconsin::loops(small) as f64;
            vec![4.0, 31e3, 9e3, loops * 15_202.0]
        }
        "sqlbench_big_tables" => {
            let u = if small {
                2.0 * 7e3 * 100.0
            } else {
                2.0 * 7e4 * 1e3
            };
            vec![u, u]
        }
        "sqlbench_atis" => {
            // The tables; the rows of the original's files (about 9,800 lines); each query
            // group's rounds by its queries (the priced query is the group's mean).
            let r = super::atis::rounds(small) as f64;
            vec![28.0, ATIS_ROWS, r, r, r, r, r, 28.0]
        }
        _ => Vec::new(),
    }
}

/// The seconds `group` is expected to take on `dialect` (None: a server of unknown kind,
/// priced as MySQL).
pub fn seconds(group: &str, small: bool, dialect: Option<Dialect>) -> Option<f64> {
    let g = super::GROUPS.iter().position(|g| g.0 == group)?;
    let column = match dialect {
        Some(Dialect::Sqlite) | Some(Dialect::Any) => 0,
        Some(Dialect::Postgres) => 1,
        Some(Dialect::Mysql) | None => 2,
    };
    let us: f64 = units(group, small)
        .iter()
        .zip(COSTS[g])
        .map(|(u, c)| u * c[column])
        .sum();
    Some(us / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_is_priced_and_the_full_counts_cost_more() {
        for (i, (group, tests, _)) in super::super::GROUPS.iter().enumerate() {
            assert_eq!(COSTS[i].len(), tests.len(), "{group}");
            assert_eq!(units(group, true).len(), tests.len(), "{group}");
            for d in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
                let small = seconds(group, true, Some(d)).unwrap();
                let full = seconds(group, false, Some(d)).unwrap();
                assert!(small > 0.0, "{group} {d:?}");
                // Wisconsin's full test repeats its selects 5 times as often, on the same
                // rows, ATIS 10 times; the others grow their rows too.
                let more = if *group == "sqlbench_wisconsin" {
                    3.0
                } else {
                    5.0
                };
                assert!(full > more * small, "{group} {d:?}: {small} -> {full}");
            }
        }
    }
}
