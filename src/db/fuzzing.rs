//! Entry points for the fuzz harness (`fuzz/`): each plays a whole client session against a
//! "server" whose every byte is the fuzzer's input. Not part of dbsweep's interface.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::conn::Param;
use super::mysql::wire as mywire;
use super::postgres::wire as pgwire;
use super::socket::Socket;
use super::tls::{Mode, Tls, TlsOptions};

/// A connected socket whose peer has sent `server` and closed its sending side; the peer
/// (returned too) stays open for reading until the session ends, so the client's writes work.
fn socket_fed(server: &[u8]) -> Option<(Socket, UnixStream)> {
    let (client, mut peer) = UnixStream::pair().ok()?;
    // The harness caps inputs well below a socket's buffer, so this write does not block.
    peer.write_all(server).ok()?;
    peer.shutdown(std::net::Shutdown::Write).ok()?;
    Some((Socket::from_unix(client, Default::default()).ok()?, peer))
}

/// A TLS server's configuration: a certificate for localhost, made once per process.
fn tls_server() -> Option<Arc<rustls::ServerConfig>> {
    static CONFIG: OnceLock<Option<Arc<rustls::ServerConfig>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let key = rcgen::KeyPair::generate().ok()?;
            let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
                .ok()?
                .self_signed(&key)
                .ok()?;
            let der = rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der()).ok()?;
            let config = rustls::ServerConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .ok()?
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], der)
            .ok()?;
            Some(Arc::new(config))
        })
        .clone()
}

/// A TCP connection to a peer thread that runs `before` (the plain part of the protocol,
/// up to the client's TLS request), completes a real TLS handshake as the server, sends
/// `server` inside TLS, closes it, and reads until the client hangs up. Every wait of the
/// peer has a bound, so a session never hangs on it.
fn tls_fed(
    server: &[u8],
    before: fn(&mut TcpStream) -> std::io::Result<()>,
) -> Option<(Socket, std::thread::JoinHandle<()>)> {
    let config = tls_server()?;
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let port = listener.local_addr().ok()?.port();
    let server = server.to_vec();
    // The peer's accept has a bound too: a client that never connects ends it.
    listener.set_nonblocking(true).ok()?;
    let peer = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        let mut tcp = loop {
            match listener.accept() {
                Ok((tcp, _)) => break tcp,
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(_) => return,
            }
        };
        if tcp.set_nonblocking(false).is_err() {
            return;
        }
        let bound = Some(Duration::from_secs(2));
        if tcp.set_read_timeout(bound).is_err()
            || tcp.set_write_timeout(bound).is_err()
            || tcp.set_nodelay(true).is_err()
        {
            return;
        }
        if before(&mut tcp).is_err() {
            return;
        }
        let Ok(conn) = rustls::ServerConnection::new(config) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        while tls.conn.is_handshaking() {
            if tls.conn.complete_io(&mut tls.sock).is_err() {
                return;
            }
        }
        if tls.write_all(&server).is_err() {
            return;
        }
        tls.conn.send_close_notify();
        let _ = tls.flush();
        let mut sink = [0u8; 4096];
        while matches!(tls.read(&mut sink), Ok(n) if n > 0) {}
    });
    let sock = Socket::tcp("127.0.0.1", port, Default::default()).ok()?;
    Some((sock, peer))
}

/// The client's TLS: encrypted, the certificate not checked (sslmode=require).
fn client_tls() -> Option<Tls> {
    Tls::new(&TlsOptions {
        mode: Mode::Require,
        ..TlsOptions::default()
    })
    .ok()
    .flatten()
}

/// Logs in to a PostgreSQL "server" that sends `server`, then prepares, executes, runs a
/// simple query and a COPY; every outcome is fine except a panic or a hang.
pub fn postgres_session(server: &[u8]) {
    let Some((sock, _peer)) = socket_fed(server) else {
        return;
    };
    postgres_on(sock);
}

/// As [`postgres_session`], over TLS: the "server" agrees to the TLS request, completes a
/// real handshake, and sends `server` inside TLS. True when the login succeeded.
pub fn postgres_tls_session(server: &[u8]) -> bool {
    let Some(tls) = client_tls() else {
        return false;
    };
    // The SSLRequest (8 bytes), answered 'S'.
    let Some((mut sock, peer)) = tls_fed(server, |tcp| {
        let mut request = [0u8; 8];
        tcp.read_exact(&mut request)?;
        tcp.write_all(b"S")
    }) else {
        return false;
    };
    let logged_in = super::postgres::startup::negotiate_tls(&mut sock, &tls, "localhost").is_ok()
        && postgres_on(sock);
    let _ = peer.join();
    logged_in
}

