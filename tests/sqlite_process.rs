//! What dbsweep's SQLite connections share across the whole process: a lone client's thread
//! with a file table of its own (`sqlite::own_file_table`), taken only while no SQLite
//! connection of the process is open, and while it is held no other thread opens one; and the
//! busy handler's counters. A test binary of its own, since both are process-wide; its tests
//! take turns (`SERIAL`).

use std::sync::{Barrier, Mutex, mpsc};
use std::time::Duration;

/// The longest either thread waits for the other (a failed side drops its sender at once).
const BOUND: Duration = Duration::from_secs(60);

/// One test at a time: each looks at the whole process.
static SERIAL: Mutex<()> = Mutex::new(());

use dbsweep::db::sqlite::{SqliteTarget, allow_own_file_table, busy_counters, own_file_table};
use dbsweep::db::{Param, Target};

#[test]
fn only_the_thread_with_a_file_table_of_its_own_opens_sqlite_while_it_holds_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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
    // Let go at the end, whatever happens, for the next test.
    struct Disallow;
    impl Drop for Disallow {
        fn drop(&mut self) {
            allow_own_file_table(false);
        }
    }
    let _disallow = Disallow;
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

/// Clients that connect at once to a WAL database no connection has open: the first to read
/// rebuilds the WAL's index (here from a WAL of many frames, as a crash leaves it) and the
/// others would find it busy and retry in the busy handler, counted as lock waits of the run
/// that were no one's write. dbsweep's connections open one at a time instead.
#[test]
fn clients_connecting_at_once_never_retry_on_a_wal_being_recovered() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live.db");
    let crashed = dir.path().join("crashed.db");
    {
        // A WAL of ~40 MB that no checkpoint has touched, copied while its writer is open:
        // the copy is a database whose last writer crashed.
        let w = rusqlite::Connection::open(&live).unwrap();
        w.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; \
             CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB);",
        )
        .unwrap();
        for chunk in 0..40 {
            w.execute(
                "INSERT INTO t (v) SELECT randomblob(1000) FROM \
                 (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) \
                 SELECT i FROM n)",
                [],
            )
            .unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
        }
        std::fs::copy(&live, &crashed).unwrap();
        let wal = |p: &std::path::Path| format!("{}-wal", p.display());
        std::fs::copy(wal(&live), wal(&crashed)).unwrap();
        assert!(std::fs::metadata(wal(&crashed)).unwrap().len() > 30_000_000);
    }
    let target = SqliteTarget::from_url(&format!("sqlite://{}", crashed.display()), false).unwrap();
    let clients = 4;
    let start = Barrier::new(clients);
    let before = busy_counters();
    std::thread::scope(|s| {
        let opened: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    let mut conn = target.connect().expect("connects");
                    conn.query_i64("SELECT count(*) FROM t").unwrap()
                })
            })
            .collect();
        for o in opened {
            assert_eq!(o.join().unwrap(), Some(40_000));
        }
    });
    let after = busy_counters();
    assert_eq!(
        (after.0 - before.0, after.2 - before.2),
        (0, 0),
        "busy waits and retries while {clients} clients connected"
    );
}
