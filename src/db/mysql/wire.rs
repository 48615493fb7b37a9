//! A lean synchronous client for the MySQL/MariaDB client/server protocol.
//!
//! Why not the `mysql` crate: its client CPU per point select is above this client's
//! (bench/clients measures both on one server; it allocates a row and values per result and
//! parameters per call). This client does what a benchmark needs with reused buffers: the
//! handshake (mysql_native_password, or caching_sha2_password's fast path), COM_QUERY,
//! COM_STMT_PREPARE/EXECUTE with binary parameters, result sets counted without decoding, and
//! LOAD DATA LOCAL INFILE. URLs are read by `ServerUrl`.
//!
//! It asks for the replies with the fewest packets the server offers: CLIENT_DEPRECATE_EOF (no
//! EOF packets; a result set ends with an OK) and, on MariaDB 10.6+, MARIADB_CLIENT_CACHE_METADATA
//! (an execution whose columns are as prepared sends no column definitions). A prepared point
//! select's reply is then three packets on MariaDB and four on MySQL, where it was five.

use std::io;

use super::packet::{
    BinRow, Column, ColumnNames, MAX_PACKET, MORE_RESULTS, MyRow, Prepared, WireError, column_def,
    lenenc_int, put_lenenc, server_error,
};
use crate::db::conn::{Param, StmtOutcome};
use crate::db::socket::Socket;

/// Where to connect and as whom.
#[derive(Clone)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub user: String,
    pub password: String,
    pub database: Option<String>,
    /// TLS as the URL's `ssl-mode` asks (None: plain).
    pub tls: Option<crate::db::tls::Tls>,
    /// The server's RSA public key (PEM) for full authentication outside TLS
    /// (`server-public-key=PATH`); None: asked of the server.
    pub server_public_key: Option<Vec<u8>>,
    /// The connection's bounds (`--connect-timeout`, `--query-timeout`).
    pub timeouts: crate::db::Timeouts,
}

/// A MySQL 8 greeting (packet 0) that offers TLS and caching_sha2_password: the fuzz
/// harness's TLS server sends it before the handshake.
#[cfg(feature = "fuzzing")]
pub(in crate::db) fn fuzz_greeting() -> Vec<u8> {
    use super::packet::{
        CONNECT_WITH_DB, LOCAL_FILES, LONG_FLAG, LONG_PASSWORD, MULTI_RESULTS, PLUGIN_AUTH,
        PROTOCOL_41, SECURE_CONNECTION, SSL, TRANSACTIONS,
    };
    let caps = LONG_PASSWORD
        | LONG_FLAG
        | CONNECT_WITH_DB
        | LOCAL_FILES
        | PROTOCOL_41
        | TRANSACTIONS
        | SECURE_CONNECTION
        | MULTI_RESULTS
        | PLUGIN_AUTH
        | SSL;
    let mut p = vec![10];
    p.extend_from_slice(b"8.0.40-fuzz\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0");
    p.extend_from_slice(b"caching_sha2_password\0");
    let mut packet = (p.len() as u32).to_le_bytes()[..3].to_vec();
    packet.push(0);
    packet.extend_from_slice(&p);
    packet
}

impl Endpoint {
    /// User `u`, password `password`, database `db` on localhost over plain TCP: the fuzz
    /// harness's and the in-test servers' client.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn local(password: &str) -> Endpoint {
        Endpoint {
            host: "localhost".into(),
            port: 3306,
            socket: None,
            user: "u".into(),
            password: password.into(),
            database: Some("db".into()),
            tls: None,
            server_public_key: None,
            timeouts: Default::default(),
        }
    }
}

pub struct Wire {
    pub(crate) sock: Socket,
    pub(crate) wbuf: Vec<u8>,
    /// The packets `wbuf` becomes, kept between commands: a point select's packet is built
    /// without an allocation.
    out: Vec<u8>,
    /// Sequence id of the next packet this side sends.
    pub(crate) seq: u8,
    /// Reused to decode binary rows.
    pub(crate) bin_row: BinRow,
    /// Reused for the column names of text queries' result sets.
    names: ColumnNames,
    /// CLIENT_DEPRECATE_EOF was negotiated: no EOF after column definitions, and result sets
    /// end with an OK packet whose header is 0xFE.
    pub(crate) deprecate_eof: bool,
    /// MariaDB's MARIADB_CLIENT_CACHE_METADATA was negotiated: each column count has a
    /// "metadata follows" byte.
    pub(crate) cache_metadata: bool,
    /// The server's id of this connection (its greeting's), and where to reach the server
    /// again: Ctrl-C during a statement sends `KILL QUERY` there, as the mysql client does,
    /// so that the server stops working on it.
    pub(crate) connection_id: Option<u32>,
    endpoint: Option<Box<Endpoint>>,
}

