//! A lean synchronous client for PostgreSQL's frontend/backend protocol (version 3).
//!
//! Why not the `postgres` crate: it runs tokio underneath, and its client CPU per point select
//! is a multiple of this client's (bench/clients measures both on one server). This client does only what a benchmark needs, with
//! reused buffers and one write and one read per statement: startup and authentication
//! (`startup.rs`), named prepared statements, Bind/Execute/Sync, simple queries and COPY FROM
//! STDIN.

use std::io;

use crate::db::conn::{Param, StmtOutcome};
use crate::db::socket::{MAX_MESSAGE, Socket};

/// An error from the server (with its SQLSTATE) or from the connection.
#[derive(Debug)]
pub enum WireError {
    Io(io::Error),
    Server {
        code: String,
        message: String,
        notes: Option<Box<crate::error::ServerNotes>>,
    },
    Protocol(String),
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        WireError::Io(e)
    }
}

// OIDs of the parameter types that are sent in binary.
pub(super) const INT2: u32 = 21;
pub(super) const INT4: u32 = 23;
pub(super) const INT8: u32 = 20;

pub struct Wire {
    pub(super) sock: Socket,
    pub(super) wbuf: Vec<u8>,
    /// The last RowDescription's body, for the names of a simple query's columns (pgbench's
    /// `\gset`); a few dozen bytes copied per result set.
    pub(super) desc: Vec<u8>,
    /// The server's BackendKeyData (process id, secret) and where it listens: Ctrl-C during a
    /// statement sends a CancelRequest, as pgbench and psql do, so that the server stops
    /// working on it.
    pub(super) key: Option<(i32, i32)>,
    pub(super) listener: Option<Listener>,
    /// The transaction status of the last ReadyForQuery: `I` idle, `T` in a transaction
    /// block, `E` in a failed one.
    pub(super) status: u8,
}

/// Where a server listens, for a CancelRequest on a connection of its own.
#[derive(Clone, Debug)]
pub(super) enum Listener {
    Unix(std::path::PathBuf),
    Tcp(String, u16),
}

/// How long a CancelRequest may take to connect and send.
const CANCEL_BOUND: std::time::Duration = std::time::Duration::from_secs(2);

impl Listener {
    /// Sends the CancelRequest of `(pid, secret)`; best effort, bounded.
    fn cancel(&self, (pid, secret): (i32, i32)) {
        use std::io::Write;
        let mut msg = Vec::with_capacity(16);
        msg.extend_from_slice(&16i32.to_be_bytes());
        msg.extend_from_slice(&80_877_102i32.to_be_bytes());
        msg.extend_from_slice(&pid.to_be_bytes());
        msg.extend_from_slice(&secret.to_be_bytes());
        let _ = match self {
            Listener::Unix(path) => {
                std::os::unix::net::UnixStream::connect(path).and_then(|mut s| {
                    s.set_write_timeout(Some(CANCEL_BOUND))?;
                    s.write_all(&msg)
                })
            }
            Listener::Tcp(host, port) => {
                std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), *port)).and_then(
                    |mut addrs| {
                        let addr = addrs.next().ok_or_else(|| io::Error::other("no address"))?;
                        let mut s = std::net::TcpStream::connect_timeout(&addr, CANCEL_BOUND)?;
                        s.set_write_timeout(Some(CANCEL_BOUND))?;
                        s.write_all(&msg)
                    },
                )
            }
        };
    }
}

/// Starts a message with `tag`; [`end`] fills in its length.
pub(super) fn begin(buf: &mut Vec<u8>, tag: u8) -> usize {
    buf.push(tag);
    let at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    at
}

