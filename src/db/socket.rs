//! The byte stream under dbsweep's own protocol clients (`pgwire`, `mywire`): TCP or a Unix
//! socket, with one reused read buffer.
//!
//! Every wait here has a bound and ends on Ctrl-C: a server that accepts and never answers,
//! trickles a byte a second or goes silent after authentication must not hang dbsweep. The
//! socket's kernel timeouts are set to a short tick, so a blocked read or write wakes up to
//! look at the stop flag and its deadline without any extra system call on the hot path (a
//! read that finds its answer within a tick costs exactly what a plain blocking read does).

use crate::error::Error;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often a blocked wait wakes up to look at the stop flag and its deadline.
const TICK: Duration = Duration::from_millis(250);

/// The largest message a server may announce: a length beyond it is a protocol error, not a
/// reason to grow the buffer (random bytes would otherwise ask for gigabytes).
pub const MAX_MESSAGE: usize = 1 << 30;

/// A connection's bounds: connecting and the whole handshake (authentication up to the first
/// ready-for-query), and each statement's wait after it. They travel with the connection's
/// options, from the command line (`--connect-timeout`, `--query-timeout`) down.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timeouts {
    pub connect: Duration,
    /// None: no bound (the default: a benchmark's statements may take long).
    pub query: Option<Duration>,
}

impl Default for Timeouts {
    /// 10 s to connect and log in, no bound on a statement.
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(10),
            query: None,
        }
    }
}

impl Timeouts {
    /// `--connect-timeout` and `--query-timeout` (0: none), checked.
    pub fn from_seconds(connect: f64, query: f64) -> Result<Timeouts, Error> {
        let check = |name: &str, v: f64, min: f64| {
            if v.is_finite() && v >= min && v <= crate::input::MAX_SECONDS {
                Ok(Duration::from_secs_f64(v))
            } else {
                Err(Error::Usage(format!(
                    "--{name} {v}: must be a number of seconds from {min} to {} (a year)",
                    crate::input::MAX_SECONDS
                )))
            }
        };
        let connect = check("connect-timeout", connect, 0.001)?;
        let query = check("query-timeout", query, 0.0)?;
        Ok(Timeouts {
            connect,
            query: (!query.is_zero()).then_some(query),
        })
    }
}

/// The error of a wait that Ctrl-C (or SIGTERM, SIGHUP) ended.
pub fn interrupted_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        "stopped while waiting for the server",
    )
}

/// Whether `e` is [`interrupted_error`].
pub fn is_interrupted(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Interrupted
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TCP under TLS (rustls); boxed, as its state is large and the other two are a descriptor.
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, ReadAhead<TcpStream>>>),
    /// Between taking the TCP stream and wrapping it in TLS.
    Moved,
}

pub struct Socket {
    stream: Stream,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// When the current wait gives up (the handshake's, or the statement's under a query
    /// timeout).
    deadline: Option<Instant>,
    /// What `deadline` bounds, for the error message.
    bounding: &'static str,
    /// Each statement's bound (set after the handshake from `--query-timeout`).
    per_statement: Option<Duration>,
    /// The statements' bound after the handshake (`--query-timeout`).
    query_timeout: Option<Duration>,
}

