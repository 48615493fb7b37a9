//! A lone SQLite client's thread with a file table of its own (`sqlite::own_file_table`): it is
//! taken only while no SQLite connection of the process is open, and while it is held no other
//! thread opens one. A test binary of its own, since the claim is on the whole process.

use std::sync::mpsc;
use std::time::Duration;

/// The longest either thread waits for the other (a failed side drops its sender at once).
const BOUND: Duration = Duration::from_secs(60);

use dbsweep::db::sqlite::{SqliteTarget, allow_own_file_table, own_file_table};
use dbsweep::db::{Param, Target};

#[test]
fn only_the_thread_with_a_file_table_of_its_own_opens_sqlite_while_it_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("t.db").display());
    let target = SqliteTarget::from_url(&url, true).unwrap();
    let mut setup = target.connect().unwrap();
    setup
        .batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
        .unwrap();

    // Outside dbsweep's own process (nothing allowed it), never.
    assert!(own_file_table().is_none());
    allow_own_file_table(true);
    // Not while a connection is open, on this thread or any.
    assert!(
        std::thread::spawn(|| own_file_table().is_none())
            .join()
            .unwrap()
    );
    drop(setup);
    // A connection that failed to open is not counted as open.
    let missing = format!("sqlite://{}", dir.path().join("missing.db").display());
    assert!(
        SqliteTarget::from_url(&missing, false)
            .unwrap()
            .connect()
            .is_err()
    );

    let (held_tx, held) = mpsc::channel();
    let (go_tx, go) = mpsc::channel::<()>();
    let lone = {
        let target = target.clone();
        std::thread::spawn(move || {
            let own = own_file_table().expect("no connection is open");
            let mut conn = target.connect().expect("the owner opens");
            let insert = conn.prepare("INSERT INTO t (id, v) VALUES (?, ?)").unwrap();
            for id in 1..=3 {
                conn.execute(insert, &[Param::Int(id), Param::Text("x")])
                    .unwrap();
            }
            held_tx.send(()).unwrap();
            go.recv_timeout(BOUND).expect("the main thread goes on");
            drop(conn);
            drop(own);
        })
    };
    held.recv_timeout(BOUND)
        .expect("the lone thread holds its table");
    let refused = target
        .connect()
        .err()
        .expect("refused while the table is held");
    assert!(refused.to_string().contains("to itself"), "{refused}");
    go_tx.send(()).unwrap();
    lone.join().unwrap();

    // Let go: any thread opens again, and sees what the owner wrote.
    let mut after = target.connect().unwrap();
    assert_eq!(after.query_i64("SELECT count(*) FROM t").unwrap(), Some(3));
}