pub(super) fn end(buf: &mut [u8], at: usize) {
    let len = (buf.len() - at) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

pub(super) fn cstr(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(s.as_bytes());
    buf.push(0);
}

/// Big-endian integers at the start of `b`; 0 when `b` is too short (a malformed message then
/// fails later as a protocol error rather than a panic).
pub(super) fn be_i16(b: &[u8]) -> i16 {
    b.get(..2).map_or(0, |x| i16::from_be_bytes([x[0], x[1]]))
}

pub(super) fn be_i32(b: &[u8]) -> i32 {
    b.get(..4)
        .map_or(0, |x| i32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

/// A DataRow message's body (a count of values, then each as a length, -1 for NULL, and
/// bytes), the RowDescription before it, when there was one, and which of the query's
/// result sets it is in.
pub struct PgRow<'a>(&'a [u8], &'a [u8], usize);

impl crate::db::conn::TextRow for PgRow<'_> {
    fn len(&self) -> usize {
        usize::try_from(be_i16(self.0)).unwrap_or(0)
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let count = usize::try_from(be_i16(self.0)).unwrap_or(0);
        let mut at = 2;
        for n in 0..count {
            let len = be_i32(self.0.get(at..)?);
            at += 4;
            let value = usize::try_from(len).ok().map(|l| (at, at + l));
            if n == i {
                return value.and_then(|(a, b)| self.0.get(a..b));
            }
            at = value.map_or(at, |(_, end)| end);
        }
        None
    }

    fn result_set(&self) -> usize {
        self.2
    }

    fn name(&self, i: usize) -> Option<&str> {
        // RowDescription: a count, then per field its name (NUL-ended) and 18 bytes of types.
        let count = usize::try_from(be_i16(self.1)).unwrap_or(0);
        let mut at = 2;
        for n in 0..count.min(i + 1) {
            let rest = self.1.get(at..)?;
            let len = rest.iter().position(|&b| b == 0)?;
            if n == i {
                return std::str::from_utf8(&rest[..len]).ok();
            }
            at += len + 1 + 18;
        }
        None
    }
}

/// The last number of a command tag: `UPDATE 3`, `INSERT 0 1`, `COPY 100`, `SELECT 5`.
pub(super) fn tag_count(body: &[u8]) -> u64 {
    let tag = body.strip_suffix(&[0]).unwrap_or(body);
    let digits = tag.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&tag[tag.len() - digits..])
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The code of the error a statement gets when the server answers it with COPY: the runner's
/// statements have no data to send and no place for the rows, as in pgbench.
pub const COPY_REFUSED: &str = "dbsweep:copy";

fn copy_refused() -> WireError {
    WireError::Server {
        code: COPY_REFUSED.into(),
        message: "COPY is not supported in a workload's statements".into(),
        notes: None,
    }
}

pub(super) fn server_error(body: &[u8]) -> WireError {
    let (mut code, mut message) = (String::new(), String::new());
    let mut notes = crate::error::ServerNotes::default();
    for field in body.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let text = String::from_utf8_lossy(&field[1..]).into_owned();
        match field[0] {
            b'C' => code = text,
            b'M' => message = text,
            // As libpq prints it: the server's (localized) word.
            b'S' => notes.severity = text,
            b'D' => notes.detail = Some(text),
            b'H' => notes.hint = Some(text),
            b'P' => notes.position = text.parse().ok(),
            b'q' => notes.internal_query = Some(text),
            b'p' => notes.internal_position = text.parse().ok(),
            b'W' => notes.context = Some(text),
            _ => {}
        }
    }
    if message.is_empty() {
        message = "the server reported an error without a message".into();
    }
    WireError::Server {
        code,
        message,
        notes: Some(Box::new(notes)),
    }
}

impl Wire {
    /// The negotiated TLS protocol and cipher; None on a plain connection.
    pub fn tls_info(&self) -> Option<String> {
        self.sock.tls_info()
    }

    /// Bounds each statement's wait by `bound` (see [`Socket::bound_statements`]).
    pub fn bound_statements(&mut self, bound: std::time::Duration) {
        self.sock.bound_statements(bound);
    }

    pub(super) fn flush(&mut self) -> io::Result<()> {
        let r = self.sock.write_all(&self.wbuf);
        self.wbuf.clear();
        r
    }

    /// Returns the next message's tag and where its body is (see [`Socket::bytes`]).
    /// A length below 4 (the length counts itself) or beyond [`MAX_MESSAGE`] is a protocol
    /// error: the stream is not PostgreSQL's, or it is corrupt.
    pub(super) fn next_message(&mut self) -> Result<(u8, std::ops::Range<usize>), WireError> {
        if let Err(e) = self.sock.fill(5) {
            return Err(self.read_failed(e));
        }
        // fill(5) above: the tag and the four bytes of the length are there.
        let h = self.sock.unread();
        let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
        if !(4..=MAX_MESSAGE).contains(&len) {
            let tag = self.sock.unread()[0];
            return Err(WireError::Protocol(format!(
                "a message of impossible length {len} (tag {tag:#04x}): is this a PostgreSQL server?"
            )));
        }
        if let Err(e) = self.sock.fill(1 + len) {
            return Err(self.read_failed(e));
        }
        let tag = self.sock.unread()[0];
        let r = self.sock.consume(1 + len);
        Ok((tag, r.start + 5..r.end))
    }

    /// What a failed read returns: when Ctrl-C ended the wait, the statement in flight is
    /// cancelled on the server first (once).
    #[cold]
    pub(super) fn read_failed(&mut self, e: io::Error) -> WireError {
        if crate::db::socket::is_interrupted(&e)
            && let (Some(key), Some(listener)) = (self.key, self.listener.take())
        {
            listener.cancel(key);
        }
        WireError::Io(e)
    }

    /// Reads up to ReadyForQuery, counting rows and the command tag; the first error wins.
    /// `on_row` sees each row's first column.
    pub(super) fn collect(
        &mut self,
        mut on_row: impl FnMut(&PgRow),
    ) -> Result<StmtOutcome, WireError> {
        let mut out = StmtOutcome::default();
        let mut error = None;
        // Result sets ended so far (several when one query string holds several statements).
        let mut sets = 0;
        loop {
            let (tag, range) = match self.next_message() {
                Ok(m) => m,
                // A FATAL error comes just before the server closes: its message says why.
                Err(e) => return Err(error.unwrap_or(e)),
            };
            match tag {
                b'D' => {
                    out.rows += 1;
                    on_row(&PgRow(self.sock.bytes(range), &self.desc, sets));
                }
                b'T' => {
                    self.desc.clear();
                    self.desc.extend_from_slice(self.sock.bytes(range));
                }
                b'C' => {
                    out.changed += tag_count(self.sock.bytes(range));
                    sets += 1;
                }
                b'I' => sets += 1,
                b'K' => {
                    let b = self.sock.bytes(range);
                    if b.len() >= 8 {
                        self.key = Some((be_i32(&b[..4]), be_i32(&b[4..8])));
                    }
                }
                b'E' => error = error.or(Some(server_error(self.sock.bytes(range)))),
                b'Z' => {
                    self.status = self.sock.bytes(range).first().copied().unwrap_or(b'I');
                    return error.map_or(Ok(out), Err);
                }
                b'G' => {
                    // A COPY FROM STDIN nobody asked for here: end it so the connection stays
                    // usable, and refuse the statement whatever the server says of the end.
                    let at = begin(&mut self.wbuf, b'f');
                    cstr(&mut self.wbuf, "unexpected COPY");
                    end(&mut self.wbuf, at);
                    self.flush()?;
                    error = Some(copy_refused());
                }
                // COPY TO STDOUT (or both ways): its rows are not a statement's result here.
                b'H' | b'W' => error = error.or(Some(copy_refused())),
                _ => {} // ParseComplete, BindComplete, notices, parameter status, ...
            }
        }
    }

    pub(super) fn wait_ready(&mut self) -> Result<(), WireError> {
        self.collect(|_| {}).map(drop)
    }

    /// Prepares `sql` (with `$n` placeholders) as statement `name`; returns its parameter types.
    pub fn prepare(&mut self, name: &str, sql: &str) -> Result<Vec<u32>, WireError> {
        let at = begin(&mut self.wbuf, b'P');
        cstr(&mut self.wbuf, name);
        cstr(&mut self.wbuf, sql);
        self.wbuf.extend_from_slice(&0i16.to_be_bytes());
        end(&mut self.wbuf, at);
        let at = begin(&mut self.wbuf, b'D');
        self.wbuf.push(b'S');
        cstr(&mut self.wbuf, name);
        end(&mut self.wbuf, at);
        let at = begin(&mut self.wbuf, b'S');
        end(&mut self.wbuf, at);
        self.flush()?;
        let mut types = Vec::new();
        let mut error = None;
        loop {
            let (tag, range) = self.next_message()?;
            let body = &self.sock.bytes(range);
            match tag {
                b't' => {
                    types = (0..usize::try_from(be_i16(body)).unwrap_or(0))
                        .map(|i| be_i32(body.get(2 + 4 * i..).unwrap_or_default()) as u32)
                        .collect()
                }
                b'E' => error = error.or(Some(server_error(body))),
                b'Z' => {
                    self.status = body.first().copied().unwrap_or(b'I');
                    return error.map_or(Ok(types), Err);
                }
                _ => {}
            }
        }
    }

    /// Runs prepared statement `name` with `params` (typed by `types`); integers go in binary,
    /// everything else as text. Results come back as text.
    pub fn execute(
        &mut self,
        name: &str,
        types: &[u32],
        params: &[Param],
        on_row: impl FnMut(&PgRow),
    ) -> Result<StmtOutcome, WireError> {
        self.queue_execute(name, types, params);
        self.queue_sync();
        self.flush()?;
        self.collect(on_row)
    }

    /// Appends Bind and Execute of prepared statement `name` to what goes out next, without
    /// sending it: a pipeline ends with [`Wire::queue_sync`] and goes out with
    /// [`Wire::send_queued`].
    pub fn queue_execute(&mut self, name: &str, types: &[u32], params: &[Param]) {
        let w = &mut self.wbuf;
        let at = begin(w, b'B');
        w.push(0); // unnamed portal
        cstr(w, name);
        w.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for (i, p) in params.iter().enumerate() {
            let binary =
                matches!(p, Param::Int(_)) && matches!(types.get(i), Some(&(INT2 | INT4 | INT8)));
            w.extend_from_slice(&i16::from(binary).to_be_bytes());
        }
        w.extend_from_slice(&(params.len() as i16).to_be_bytes());
        for (i, p) in params.iter().enumerate() {
            match *p {
                Param::Null => w.extend_from_slice(&(-1i32).to_be_bytes()),
                Param::Int(v) => match types.get(i) {
                    Some(&INT2) => {
                        w.extend_from_slice(&2i32.to_be_bytes());
                        w.extend_from_slice(&(v as i16).to_be_bytes());
                    }
                    Some(&INT4) => {
                        w.extend_from_slice(&4i32.to_be_bytes());
                        w.extend_from_slice(&(v as i32).to_be_bytes());
                    }
                    Some(&INT8) => {
                        w.extend_from_slice(&8i32.to_be_bytes());
                        w.extend_from_slice(&v.to_be_bytes());
                    }
                    _ => {
                        let text = v.to_string();
                        w.extend_from_slice(&(text.len() as i32).to_be_bytes());
                        w.extend_from_slice(text.as_bytes());
                    }
                },
                Param::Text(s) => {
                    w.extend_from_slice(&(s.len() as i32).to_be_bytes());
                    w.extend_from_slice(s.as_bytes());
                }
            }
        }
        w.extend_from_slice(&0i16.to_be_bytes()); // all results as text
        end(w, at);
        let at = begin(w, b'E');
        w.push(0);
        w.extend_from_slice(&0i32.to_be_bytes());
        end(w, at);
    }

    /// Appends a Sync: the statements queued since the previous one end there (an implicit
    /// transaction when no BEGIN is open; after an error the server skips to the next Sync).
    pub fn queue_sync(&mut self) {
        let at = begin(&mut self.wbuf, b'S');
        end(&mut self.wbuf, at);
    }

    /// Appends a simple query (its own implicit Sync).
    pub fn queue_simple(&mut self, sql: &str) {
        let at = begin(&mut self.wbuf, b'Q');
        cstr(&mut self.wbuf, sql);
        end(&mut self.wbuf, at);
    }

    /// Forgets what was queued and not sent.
    pub fn discard_queued(&mut self) {
        self.wbuf.clear();
    }

    /// Sends everything queued in one write and reads the answers up to the `syncs`th
    /// ReadyForQuery (a simple query counts as one Sync). `done` sees the outcome of each
    /// statement that completed, in order. Returns whether a transaction is still open
    /// (ReadyForQuery's status), and the first server error with the number of statements
    /// that completed before it.
    ///
    /// Everything is written before anything is read: the queue holds one event's statements,
    /// a few kilobytes, far below the socket's buffer, so the server never waits for us to
    /// read while we wait for it to read.
    pub fn send_queued(
        &mut self,
        syncs: usize,
        mut done: impl FnMut(StmtOutcome),
    ) -> Result<(bool, Option<(usize, WireError)>), WireError> {
        if syncs == 0 {
            return Err(WireError::Protocol("a pipeline without a Sync".into()));
        }
        self.flush()?;
        let mut out = StmtOutcome::default();
        let (mut completed, mut left) = (0, syncs);
        let mut error = None;
        loop {
            let (tag, range) = self.next_message()?;
            match tag {
                b'D' => out.rows += 1,
                b'C' | b'I' => {
                    if tag == b'C' {
                        out.changed = tag_count(self.sock.bytes(range));
                    }
                    done(std::mem::take(&mut out));
                    completed += 1;
                }
                b'E' => {
                    if error.is_none() {
                        error = Some((completed, server_error(self.sock.bytes(range))));
                    }
                    out = StmtOutcome::default();
                }
                b'Z' => {
                    left -= 1;
                    if left == 0 {
                        let status = self.sock.bytes(range).first().copied();
                        self.status = status.unwrap_or(b'I');
                        return Ok((status != Some(b'I'), error));
                    }
                }
                _ => {} // BindComplete, notices, parameter status, ...
            }
        }
    }

    /// Runs `sql` with the simple query protocol; `on_row` sees each row.
    pub fn simple(
        &mut self,
        sql: &str,
        on_row: impl FnMut(&PgRow),
    ) -> Result<StmtOutcome, WireError> {
        let at = begin(&mut self.wbuf, b'Q');
        cstr(&mut self.wbuf, sql);
        end(&mut self.wbuf, at);
        self.flush()?;
        self.collect(on_row)
    }

    /// Runs `COPY ... FROM STDIN`, sending what `fill` appends to its buffer until it returns
    /// false. Returns the rows the server copied.
    pub fn copy_in(
        &mut self,
        sql: &str,
        mut fill: impl FnMut(&mut Vec<u8>) -> bool,
    ) -> Result<u64, WireError> {
        let at = begin(&mut self.wbuf, b'Q');
        cstr(&mut self.wbuf, sql);
        end(&mut self.wbuf, at);
        self.flush()?;
        loop {
            let (tag, range) = self.next_message()?;
            match tag {
                b'G' => break,
                b'E' => {
                    let e = server_error(self.sock.bytes(range));
                    self.wait_ready().ok();
                    return Err(e);
                }
                _ => {}
            }
        }
        let mut chunk = Vec::with_capacity(256 * 1024);
        let mut more = true;
        while more {
            chunk.clear();
            while chunk.len() < 240 * 1024 {
                if !fill(&mut chunk) {
                    more = false;
                    break;
                }
            }
            if !chunk.is_empty() {
                let at = begin(&mut self.wbuf, b'd');
                self.wbuf.extend_from_slice(&chunk);
                end(&mut self.wbuf, at);
                self.flush()?;
            }
        }
        let at = begin(&mut self.wbuf, b'c');
        end(&mut self.wbuf, at);
        self.flush()?;
        self.collect(|_| {}).map(|o| o.changed)
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        let at = begin(&mut self.wbuf, b'X');
        end(&mut self.wbuf, at);
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_tags_give_the_changed_rows() {
        assert_eq!(tag_count(b"UPDATE 3\0"), 3);
        assert_eq!(tag_count(b"INSERT 0 1\0"), 1);
        assert_eq!(tag_count(b"COPY 250000\0"), 250_000);
        assert_eq!(tag_count(b"BEGIN\0"), 0);
    }

    #[test]
    fn server_errors_keep_code_and_message() {
        let body = b"SERROR\0C40P01\0Mdeadlock detected\0\0";
        match server_error(body) {
            WireError::Server { code, message, .. } => assert_eq!(
                (code.as_str(), message.as_str()),
                ("40P01", "deadlock detected")
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn short_bodies_read_as_zero_instead_of_panicking() {
        assert_eq!(be_i32(&[1, 2]), 0);
        assert_eq!(be_i16(&[]), 0);
        assert_eq!(be_i32(&[0, 0, 1, 0]), 256);
    }

    #[test]
    fn messages_carry_their_length() {
        let mut buf = Vec::new();
        let at = begin(&mut buf, b'Q');
        cstr(&mut buf, "SELECT 1");
        end(&mut buf, at);
        assert_eq!(buf[0], b'Q');
        assert_eq!(be_i32(&buf[1..]) as usize, buf.len() - 1);
    }
}
