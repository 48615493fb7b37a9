//! The endpoint: an HTTP listener on its own thread answering `GET /metrics` with the live
//! figures. It binds when the command starts (a taken port fails before anything runs) and
//! stops when the command ends.
//!
//! The port is open to every local user (and to the network with `HOST:PORT`), so whatever
//! comes in is hostile until answered: the endpoint must never end the run, never stall one
//! scraper behind another and never grow without bound. tiny_http could not be made to: a
//! thread and a file per connection with no cap (it panicked on "Too many open files" and ended
//! the run), no bound on a header line's bytes, and answers written by one blocking thread, so
//! one client that never read stopped every other scraper. So the endpoint is one thread over
//! non-blocking sockets (mio, tokio's own poller) with httparse reading the request head:
//! - at most [`MAX_CONNECTIONS`] at once; a new one evicts the oldest (a scraper's exchange
//!   takes milliseconds, so the oldest is the one holding a slot idle);
//! - a request head of at most [`MAX_HEAD`] bytes (431 beyond), read and answered within
//!   [`EXCHANGE_TIME`] of the accept, or the connection is closed;
//! - one request per connection (`Connection: close`): a client that pipelines and never reads
//!   holds one answer in its own buffer, and nothing of anyone else's;
//! - a full file table on accept closes the oldest connection and tries again (and again a
//!   little later while nothing can be closed): the endpoint never stops answering.
//!
//! The clients never touch any of it: the reporter thread adds each interval under the figures'
//! lock, once a tick, and an answer reads them under the same lock.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use super::Live;
use crate::error::Error;

/// OpenMetrics' media type, as Prometheus asks for it.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Connections open at once; Prometheus holds one per target, a few scrapers a few.
pub const MAX_CONNECTIONS: usize = 64;
/// A request head's bytes at most (the request line and its headers): a scrape's is ~300.
pub const MAX_HEAD: usize = 8 * 1024;
/// From the accept to the answer's last byte handed to the kernel.
pub const EXCHANGE_TIME: Duration = Duration::from_secs(10);
/// While the file table is full and nothing of ours can be closed, accepts are tried again
/// this often.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);

/// A listening endpoint and the figures it serves; dropping it stops the listener.
pub struct Endpoint {
    pub live: Arc<Live>,
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
}

/// `PORT` (on loopback) or `HOST:PORT`, as `--metrics-listen` takes it.
pub fn address(spec: &str) -> Result<SocketAddr, String> {
    let spec = spec.trim();
    if let Ok(port) = spec.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    let mut addrs = spec
        .to_socket_addrs()
        .map_err(|e| format!("'{spec}' is not PORT or HOST:PORT ({e})"))?;
    addrs
        .next()
        .ok_or_else(|| format!("'{spec}' names no address"))
}

/// Listens on `spec` (`--metrics-listen`'s value, or `what` names where it was given) and
/// serves the live figures from a thread.
pub fn listen(spec: &str, what: &str) -> Result<Endpoint, Error> {
    let addr = address(spec).map_err(|e| Error::Usage(format!("{what}: {e}")))?;
    let cannot = |e: std::io::Error| Error::Usage(format!("{what} {addr}: cannot listen: {e}"));
    let mut listener = TcpListener::bind(addr).map_err(cannot)?;
    let addr = listener.local_addr().unwrap_or(addr);
    let poll = Poll::new().map_err(cannot)?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)
        .map_err(cannot)?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(cannot)?);
    let live = Arc::new(Live::default());
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (live, stop) = (live.clone(), stop.clone());
        let server = Server {
            poll,
            listener,
            conns: HashMap::new(),
            next: 2,
            accept_paused: None,
        };
        std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || server.serve(&live, &stop))
            .map_err(|e| Error::Run(format!("--metrics-listen: cannot start its thread: {e}")))?
    };
    Ok(Endpoint {
        live,
        addr,
        stop,
        waker,
        thread: Some(thread),
    })
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Endpoint({})", self.addr)
    }
}

impl Drop for Endpoint {
    /// Stops the listener and waits for its thread, which never blocks: every socket is
    /// non-blocking, so a scraper that stopped reading holds nothing up.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One scraper's connection: the request head read so far, then the answer being written.
struct Conn {
    stream: TcpStream,
    since: Instant,
    head: Vec<u8>,
    answer: Option<(Vec<u8>, usize)>,
}

struct Server {
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<Token, Conn>,
    next: usize,
    /// Set while the file table is full: when to try accepting again.
    accept_paused: Option<Instant>,
}

/// What a connection's event left it as.
enum After {
    Open,
    Done,
}

impl Server {
    fn serve(mut self, live: &Live, stop: &AtomicBool) {
        let mut events = Events::with_capacity(128);
        while !stop.load(Ordering::Relaxed) {
            let timeout = self.timeout();
            if let Err(e) = self.poll.poll(&mut events, Some(timeout))
                && e.kind() != ErrorKind::Interrupted
            {
                // The poller itself failed: nothing more can be served, and the run goes on.
                return;
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    WAKER => {}
                    token => {
                        let after = match self.conns.get_mut(&token) {
                            Some(c) => c.step(live),
                            None => continue,
                        };
                        if let After::Done = after {
                            self.close(token);
                        }
                    }
                }
            }
            if self.accept_paused.is_some_and(|t| Instant::now() >= t) {
                self.accept_paused = None;
                self.accept();
            }
            self.expire();
        }
    }

