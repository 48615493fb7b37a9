//! The byte stream under dbsweep's own protocol clients (`pgwire`, `mywire`): TCP or a Unix
//! socket, with one reused read buffer.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::ops::Range;
use std::os::unix::net::UnixStream;
use std::path::Path;

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

pub struct Socket {
    stream: Stream,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
}

impl Socket {
    /// Connects over TCP with Nagle's algorithm off (requests are single small writes).
    pub fn tcp(host: &str, port: u16) -> io::Result<Socket> {
        let s = TcpStream::connect((host, port))?;
        s.set_nodelay(true)?;
        Ok(Socket::new(Stream::Tcp(s)))
    }

    pub fn unix(path: &Path) -> io::Result<Socket> {
        Ok(Socket::new(Stream::Unix(UnixStream::connect(path)?)))
    }

    fn new(stream: Stream) -> Socket {
        Socket {
            stream,
            buf: vec![0; 64 * 1024],
            pos: 0,
            end: 0,
        }
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.stream {
            Stream::Tcp(s) => s.write_all(bytes),
            Stream::Unix(s) => s.write_all(bytes),
        }
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
    pub fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        if self.pos + n > self.buf.len() {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            if n > self.buf.len() {
                self.buf.resize(n.next_power_of_two(), 0);
            }
        }
        while self.end - self.pos < n {
            let got = match &mut self.stream {
                Stream::Tcp(s) => s.read(&mut self.buf[self.end..])?,
                Stream::Unix(s) => {
                    wait_readable(s)?;
                    s.read(&mut self.buf[self.end..])?
                }
            };
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.end += got;
        }
        Ok(())
    }
}

/// Blocks until the Unix socket has data to read.
///
/// A reader blocked in `recv` on an AF_UNIX stream is woken also when the peer consumes what we
/// sent (the kernel's write-space wake-up shares the socket's wait queue and is not filtered), so
/// a blocking `recv` sleeps twice per round trip. `poll(POLLIN)` is woken only for data, which
/// saves a context switch per query (about 0.9 switches per query measured on PostgreSQL) at the
/// price of one cheap system call.
fn wait_readable(s: &UnixStream) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd {
        fd: s.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, for the duration of the call.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