/// The session on a connected socket; false when the login failed.
fn postgres_on(sock: Socket) -> bool {
    let cfg =
        super::server_url::ServerUrl::parse("postgres://u:pw@localhost/db").expect("static URL");
    let Ok(mut w) = pgwire::Wire::start(sock, &cfg) else {
        return false;
    };
    let types = w
        .prepare("s1", "SELECT c FROM t WHERE id = $1")
        .unwrap_or_default();
    let _ = w.execute("s1", &types, &[Param::Int(7)], |row| {
        use super::conn::TextRow;
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
    true
}

/// Logs in to a MySQL "server" that sends `server`, then queries, prepares and executes.
pub fn mysql_session(server: &[u8]) {
    let Some((sock, _peer)) = socket_fed(server) else {
        return;
    };
    mysql_on(sock, &mywire::Endpoint::local("pw"));
}

/// As [`mysql_session`], over TLS: the "server" greets in plain text offering TLS and
/// caching_sha2_password, reads the client's SSLRequest, completes a real handshake, and
/// sends `server` inside TLS (from the answer to the login on). True when the login
/// succeeded.
pub fn mysql_tls_session(server: &[u8]) -> bool {
    let Some(tls) = client_tls() else {
        return false;
    };
    let Some((sock, peer)) = tls_fed(server, |tcp| {
        tcp.write_all(&mywire::fuzz_greeting())?;
        // The SSLRequest: a 4-byte header and 32 bytes.
        let mut request = [0u8; 36];
        tcp.read_exact(&mut request)
    }) else {
        return false;
    };
    let e = mywire::Endpoint {
        tls: Some(tls),
        ..mywire::Endpoint::local("pw")
    };
    let logged_in = mysql_on(sock, &e);
    let _ = peer.join();
    logged_in
}

/// The session on a connected socket; false when the login failed.
fn mysql_on(sock: Socket, e: &mywire::Endpoint) -> bool {
    let Ok(mut w) = mywire::Wire::start(sock, e) else {
        return false;
    };
    let _ = w.query("SELECT 1", |row| {
        use super::conn::TextRow;
        let _ = (row.len(), row.get(0), row.get(5), row.name(0), row.name(3));
    });
    let Ok(mut st) = w.prepare("SELECT c FROM t WHERE id = ?") else {
        return true;
    };
    let params = vec![Param::Int(1); usize::from(st.params.min(64))];
    let mut on_row = |row: &dyn super::conn::TextRow| {
        let _ = (row.len(), row.get(0), row.get(1));
    };
    let _ = w.execute(&mut st, &params, Some(&mut on_row));
    let _ = w.load_local("LOAD DATA LOCAL INFILE 'x' INTO TABLE t", b"1\t2\n");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seed session replayed: what the client reads from each reply. Each reply must be
    /// read to its end, or the next command reads the rest of it as its own reply.
    fn replay_mysql_seed(seed: &[u8]) -> (bool, bool, Vec<String>) {
        use super::super::conn::TextRow;
        let (sock, _peer) = socket_fed(seed).expect("a socket pair");
        let mut w = mywire::Wire::start(sock, &mywire::Endpoint::local("pw")).expect("login");
        let mut seen = Vec::new();
        let q = w
            .query("SELECT 1", |row| {
                let name = row.name(0).unwrap_or_default().to_string();
                let value = String::from_utf8_lossy(row.get(0).unwrap_or_default()).into_owned();
                seen.push(format!("text row {name}={value}"));
            })
            .expect("the text query");
        seen.push(format!("text rows {}", q.rows));
        let mut st = w.prepare("SELECT c FROM t WHERE id = ?").expect("prepare");
        let types: Vec<u8> = st.columns.iter().map(|c| c.ty).collect();
        seen.push(format!(
            "prepared: {} parameter, types {types:?}",
            st.params
        ));
        let mut on_row = |row: &dyn TextRow| {
            seen.push(format!(
                "binary row {}",
                String::from_utf8_lossy(row.get(0).unwrap_or_default())
            ));
        };
        let out = w
            .execute(&mut st, &[Param::Int(1)], Some(&mut on_row))
            .expect("execute");
        seen.push(format!("binary rows {}", out.rows));
        let out = w
            .load_local("LOAD DATA LOCAL INFILE 'x' INTO TABLE t", b"1\t2\n")
            .expect("load data local");
        seen.push(format!("loaded {}", out.changed));
        (w.deprecate_eof, w.cache_metadata, seen)
    }

    #[test]
    fn both_result_set_endings_read_the_same_replies() {
        // The old seed: EOF packets (no CLIENT_DEPRECATE_EOF offered).
        let (eof, cached, old) =
            replay_mysql_seed(include_bytes!("../../fuzz/seeds/mysql_client/session"));
        assert!(!eof && !cached);
        assert_eq!(
            old,
            [
                "text row c=1",
                "text rows 1",
                "prepared: 1 parameter, types [254]",
                "binary row abc",
                "binary rows 1",
                "loaded 0"
            ]
        );
        // MariaDB with CLIENT_DEPRECATE_EOF and cached metadata: no EOFs, OK packets with a
        // 0xFE header end the sets, an execution's columns skipped, and a second result set
        // (MORE_RESULTS in the first one's ending) read too.
        let (eof, cached, new) = replay_mysql_seed(include_bytes!(
            "../../fuzz/seeds/mysql_client/session_deprecate_eof"
        ));
        assert!(eof && cached);
        let expected = [
            "text row c=1",
            "text rows 1",
            "prepared: 1 parameter, types [254]",
            "binary row abc",
            "binary row xyz",
            "binary rows 2",
            "loaded 1",
        ];
        assert_eq!(new, expected);
    }

    #[test]
    fn the_tls_sessions_log_in_through_a_real_handshake() {
        // AuthenticationOk, ReadyForQuery: inside TLS.
        let pg_ok = b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05I";
        assert!(postgres_tls_session(pg_ok));
        assert!(!postgres_tls_session(b"garbage inside TLS"));
        assert!(!postgres_tls_session(b""));
        // OK to the login (sequence 3: after the SSLRequest and the response).
        let my_ok = [7, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0];
        assert!(mysql_tls_session(&my_ok));
        assert!(!mysql_tls_session(b"\xff\xff\xff\x03"));
    }
}
