//! TPC-C prepare, check and cleanup on SQLite (the managed servers' are in `servers.rs`).

use crate::util::{Scratch, dbsweep};

/// `dbsweep tpcc ACTION --target <scratch db> ARGS`.
pub fn tpcc(target: &str, action: &str, args: &[&str]) -> assert_cmd::Command {
    let mut c = dbsweep();
    c.args(["tpcc", action, "--target", target]).args(args);
    c
}

/// Checks the cardinalities of `warehouses` loaded warehouses through `count(sql)`.
pub fn assert_cardinalities(warehouses: i64, count: &mut dyn FnMut(&str) -> i64) {
    let w = warehouses;
    for (table, rows) in [
        ("item", 100_000),
        ("warehouse", w),
        ("district", 10 * w),
        ("customer", 30_000 * w),
        ("history", 30_000 * w),
        ("orders", 30_000 * w),
        ("new_order", 9_000 * w),
        ("stock", 100_000 * w),
    ] {
        assert_eq!(
            count(&format!("SELECT COUNT(*) FROM {table}")),
            rows,
            "{table}"
        );
    }
    let lines = count("SELECT COUNT(*) FROM order_line");
    assert_eq!(lines, count("SELECT SUM(o_ol_cnt) FROM orders"));
    assert!((5 * 30_000 * w..=15 * 30_000 * w).contains(&lines));
    // The first 1000 customers of a district take the 1000 last names in order.
    assert_eq!(
        count("SELECT COUNT(DISTINCT c_last) FROM customer WHERE c_id <= 1000"),
        1000
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM customer WHERE c_id = 372 AND c_last = 'PRICALLYOUGHT'"),
        10 * w
    );
    // 10% of item data holds ORIGINAL; 10% of customers have bad credit.
    let original = count("SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'");
    assert!((8_000..12_000).contains(&original), "{original}");
    let bad = count("SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'");
    assert!((2_000 * w..4_000 * w).contains(&bad), "{bad}");
    // Undelivered: the last 900 orders of each district.
    assert_eq!(
        count("SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL AND o_id >= 2101"),
        9_000 * w
    );
}

fn passes(stdout: &str) -> usize {
    stdout.lines().filter(|l| l.ends_with(" pass")).count()
}

#[test]
fn prepare_checks_and_cleanup_on_sqlite() {
    for warehouses in [1, 2] {
        let s = Scratch::new();
        let t = s.target();
        let w = warehouses.to_string();
        let out = tpcc(&t, "prepare", &["--warehouses", &w])
            .assert()
            .success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert_eq!(passes(&stdout), 12, "{stdout}");
        assert!(stdout.contains("rows/s"), "{stdout}");
        let db = s.sqlite();
        assert_cardinalities(warehouses, &mut |sql| {
            db.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap()
        });
        drop(db);
        let out = tpcc(&t, "check", &["--warehouses", &w]).assert().success();
        assert_eq!(
            passes(&String::from_utf8_lossy(&out.get_output().stdout)),
            12
        );

        // Broken money: conditions 1 and 8 fail and name the warehouse.
        s.sqlite()
            .execute("UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1", [])
            .unwrap();
        let out = tpcc(&t, "check", &["--warehouses", &w]).assert().code(1);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        let fail = |n: &str| {
            stdout
                .lines()
                .find(|l| l.starts_with(n))
                .unwrap()
                .contains("FAIL: w_id=1 w_ytd=300001")
        };
        assert!(fail(" 1.") && fail(" 8."), "{stdout}");
        assert_eq!(passes(&stdout), 10, "{stdout}");
        // A customer's balance off by 5: conditions 10 and 12 name the customer.
        s.sqlite()
            .execute(
                "UPDATE customer SET c_balance = c_balance + 5 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 7",
                [],
            )
            .unwrap();
        let out = tpcc(&t, "check", &["--warehouses", &w]).assert().code(1);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        for n in ["10.", "12."] {
            let line = stdout.lines().find(|l| l.starts_with(n)).unwrap();
            assert!(
                line.contains("FAIL: c_w_id=1 c_d_id=2 c_id=7 c_balance=-5"),
                "{line}"
            );
        }
        s.sqlite()
            .execute("UPDATE customer SET c_balance = -10 WHERE c_id = 7", [])
            .unwrap();
        // After a run, condition 11 is left out.
        s.sqlite()
            .execute("DELETE FROM new_order WHERE no_o_id = 2101", [])
            .unwrap();
        s.sqlite()
            .execute("UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1", [])
            .unwrap();
        let out = tpcc(&t, "check", &["--warehouses", &w, "--after-run"])
            .assert()
            .code(1);
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        assert!(
            stdout.contains("11. ") && stdout.contains("skipped"),
            "{stdout}"
        );
        // The deleted new_order rows break 3 and 5 (orders left undelivered without one).
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(" 5.") && l.contains("FAIL")),
            "{stdout}"
        );

        tpcc(&t, "cleanup", &[]).assert().success();
        let left: i64 = s
            .sqlite()
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(left, 0, "every TPC-C table is dropped");
    }
}

#[test]
fn bad_tpcc_input_changes_nothing() {
    let s = Scratch::new();
    let t = s.target();
    let out = tpcc(&t, "prepare", &["--warehouses", "0"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--warehouses"));
    assert!(
        !s.db().exists(),
        "nothing is created for a bad warehouse count"
    );
    tpcc(&t, "prepare", &["--warehouses", "-1"])
        .assert()
        .code(2);
    // Checking tables that are not there.
    tpcc(&t, "prepare", &["--warehouses", "1"])
        .assert()
        .success();
    let other = Scratch::new();
    other.sqlite(); // an empty database file
    let out = tpcc(&other.target(), "check", &[]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("tpcc prepare"));
    // Loading over loaded tables needs --force; the data stay as they were.
    s.sqlite()
        .execute("UPDATE district SET d_name = 'marker' WHERE d_id = 1", [])
        .unwrap();
    let out = tpcc(&t, "prepare", &["--warehouses", "1"]).assert().code(2);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("--force"));
    let marker: i64 = s
        .sqlite()
        .query_row(
            "SELECT COUNT(*) FROM district WHERE d_name = 'marker'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(marker, 1);
    // A check for another warehouse count says what is loaded.
    let out = tpcc(&t, "check", &["--warehouses", "3"]).assert().code(2);
    assert!(
        String::from_utf8_lossy(&out.get_output().stderr).contains("1 warehouse(s) are loaded")
    );
    // --force reloads.
    tpcc(&t, "prepare", &["--warehouses", "1", "--force"])
        .assert()
        .success();
    let marker: i64 = s
        .sqlite()
        .query_row(
            "SELECT COUNT(*) FROM district WHERE d_name = 'marker'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(marker, 0);
}