    /// Until the nearest deadline: a connection's, or the next accept while paused.
    fn timeout(&self) -> Duration {
        let now = Instant::now();
        let nearest = self
            .conns
            .values()
            .map(|c| c.since + EXCHANGE_TIME)
            .chain(self.accept_paused)
            .min();
        nearest.map_or(Duration::from_secs(1), |t| {
            t.saturating_duration_since(now)
                .max(Duration::from_millis(1))
        })
    }

    /// Accepts everything waiting (the poller says so once: edge-triggered).
    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    if self.conns.len() >= MAX_CONNECTIONS {
                        self.close_oldest();
                    }
                    let token = Token(self.next);
                    self.next = self.next.wrapping_add(1).max(2);
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
                        .is_err()
                    {
                        continue;
                    }
                    self.conns.insert(
                        token,
                        Conn {
                            stream,
                            since: Instant::now(),
                            head: Vec::new(),
                            answer: None,
                        },
                    );
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                    // No file for the connection: free one of ours and try again, or, when
                    // none is ours, try again shortly (the poller will not say again).
                    if !self.close_oldest() {
                        self.accept_paused = Some(Instant::now() + ACCEPT_RETRY);
                        return;
                    }
                }
                // ECONNABORTED and the like: that connection is gone, the next may not be.
                Err(_) => {}
            }
        }
    }

    fn close_oldest(&mut self) -> bool {
        let oldest = self
            .conns
            .iter()
            .min_by_key(|(_, c)| c.since)
            .map(|(t, _)| *t);
        oldest.map(|t| self.close(t)).is_some()
    }

    fn close(&mut self, token: Token) {
        if let Some(mut c) = self.conns.remove(&token) {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
    }

    fn expire(&mut self) {
        let now = Instant::now();
        let late: Vec<Token> = self
            .conns
            .iter()
            .filter(|(_, c)| now >= c.since + EXCHANGE_TIME)
            .map(|(t, _)| *t)
            .collect();
        for t in late {
            self.close(t);
        }
    }
}

impl Conn {
    /// Reads what came, answers a whole head, writes what the socket takes.
    fn step(&mut self, live: &Live) -> After {
        if self.answer.is_none() {
            let mut buf = [0u8; 4096];
            loop {
                match self.stream.read(&mut buf) {
                    Ok(0) => return After::Done,
                    Ok(n) => {
                        // Only up to the bound is kept: more than that is refused below.
                        let room = (MAX_HEAD + 1).saturating_sub(self.head.len());
                        self.head.extend_from_slice(&buf[..n.min(room)]);
                        if let Some(answer) = answer(&self.head, live) {
                            self.answer = Some((answer, 0));
                            break;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => return After::Done,
                }
            }
        }
        let Some((bytes, sent)) = &mut self.answer else {
            return After::Open;
        };
        while *sent < bytes.len() {
            match self.stream.write(&bytes[*sent..]) {
                Ok(0) => return After::Done,
                Ok(n) => *sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return After::Open,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return After::Done,
            }
        }
        let _ = self.stream.shutdown(Shutdown::Write);
        After::Done
    }
}

/// The answer to a request head read so far, or None while it is not whole yet.
fn answer(head: &[u8], live: &Live) -> Option<Vec<u8>> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    let parsed = request.parse(head);
    let (status, kind, body) = match parsed {
        Ok(httparse::Status::Partial) if head.len() <= MAX_HEAD => return None,
        Ok(httparse::Status::Partial) | Err(httparse::Error::TooManyHeaders) => (
            "431 Request Header Fields Too Large",
            "text/plain",
            "request head too large\n".to_string(),
        ),
        Err(_) => ("400 Bad Request", "text/plain", "bad request\n".to_string()),
        Ok(httparse::Status::Complete(_)) => {
            let path = request.path.unwrap_or("").split('?').next().unwrap_or("");
            if request.method != Some("GET") {
                ("405 Method Not Allowed", "text/plain", "only GET\n".into())
            } else if path == "/metrics" || path == "/" {
                ("200 OK", CONTENT_TYPE, live.text())
            } else {
                (
                    "404 Not Found",
                    "text/plain",
                    "dbsweep serves /metrics\n".into(),
                )
            }
        }
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_answered_whole_refused_when_too_large_or_bad() {
        let live = Live::default();
        let text = |b: &[u8]| answer(b, &live).map(|a| String::from_utf8(a).unwrap());
        assert_eq!(text(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"), None);
        assert!(
            text(b"GET /metrics HTTP/1.1\r\n\r\n")
                .unwrap()
                .starts_with("HTTP/1.1 200")
        );
        assert!(
            text(b"GET /x HTTP/1.1\r\n\r\n")
                .unwrap()
                .starts_with("HTTP/1.1 404")
        );
        assert!(
            text(b"POST /metrics HTTP/1.1\r\n\r\n")
                .unwrap()
                .starts_with("HTTP/1.1 405")
        );
        assert!(
            text(b"\x01\x02 nonsense\r\n\r\n")
                .unwrap()
                .starts_with("HTTP/1.1 400")
        );
        let long = vec![b'a'; MAX_HEAD + 1];
        assert!(text(&long).unwrap().starts_with("HTTP/1.1 431"));
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..100 {
            many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert!(text(&many).unwrap().starts_with("HTTP/1.1 431"));
    }
}