impl Wire {
    /// The negotiated TLS protocol and cipher; None on a plain connection.
    pub fn tls_info(&self) -> Option<String> {
        self.sock.tls_info()
    }

    pub fn connect(e: &Endpoint) -> Result<Wire, WireError> {
        let sock = match &e.socket {
            Some(path) => Socket::unix(std::path::Path::new(path), e.timeouts)?,
            None => Socket::tcp(&e.host, e.port, e.timeouts)?,
        };
        let mut w = Wire::start(sock, e)?;
        w.endpoint = Some(Box::new(e.clone()));
        Ok(w)
    }

    /// What a failed read returns: when Ctrl-C ended the wait, the statement in flight is
    /// killed on the server first (on a connection of its own, bounded), so that the server
    /// does not go on with a long INSERT or CREATE INDEX nobody waits for.
    #[cold]
    pub(crate) fn read_failed(&mut self, e: io::Error) -> io::Error {
        if crate::db::socket::is_interrupted(&e)
            && let (Some(id), Some(endpoint)) = (self.connection_id, self.endpoint.take())
            && let Ok(mut killer) = Wire::connect(&endpoint)
        {
            let _ = killer.query(&format!("KILL QUERY {id}"), |_| {});
        }
        e
    }

    /// Logs in on a connected socket.
    pub fn start(sock: Socket, e: &Endpoint) -> Result<Wire, WireError> {
        let mut w = Wire {
            sock,
            wbuf: Vec::with_capacity(8 * 1024),
            out: Vec::with_capacity(8 * 1024),
            seq: 0,
            bin_row: BinRow::default(),
            names: ColumnNames::default(),
            deprecate_eof: false,
            cache_metadata: false,
            connection_id: None,
            endpoint: None,
        };
        w.handshake(e)?;
        w.sock.handshake_done();
        Ok(w)
    }

