//! The nine TPC-C tables with the standard column names and keys, per dialect, so that other
//! TPC-C tools' checks can read what dbsweep loads.

use crate::db::Dialect;

/// In load order (item first, then per warehouse).
pub const TABLES: [&str; 9] = [
    "item",
    "warehouse",
    "district",
    "customer",
    "history",
    "orders",
    "new_order",
    "order_line",
    "stock",
];

/// Column types by kind: integer, money (decimal(12,2)), rate (decimal(4,4)), timestamp.
struct Types {
    int: &'static str,
    money: &'static str,
    small_money: &'static str,
    rate: &'static str,
    ts: &'static str,
    suffix: &'static str,
}

fn types(d: Dialect) -> Types {
    match d {
        // SQLite keeps NUMERIC as integers or doubles: the checks compare sums to the cent.
        Dialect::Sqlite | Dialect::Any => Types {
            int: "INTEGER",
            money: "NUMERIC",
            small_money: "NUMERIC",
            rate: "NUMERIC",
            ts: "TEXT",
            suffix: "",
        },
        Dialect::Postgres => Types {
            int: "INTEGER",
            money: "DECIMAL(12,2)",
            small_money: "DECIMAL(6,2)",
            rate: "DECIMAL(4,4)",
            ts: "TIMESTAMP",
            suffix: "",
        },
        Dialect::Mysql => Types {
            int: "INT",
            money: "DECIMAL(12,2)",
            small_money: "DECIMAL(6,2)",
            rate: "DECIMAL(4,4)",
            ts: "DATETIME",
            suffix: " ENGINE=InnoDB",
        },
    }
}

/// CREATE TABLE statements, primary keys included.
pub fn create_tables(d: Dialect) -> Vec<String> {
    let t = types(d);
    let (int, money, small_money, rate, ts, sfx) =
        (t.int, t.money, t.small_money, t.rate, t.ts, t.suffix);
    let address = |p: &str| {
        format!(
            "{p}_street_1 VARCHAR(20), {p}_street_2 VARCHAR(20), {p}_city VARCHAR(20), {p}_state CHAR(2), {p}_zip CHAR(9)"
        )
    };
    let dists: Vec<String> = (1..=10)
        .map(|i| format!("s_dist_{i:02} CHAR(24)"))
        .collect();
    vec![
        format!(
            "CREATE TABLE item (i_id {int} NOT NULL, i_im_id {int}, i_name VARCHAR(24), i_price {small_money}, i_data VARCHAR(50), PRIMARY KEY (i_id)){sfx}"
        ),
        format!(
            "CREATE TABLE warehouse (w_id {int} NOT NULL, w_name VARCHAR(10), {}, w_tax {rate}, w_ytd {money}, PRIMARY KEY (w_id)){sfx}",
            address("w")
        ),
        format!(
            "CREATE TABLE district (d_id {int} NOT NULL, d_w_id {int} NOT NULL, d_name VARCHAR(10), {}, d_tax {rate}, d_ytd {money}, d_next_o_id {int}, PRIMARY KEY (d_w_id, d_id)){sfx}",
            address("d")
        ),
        format!(
            "CREATE TABLE customer (c_id {int} NOT NULL, c_d_id {int} NOT NULL, c_w_id {int} NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), {}, c_phone CHAR(16), c_since {ts}, c_credit CHAR(2), c_credit_lim {money}, c_discount {rate}, c_balance {money}, c_ytd_payment {money}, c_payment_cnt {int}, c_delivery_cnt {int}, c_data VARCHAR(500), PRIMARY KEY (c_w_id, c_d_id, c_id)){sfx}",
            address("c")
        ),
        format!(
            "CREATE TABLE history (h_c_id {int}, h_c_d_id {int}, h_c_w_id {int}, h_d_id {int}, h_w_id {int}, h_date {ts}, h_amount {small_money}, h_data VARCHAR(24)){sfx}"
        ),
        format!(
            "CREATE TABLE orders (o_id {int} NOT NULL, o_d_id {int} NOT NULL, o_w_id {int} NOT NULL, o_c_id {int}, o_entry_d {ts}, o_carrier_id {int}, o_ol_cnt {int}, o_all_local {int}, PRIMARY KEY (o_w_id, o_d_id, o_id)){sfx}"
        ),
        format!(
            "CREATE TABLE new_order (no_o_id {int} NOT NULL, no_d_id {int} NOT NULL, no_w_id {int} NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id)){sfx}"
        ),
        format!(
            "CREATE TABLE order_line (ol_o_id {int} NOT NULL, ol_d_id {int} NOT NULL, ol_w_id {int} NOT NULL, ol_number {int} NOT NULL, ol_i_id {int}, ol_supply_w_id {int}, ol_delivery_d {ts}, ol_quantity {int}, ol_amount {small_money}, ol_dist_info CHAR(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)){sfx}"
        ),
        format!(
            "CREATE TABLE stock (s_i_id {int} NOT NULL, s_w_id {int} NOT NULL, s_quantity {int}, {}, s_ytd {int}, s_order_cnt {int}, s_remote_cnt {int}, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id)){sfx}",
            dists.join(", ")
        ),
    ]
}