impl Socket {
    /// Connects over TCP with Nagle's algorithm off (requests are single small writes), trying
    /// each address of `host` within `--connect-timeout`.
    pub fn tcp(host: &str, port: u16, t: Timeouts) -> io::Result<Socket> {
        let limit = t.connect;
        let deadline = Instant::now() + limit;
        // A name that does not resolve is said in libpq's words (std's add their own prefix).
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|e| {
                let text = e.to_string();
                let why = text
                    .strip_prefix("failed to lookup address information: ")
                    .unwrap_or(&text);
                io::Error::new(
                    e.kind(),
                    format!("could not translate host name \"{host}\" to address: {why}"),
                )
            })?
            .collect();
        let mut last = None;
        for addr in &addrs {
            match connect_until(addr, deadline, limit) {
                Ok(s) => {
                    s.set_nodelay(true)?;
                    s.set_read_timeout(Some(TICK))?;
                    s.set_write_timeout(Some(TICK))?;
                    return Ok(Socket::new(Stream::Tcp(s), deadline, t));
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"))
        }))
    }

    pub fn unix(path: &Path, t: Timeouts) -> io::Result<Socket> {
        let deadline = Instant::now() + t.connect;
        let s = UnixStream::connect(path)?;
        s.set_write_timeout(Some(TICK))?;
        Ok(Socket::new(Stream::Unix(s), deadline, t))
    }

    /// A socket over an already connected Unix stream (one end of a pair, for the fuzz
    /// harness and tests that play the server).
    pub fn from_unix(s: UnixStream, t: Timeouts) -> io::Result<Socket> {
        s.set_write_timeout(Some(TICK))?;
        Ok(Socket::new(Stream::Unix(s), Instant::now() + t.connect, t))
    }

    fn new(stream: Stream, deadline: Instant, t: Timeouts) -> Socket {
        Socket {
            stream,
            buf: vec![0; 64 * 1024],
            pos: 0,
            end: 0,
            deadline: Some(deadline),
            bounding: "the connection and login (--connect-timeout)",
            per_statement: None,
            query_timeout: t.query,
        }
    }

    /// Wraps the connected TCP stream in TLS and completes the handshake within the connect
    /// deadline (an error says what about the certificate failed). Nothing may be buffered
    /// unread: TLS begins where the plain answer to the TLS request ended.
    pub fn start_tls(&mut self, tls: &super::tls::Tls, host: &str) -> io::Result<()> {
        if self.end != self.pos {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the server sent more than its answer to the TLS request",
            ));
        }
        let name = super::tls::server_name(host).map_err(io::Error::other)?;
        let tcp = match std::mem::replace(&mut self.stream, Stream::Moved) {
            Stream::Tcp(s) => s,
            other => {
                self.stream = other;
                return Err(io::Error::other(
                    "TLS needs a TCP connection (a Unix socket has none)",
                ));
            }
        };
        let conn = rustls::ClientConnection::new(tls.config.clone(), name)
            .map_err(|e| io::Error::other(super::tls::describe(&e, tls.mode)))?;
        let mut stream = rustls::StreamOwned::new(conn, ReadAhead::new(tcp));
        while stream.conn.is_handshaking() {
            match stream.conn.complete_io(&mut stream.sock) {
                Ok(_) => {}
                Err(e) if is_tick(&e) => self.still_waiting()?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let rustls_error = e
                        .get_ref()
                        .and_then(|i| i.downcast_ref::<rustls::Error>())
                        .map(|r| super::tls::describe(r, tls.mode));
                    return Err(match rustls_error {
                        Some(text) => io::Error::new(io::ErrorKind::InvalidData, text),
                        None => e,
                    });
                }
            }
        }
        self.stream = Stream::Tls(Box::new(stream));
        Ok(())
    }

    /// The negotiated TLS protocol and cipher suite; None on a plain connection.
    pub fn tls_info(&self) -> Option<String> {
        match &self.stream {
            Stream::Tls(s) => super::tls::negotiated(&s.conn),
            _ => None,
        }
    }

    /// The handshake is over: from now on each statement's wait is bounded by
    /// `--query-timeout` alone (none by default: a benchmark's statements may take long).
    pub fn handshake_done(&mut self) {
        self.deadline = None;
        self.per_statement = self.query_timeout;
        self.bounding = "the statement (--query-timeout)";
    }

    /// Bounds each statement's wait by `bound` (a managed server's set-up connection: every
    /// wait of dbsweep's has a bound, whatever `--query-timeout` says).
    pub fn bound_statements(&mut self, bound: Duration) {
        self.per_statement = Some(bound);
        self.bounding = "the set-up statement";
    }

    /// Sends `bytes`; a new statement's wait starts here.
    pub fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        if let Some(limit) = self.per_statement {
            self.deadline = Some(Instant::now() + limit);
        }
        while !bytes.is_empty() {
            let r = match &mut self.stream {
                Stream::Tcp(s) => s.write(bytes),
                Stream::Unix(s) => s.write(bytes),
                Stream::Tls(s) => s.write(bytes),
                Stream::Moved => Err(io::ErrorKind::NotConnected.into()),
            };
            match r {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => bytes = &bytes[n..],
                Err(e) if is_tick(&e) => self.still_waiting()?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // TLS takes the bytes into its own buffer: they leave when its records are written.
        if let Stream::Tls(s) = &mut self.stream {
            while s.conn.wants_write() {
                match s.conn.complete_io(&mut s.sock) {
                    Ok(_) => {}
                    Err(e) if is_tick(&e) => waiting_until(self.deadline, self.bounding)?,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    /// A wait's tick passed: Err when the run was stopped or the wait's deadline passed.
    fn still_waiting(&self) -> io::Result<()> {
        waiting_until(self.deadline, self.bounding)
    }

    /// The bytes received and not consumed yet.
    pub fn unread(&self) -> &[u8] {
        &self.buf[self.pos..self.end]
    }

    /// Consumes `n` unread bytes; returns where they are, for [`Socket::bytes`].
    pub fn consume(&mut self, n: usize) -> Range<usize> {
        let start = self.pos;
        self.pos += n;
        start..self.pos
    }

    /// Bytes consumed by the last [`Socket::consume`] calls (valid until the next `fill`).
    pub fn bytes(&self, r: Range<usize>) -> &[u8] {
        &self.buf[r]
    }

    /// Makes sure at least `n` unread bytes are buffered, reading as needed.
    #[inline]
    pub fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        self.read_more(n)
    }

    /// [`Socket::fill`] when the buffer holds fewer than `n` unread bytes: kept out of line so
    /// that the common case (a reply's next packet already received) is a comparison.
    #[inline(never)]
    fn read_more(&mut self, n: usize) -> io::Result<()> {
        if n > MAX_MESSAGE + 16 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the server announced a message of {n} bytes (more than 1 GiB)"),
            ));
        }
        if self.pos + n > self.buf.len() {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end - self.pos < n {
            if self.end == self.buf.len() {
                // Grow with what arrives, never to what a length field claims: a lying server
                // costs at most twice the bytes it really sent.
                let want = (self.pos + n).min(self.buf.len() * 2);
                self.buf.resize(want, 0);
            }
            let r = match &mut self.stream {
                Stream::Tcp(s) => s.read(&mut self.buf[self.end..]),
                Stream::Unix(s) => match wait_readable(s) {
                    Ok(true) => s.read(&mut self.buf[self.end..]),
                    Ok(false) => Err(io::ErrorKind::WouldBlock.into()),
                    Err(e) => Err(e),
                },
                Stream::Tls(s) => s.read(&mut self.buf[self.end..]),
                Stream::Moved => Err(io::ErrorKind::NotConnected.into()),
            };
            match r {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    ));
                }
                Ok(got) => {
                    self.end += got;
                    // A server that trickles bytes never lets a read time out: look at the
                    // deadline after each partial read too (no cost without a deadline).
                    if self.deadline.is_some() && self.end - self.pos < n {
                        self.still_waiting()?;
                    }
                }
                Err(e) if is_tick(&e) => self.still_waiting()?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The TCP stream under TLS, with a read-ahead buffer.
///
/// rustls reads its socket at most 4 KB at a time, so a reply of several kilobytes (a range
/// select's 100 rows are about 13 KB) cost a `recv` per 4 KB. Here one `recv` takes whatever
/// has arrived, up to 64 KB, and rustls's reads are served from memory: on PostgreSQL's
/// oltp_read_write over TLS (strace, 1 client) receives per query fell from 1.46 to 1.07.
/// Writes go straight to the stream (rustls sends its records with one `writev`).
pub(super) struct ReadAhead<S> {
    inner: S,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
}

impl<S> ReadAhead<S> {
    fn new(inner: S) -> ReadAhead<S> {
        ReadAhead {
            inner,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            pos: 0,
            end: 0,
        }
    }
}

impl<S: Read> Read for ReadAhead<S> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.end {
            // The stream's own errors (a tick's timeout) and its end (0) pass through as they
            // are; nothing buffered is lost by them, as the buffer is empty here.
            let n = self.inner.read(&mut self.buf)?;
            self.pos = 0;
            self.end = n;
        }
        let n = out.len().min(self.end - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl<S: Write> Write for ReadAhead<S> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.inner.write(bytes)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.inner.write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A wait's tick passed: Err when the run was stopped or `deadline` (of `bounding`) passed.
fn waiting_until(deadline: Option<Instant>, bounding: &str) -> io::Result<()> {
    if crate::interrupt::interrupted() {
        return Err(interrupted_error());
    }
    if let Some(d) = deadline
        && Instant::now() >= d
    {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no complete answer from the server within the bound of {bounding}"),
        ));
    }
    Ok(())
}

/// A kernel timeout of one tick (SO_RCVTIMEO / SO_SNDTIMEO) ran out.
fn is_tick(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Connects to `addr` by the deadline, one tick at a time so that Ctrl-C ends the wait.
fn connect_until(addr: &SocketAddr, deadline: Instant, limit: Duration) -> io::Result<TcpStream> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "no answer to connecting to {addr} within {} s (--connect-timeout)",
                    limit.as_secs_f64()
                ),
            ));
        }
        match TcpStream::connect_timeout(addr, left.min(TICK)) {
            Ok(s) => return Ok(s),
            Err(e) if is_tick(&e) => {
                if crate::interrupt::interrupted() {
                    return Err(interrupted_error());
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Waits up to a tick until the Unix socket has data to read; false when the tick passed.
///
/// A reader blocked in `recv` on an AF_UNIX stream is woken also when the peer consumes what we
/// sent (the kernel's write-space wake-up shares the socket's wait queue and is not filtered), so
/// a blocking `recv` sleeps twice per round trip. `poll(POLLIN)` is woken only for data, which
/// saves a context switch per query (about 0.9 switches per query measured on PostgreSQL) at the
/// price of one cheap system call.
fn wait_readable(s: &UnixStream) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let tick_ms = TICK.as_millis() as libc::c_int;
    loop {
        // SAFETY: one valid pollfd, for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, tick_ms) };
        if r >= 0 {
            return Ok(r > 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that hands out its chunks one per read, a tick's timeout between the first
    /// and the rest, and counts the reads and the buffers of each vectored write.
    struct Chunks {
        chunks: Vec<Vec<u8>>,
        reads: usize,
        timed_out: bool,
        written: Vec<usize>,
    }

    impl Read for Chunks {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            if self.reads == 2 && !self.timed_out {
                self.timed_out = true;
                return Err(io::ErrorKind::WouldBlock.into());
            }
            if self.chunks.is_empty() {
                return Ok(0);
            }
            let c = self.chunks.remove(0);
            assert!(c.len() <= out.len(), "one read takes a whole chunk here");
            out[..c.len()].copy_from_slice(&c);
            Ok(c.len())
        }
    }

    impl Write for Chunks {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.written.push(bytes.len());
            Ok(bytes.len())
        }

        fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
            self.written.push(bufs.len());
            Ok(bufs.iter().map(|b| b.len()).sum())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn read_ahead_takes_what_arrived_in_one_read_and_keeps_every_byte() {
        let data: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let chunks = vec![data[..13_000].to_vec(), data[13_000..].to_vec()];
        let mut r = ReadAhead::new(Chunks {
            chunks,
            reads: 0,
            timed_out: false,
            written: Vec::new(),
        });
        let mut got = Vec::new();
        let mut piece = [0u8; 4096];
        let mut ticks = 0;
        loop {
            match r.read(&mut piece) {
                Ok(0) => break,
                Ok(n) => got.extend_from_slice(&piece[..n]),
                Err(e) if is_tick(&e) => ticks += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, data, "every byte, in order");
        assert_eq!(ticks, 1, "the stream's timeout reaches the reader");
        // 13,000 bytes served as four 4 KB reads from one read of the stream; the timeout,
        // the 27,000 bytes (seven reads from one) and the end: four reads of the stream.
        assert_eq!(r.inner.reads, 4);
    }

    #[test]
    fn read_ahead_writes_vectors_in_one_call() {
        let mut r = ReadAhead::new(Chunks {
            chunks: Vec::new(),
            reads: 0,
            timed_out: false,
            written: Vec::new(),
        });
        let n = r
            .write_vectored(&[io::IoSlice::new(b"head"), io::IoSlice::new(b"body")])
            .unwrap();
        assert_eq!((n, r.inner.written.as_slice()), (8, &[2][..]));
    }
}
