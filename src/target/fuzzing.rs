//! Entry points for the fuzz harness (`fuzz/`): each plays a whole client session against a
//! "server" whose every byte is the fuzzer's input. Not part of dbsweep's interface.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::str::FromStr;

use super::socket::Socket;
use super::{Param, mywire, pgwire};

/// A connected socket whose peer has sent `server` and closed its sending side; the peer
/// (returned too) stays open for reading until the session ends, so the client's writes work.
fn socket_fed(server: &[u8]) -> Option<(Socket, UnixStream)> {
    let (client, mut peer) = UnixStream::pair().ok()?;
    // The harness caps inputs well below a socket's buffer, so this write does not block.
    peer.write_all(server).ok()?;
    peer.shutdown(std::net::Shutdown::Write).ok()?;
    Some((Socket::from_unix(client).ok()?, peer))
}

/// Logs in to a PostgreSQL "server" that sends `server`, then prepares, executes, runs a
/// simple query and a COPY; every outcome is fine except a panic or a hang.
pub fn postgres_session(server: &[u8]) {
    let Some((sock, _peer)) = socket_fed(server) else {
        return;
    };
    let cfg = postgres::Config::from_str("postgres://u:pw@localhost/db").expect("static URL");
    let Ok(mut w) = pgwire::Wire::start(sock, &cfg) else {
        return;
    };
    let types = w
        .prepare("s1", "SELECT c FROM t WHERE id = $1")
        .unwrap_or_default();
    let _ = w.execute("s1", &types, &[Param::Int(7)], |row| {
        use super::TextRow;
        let _ = (row.len(), row.get(0), row.get(3));
    });
    let _ = w.simple("SELECT 1", |_| {});
    w.queue_execute("s1", &types, &[Param::Text("x")]);
    w.queue_sync();
    let _ = w.send_queued(1, |_| {});
    let mut left = 2;
    let _ = w.copy_in("COPY t FROM STDIN", |buf| {
        buf.extend_from_slice(b"1\t2\n");
        left -= 1;
        left > 0
    });
}

/// Logs in to a MySQL "server" that sends `server`, then queries, prepares and executes.
pub fn mysql_session(server: &[u8]) {
    let Some((sock, _peer)) = socket_fed(server) else {
        return;
    };
    let e = mywire::Endpoint::local("pw");
    let Ok(mut w) = mywire::Wire::start(sock, &e) else {
        return;
    };
    let _ = w.query("SELECT 1", |row| {
        use super::TextRow;
        let _ = (row.len(), row.get(0), row.get(5));
    });
    let Ok(st) = w.prepare("SELECT c FROM t WHERE id = ?") else {
        return;
    };
    let params = vec![Param::Int(1); usize::from(st.params.min(64))];
    let mut on_row = |row: &dyn super::TextRow| {
        let _ = (row.len(), row.get(0), row.get(1));
    };
    let _ = w.execute(&st, &params, Some(&mut on_row));
    let _ = w.load_local("LOAD DATA LOCAL INFILE 'x' INTO TABLE t", b"1\t2\n");
}

/// Parses and validates a plan's text, as `dbsweep sweep PLAN --dry-run` would.
pub fn plan(text: &str) {
    let _ = crate::plan::sweep::Sweep::parse("fuzz.toml", text, &Default::default());
}