    /// Sends `wbuf` as one packet (or several when over 16 MB) with the next sequence ids.
    pub(crate) fn send_packet(&mut self) -> io::Result<()> {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        let mut chunks = self.wbuf.chunks(MAX_PACKET).peekable();
        if chunks.peek().is_none() {
            out.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        for c in chunks {
            out.extend_from_slice(&(c.len() as u32).to_le_bytes()[..3]);
            out.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            out.extend_from_slice(c);
        }
        if self.wbuf.len().is_multiple_of(MAX_PACKET) && !self.wbuf.is_empty() {
            out.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        self.wbuf.clear();
        let sent = self.sock.write_all(&out);
        // A rare large packet does not stay allocated for the connection's life.
        if out.capacity() <= 64 * 1024 {
            self.out = out;
        }
        sent
    }

    /// Starts a command: a packet with sequence id 0 whose payload begins with `command`.
    pub(crate) fn command(&mut self, command: u8) {
        self.wbuf.clear();
        self.wbuf.push(command);
        self.seq = 0;
    }

    /// Reads the next packet (a packet of 16 MB or more is not expected in replies here).
    #[inline]
    pub(crate) fn read_packet(&mut self) -> io::Result<&[u8]> {
        if let Err(e) = self.sock.fill(4) {
            return Err(self.read_failed(e));
        }
        let h = self.sock.unread();
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        self.seq = h[3].wrapping_add(1);
        if let Err(e) = self.sock.fill(4 + len) {
            return Err(self.read_failed(e));
        }
        let r = self.sock.consume(4 + len);
        Ok(self.sock.bytes(r.start + 4..r.end))
    }

    /// Reads one command's reply: OK, ERR, a result set (rows counted; `on_row` sees a text
    /// row's first value), or a LOCAL INFILE request answered with `infile`. Follows
    /// multi-results.
    pub(crate) fn reply(
        &mut self,
        on_row: impl FnMut(&[u8]) -> Result<(), WireError>,
        infile: Option<&[u8]>,
    ) -> Result<StmtOutcome, WireError> {
        let mut on_row = on_row;
        self.reply_named(|p, _, _, _| on_row(p), infile, None, None)
    }

    /// [`Wire::reply`], with each row's result set's column names (kept in `names` when given),
    /// its columns' definitions (kept in `columns` when given: a prepared statement's, which
    /// stay as they are when the server sends none) and the result set's index.
    fn reply_named(
        &mut self,
        mut on_row: impl FnMut(&[u8], &ColumnNames, &[Column], usize) -> Result<(), WireError>,
        infile: Option<&[u8]>,
        mut names: Option<&mut ColumnNames>,
        mut columns: Option<&mut Vec<Column>>,
    ) -> Result<StmtOutcome, WireError> {
        let mut out = StmtOutcome::default();
        let none = ColumnNames::default();
        let mut set = 0;
        let (deprecate_eof, cache_metadata) = (self.deprecate_eof, self.cache_metadata);
        loop {
            let p = self.read_packet()?;
            let Some(&first) = p.first() else {
                return Err(WireError::Protocol("an empty reply packet".into()));
            };
            let status = match first {
                0x00 => {
                    out.changed += lenenc_int(&p[1..]).0;
                    ok_status(p)
                }
                0xFF => return Err(server_error(p)),
                0xFB => {
                    let data = infile.unwrap_or_default();
                    self.wbuf.clear();
                    for chunk in data.chunks(MAX_PACKET - 1) {
                        self.wbuf.extend_from_slice(chunk);
                        self.send_packet()?;
                    }
                    self.send_packet()?; // the empty packet that ends the file
                    continue;
                }
                _ => {
                    let (count, n) = lenenc_int(p);
                    // MariaDB's cached metadata: 0 when the columns are as the prepare said.
                    let definitions = !cache_metadata || p.get(n) != Some(&0);
                    if let Some(n) = names.as_deref_mut() {
                        n.clear();
                    }
                    if definitions {
                        if let Some(c) = columns.as_deref_mut() {
                            c.clear();
                        }
                        for _ in 0..count {
                            let def = self.read_packet()?;
                            if let Some(n) = names.as_deref_mut() {
                                n.push(def);
                            }
                            if let Some(c) = columns.as_deref_mut() {
                                c.push(column_def(def));
                            }
                        }
                    }
                    if !deprecate_eof {
                        self.read_packet()?; // EOF after the column definitions
                    }
                    loop {
                        let p = self.read_packet()?;
                        let Some(&lead) = p.first() else {
                            return Err(WireError::Protocol("an empty row packet".into()));
                        };
                        match lead {
                            // A text row can begin with 0xFE only as a value of 16 MB or more.
                            0xFE if deprecate_eof && p.len() < MAX_PACKET => {
                                break ok_status(p);
                            }
                            0xFE if !deprecate_eof && p.len() < 9 => {
                                break p.get(3..5).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
                            }
                            0xFF => return Err(server_error(p)),
                            _ => {
                                out.rows += 1;
                                let defs = columns.as_deref().map_or(&[][..], Vec::as_slice);
                                on_row(p, names.as_deref().unwrap_or(&none), defs, set)?;
                            }
                        }
                    }
                }
            };
            if status & MORE_RESULTS == 0 {
                return Ok(out);
            }
            set += 1;
        }
    }

    /// Runs `sql` as a text query; `on_row` sees each row.
    pub fn query(
        &mut self,
        sql: &str,
        on_row: impl FnMut(&MyRow),
    ) -> Result<StmtOutcome, WireError> {
        self.command(0x03);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send_packet()?;
        let mut on_row = on_row;
        let mut names = std::mem::take(&mut self.names);
        let out = self.reply_named(
            |p, names, _, set| {
                on_row(&MyRow(p, names, set));
                Ok(())
            },
            None,
            Some(&mut names),
            None,
        );
        self.names = names;
        out
    }

    /// COM_PING: the server answers OK and does nothing else.
    pub fn ping(&mut self) -> Result<(), WireError> {
        self.command(0x0e);
        self.send_packet()?;
        self.reply(|_| Ok(()), None).map(|_| ())
    }

    /// Runs `sql` (a LOAD DATA LOCAL INFILE statement) sending `data` as the file.
    pub fn load_local(&mut self, sql: &str, data: &[u8]) -> Result<StmtOutcome, WireError> {
        self.command(0x03);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send_packet()?;
        self.reply(|_| Ok(()), Some(data))
    }

    pub fn prepare(&mut self, sql: &str) -> Result<Prepared, WireError> {
        self.command(0x16);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send_packet()?;
        let p = self.read_packet()?;
        if p.first() == Some(&0xFF) {
            return Err(server_error(p));
        }
        if p.len() < 9 {
            return Err(WireError::Protocol("a truncated prepare reply".into()));
        }
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let columns = u16::from_le_bytes([p[5], p[6]]);
        let params = u16::from_le_bytes([p[7], p[8]]);
        let mut defs = Vec::with_capacity(columns.into());
        // Each list of definitions ends with an EOF unless CLIENT_DEPRECATE_EOF was agreed.
        let eof = u16::from(!self.deprecate_eof);
        for (n, is_columns) in [(params, false), (columns, true)] {
            if n > 0 {
                for i in 0..n + eof {
                    let p = self.read_packet()?;
                    if is_columns && i < n {
                        defs.push(column_def(p));
                    }
                }
            }
        }
        Ok(Prepared {
            id,
            params,
            columns: defs,
        })
    }

    /// Executes a prepared statement with binary parameters (integers as BIGINT, text as
    /// strings). Rows are counted; with `on_row`, each is decoded and shown to it, by the
    /// columns as the server last described them: a reply carries their definitions when they
    /// changed since the prepare (a table altered), and MariaDB's cached metadata then sends
    /// none until they change again, so they are kept in `st`.
    pub fn execute(
        &mut self,
        st: &mut Prepared,
        params: &[Param],
        on_row: Option<crate::db::conn::OnRow<'_>>,
    ) -> Result<StmtOutcome, WireError> {
        if params.len() != st.params as usize {
            return Err(WireError::Protocol(format!(
                "{} parameters for a statement that takes {}",
                params.len(),
                st.params
            )));
        }
        self.command(0x17);
        let w = &mut self.wbuf;
        w.extend_from_slice(&st.id.to_le_bytes());
        w.push(0); // no cursor
        w.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            let bitmap_at = w.len();
            w.resize(bitmap_at + params.len().div_ceil(8), 0);
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Param::Null) {
                    w[bitmap_at + i / 8] |= 1 << (i % 8);
                }
            }
            w.push(1); // types follow
            for p in params {
                let ty: u8 = match p {
                    Param::Int(_) => 0x08,  // LONGLONG
                    Param::Text(_) => 0xFE, // STRING
                    Param::Null => 0x06,    // NULL
                };
                w.extend_from_slice(&[ty, 0]);
            }
            for p in params {
                match p {
                    Param::Int(v) => w.extend_from_slice(&v.to_le_bytes()),
                    Param::Text(s) => {
                        put_lenenc(w, s.len() as u64);
                        w.extend_from_slice(s.as_bytes());
                    }
                    Param::Null => {}
                }
            }
        }
        self.send_packet()?;
        // Rows only counted: the definitions matter only to a later decode, which without
        // cached metadata reads the ones its own reply carries.
        let columns = (on_row.is_some() || self.cache_metadata).then_some(&mut st.columns);
        match on_row {
            None => self.reply_named(|_, _, _, _| Ok(()), None, None, columns),
            Some(f) => {
                let mut row = std::mem::take(&mut self.bin_row);
                let out = self.reply_named(
                    |p, _, defs, _| {
                        row.decode(p, defs)?;
                        f(&row);
                        Ok(())
                    },
                    None,
                    None,
                    columns,
                );
                self.bin_row = row;
                out
            }
        }
    }
}