/// The secondary indexes, created after the load: customer by last name (Payment and
/// Order-Status by name), orders by customer (Order-Status).
pub fn create_indexes() -> Vec<String> {
    vec![
        "CREATE INDEX idx_customer_name ON customer (c_w_id, c_d_id, c_last, c_first)".into(),
        "CREATE INDEX idx_orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)".into(),
    ]
}

/// What the load creates, table by table ([`TABLES`]' order): the statement before its rows,
/// and those after them (its primary key where it comes after: `loader::key_after_rows`, then
/// its secondary indexes).
pub fn load_plan(d: Dialect) -> Vec<(String, (String, Vec<String>))> {
    let indexes = create_indexes();
    TABLES
        .iter()
        .zip(create_tables(d))
        .map(|(t, ddl)| {
            let (ddl, key) = crate::workload::loader::key_after_rows(d, t, &ddl);
            let on = format!(" ON {t} (");
            let after = key
                .into_iter()
                .chain(indexes.iter().filter(|i| i.contains(&on)).cloned())
                .collect();
            (ddl, (t.to_string(), after))
        })
        .collect()
}

/// Column lists, in the order the loader fills them.
pub fn columns(table: &str) -> Vec<String> {
    let address =
        |p: &str| ["street_1", "street_2", "city", "state", "zip"].map(|c| format!("{p}_{c}"));
    let mut v: Vec<String> = Vec::new();
    let mut push = |names: &[&str]| v.extend(names.iter().map(|s| s.to_string()));
    match table {
        "item" => push(&["i_id", "i_im_id", "i_name", "i_price", "i_data"]),
        "warehouse" => {
            push(&["w_id", "w_name"]);
            v.extend(address("w"));
            v.extend(["w_tax", "w_ytd"].map(String::from));
        }
        "district" => {
            push(&["d_id", "d_w_id", "d_name"]);
            v.extend(address("d"));
            v.extend(["d_tax", "d_ytd", "d_next_o_id"].map(String::from));
        }
        "customer" => {
            push(&["c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last"]);
            v.extend(address("c"));
            v.extend(
                [
                    "c_phone",
                    "c_since",
                    "c_credit",
                    "c_credit_lim",
                    "c_discount",
                    "c_balance",
                    "c_ytd_payment",
                    "c_payment_cnt",
                    "c_delivery_cnt",
                    "c_data",
                ]
                .map(String::from),
            );
        }
        "history" => push(&[
            "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data",
        ]),
        "orders" => push(&[
            "o_id",
            "o_d_id",
            "o_w_id",
            "o_c_id",
            "o_entry_d",
            "o_carrier_id",
            "o_ol_cnt",
            "o_all_local",
        ]),
        "new_order" => push(&["no_o_id", "no_d_id", "no_w_id"]),
        "order_line" => push(&[
            "ol_o_id",
            "ol_d_id",
            "ol_w_id",
            "ol_number",
            "ol_i_id",
            "ol_supply_w_id",
            "ol_delivery_d",
            "ol_quantity",
            "ol_amount",
            "ol_dist_info",
        ]),
        "stock" => {
            push(&["s_i_id", "s_w_id", "s_quantity"]);
            v.extend((1..=10).map(|i| format!("s_dist_{i:02}")));
            v.extend(["s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"].map(String::from));
        }
        other => unreachable!("no TPC-C table {other}"),
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_its_columns_in_each_dialect() {
        for d in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
            let create = create_tables(d);
            assert_eq!(create.len(), TABLES.len());
            for (sql, table) in create.iter().zip(TABLES) {
                assert!(sql.starts_with(&format!("CREATE TABLE {table} (")), "{sql}");
                for c in columns(table) {
                    assert!(
                        sql.contains(&format!("{c} ")),
                        "{table}.{c} missing in {sql}"
                    );
                }
            }
        }
        assert_eq!(columns("stock").len(), 17);
        assert_eq!(columns("customer").len(), 21);
    }
}