/// The server status of an OK packet (header 0x00, or 0xFE ending a result set under
/// CLIENT_DEPRECATE_EOF): after the affected rows and the last insert id.
fn ok_status(p: &[u8]) -> u16 {
    let rest = p.get(1..).unwrap_or_default();
    let (_, n) = lenenc_int(rest);
    let (_, m) = lenenc_int(rest.get(n..).unwrap_or_default());
    rest.get(n + m..n + m + 2)
        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.command(0x01);
        let _ = self.send_packet();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_round_trip() {
        for v in [
            0u64,
            250,
            251,
            65_535,
            65_536,
            16_777_215,
            16_777_216,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            assert_eq!(lenenc_int(&b), (v, b.len()), "{v}");
        }
    }

    #[test]
    fn truncated_packets_are_errors_not_panics() {
        assert_eq!(lenenc_int(&[0xFE, 1, 2]), (0, 3));
        assert_eq!(lenenc_int(&[]), (0, 0));
        assert!(matches!(server_error(&[0xFF]), WireError::Protocol(_)));
    }

    #[test]
    fn server_errors_keep_code_state_and_message() {
        let p = b"\xff\xbd\x04#40001Deadlock found";
        match server_error(p) {
            WireError::Server {
                code,
                state,
                message,
            } => {
                assert_eq!(
                    (code, state.as_str(), message.as_str()),
                    (1213, "40001", "Deadlock found")
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
