//! The least PostgreSQL client: one write per statement (Bind, Execute, Sync), its answer read
//! to ReadyForQuery, nothing kept but what the next statement needs.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

use dbsweep::workload::tpcc::stmts::Stmts;

use super::Spec;

/// A statement the server refused (the transaction is retried).
pub(super) struct Failed;

/// A parameter: integers and texts, all sent as text.
pub(super) enum P<'a> {
    I(i64),
    T(&'a str),
}

/// What a statement did.
pub(super) struct Done {
    pub(super) rows: u64,
    pub(super) changed: u64,
}

/// A statement's answer, or that the server refused it.
pub(super) struct Answer(Option<Done>);

impl Answer {
    pub(super) fn ok(self) -> Result<Done, Failed> {
        self.0.ok_or(Failed)
    }
}

enum Sock {
    Tcp(TcpStream),
    Unix(UnixStream),
    None,
}

impl Read for Sock {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.read(b),
            Sock::Unix(s) => s.read(b),
            Sock::None => Ok(0),
        }
    }
}

impl Write for Sock {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Sock::Tcp(s) => s.write(b),
            Sock::Unix(s) => s.write(b),
            Sock::None => Ok(0),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The least PostgreSQL client: a socket, a write buffer, a read buffer, the first row of the
/// last answer and, when asked, the first column of all its rows.
pub(super) struct Pg {
    sock: Sock,
    w: Vec<u8>,
    r: Vec<u8>,
    at: usize,
    /// The last answer's first DataRow's body.
    row: Vec<u8>,
    pub(super) all_firsts: bool,
    pub(super) firsts: Vec<i64>,
}

impl Pg {
    pub(super) fn placeholder() -> Pg {
        Pg {
            sock: Sock::None,
            w: Vec::new(),
            r: Vec::new(),
            at: 0,
            row: Vec::new(),
            all_firsts: false,
            firsts: Vec::new(),
        }
    }

    /// Connects (trust authentication, as the managed server has it) and prepares every
    /// statement as `s0`, `s1`, ... in the order of `Stmts`' fields.
    pub(super) fn connect(spec: &Spec, sql: &Stmts<String>) -> Pg {
        let sock = if spec.addr.starts_with('/') {
            Sock::Unix(UnixStream::connect(&spec.addr).expect("the server's socket"))
        } else {
            let s = TcpStream::connect(&spec.addr).expect("the server's port");
            s.set_nodelay(true).expect("nodelay");
            Sock::Tcp(s)
        };
        let mut pg = Pg {
            sock,
            ..Pg::placeholder()
        };
        let mut body = Vec::new();
        body.extend_from_slice(&196_608i32.to_be_bytes());
        for (k, v) in [("user", &spec.user), ("database", &spec.database)] {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        pg.w.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        pg.w.extend_from_slice(&body);
        let mut n = 0;
        sql.clone()
            .try_map(|text| -> Result<(), ()> {
                let name = format!("s{n}");
                n += 1;
                let at = pg.begin(b'P');
                pg.cstr(&name);
                pg.cstr(&dollars(&text));
                pg.w.extend_from_slice(&0i16.to_be_bytes());
                pg.end(at);
                Ok(())
            })
            .expect("queued");
        let at = pg.begin(b'S');
        pg.end(at);
        pg.send();
        // ReadyForQuery after the start-up, then after the Sync.
        assert!(
            pg.answer().0.is_some(),
            "the floor's connection was refused"
        );
        assert!(
            pg.answer().0.is_some(),
            "the server refused a TPC-C statement"
        );
        pg
    }

    fn begin(&mut self, tag: u8) -> usize {
        self.w.push(tag);
        let at = self.w.len();
        self.w.extend_from_slice(&[0; 4]);
        at
    }

    fn end(&mut self, at: usize) {
        let len = (self.w.len() - at) as u32;
        self.w[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }

    fn cstr(&mut self, s: &str) {
        self.w.extend_from_slice(s.as_bytes());
        self.w.push(0);
    }

    fn send(&mut self) {
        self.sock.write_all(&self.w).expect("send");
        self.w.clear();
    }

    pub(super) fn simple(&mut self, sql: &str) -> Answer {
        let at = self.begin(b'Q');
        self.cstr(sql);
        self.end(at);
        self.send();
        self.answer()
    }

    /// Bind (parameters as text, results as text), Execute and Sync in one write.
    pub(super) fn exec(&mut self, stmt: u16, params: &[P]) -> Answer {
        let at = self.begin(b'B');
        self.w.push(0);
        self.w.push(b's');
        let mut digits = Digits::default();
        self.w.extend_from_slice(digits.of(i64::from(stmt)));
        self.w.push(0);
        self.w.extend_from_slice(&0i16.to_be_bytes());
        self.w
            .extend_from_slice(&(params.len() as i16).to_be_bytes());
        for p in params {
            let v = match p {
                P::I(i) => digits.of(*i),
                P::T(t) => t.as_bytes(),
            };
            self.w.extend_from_slice(&(v.len() as i32).to_be_bytes());
            self.w.extend_from_slice(v);
        }
        self.w.extend_from_slice(&0i16.to_be_bytes());
        self.end(at);
        let at = self.begin(b'E');
        self.w.push(0);
        self.w.extend_from_slice(&0i32.to_be_bytes());
        self.end(at);
        let at = self.begin(b'S');
        self.end(at);
        self.send();
        self.answer()
    }

    /// Reads up to ReadyForQuery: the rows, the count CommandComplete gives, whether the
    /// server refused the statement.
    fn answer(&mut self) -> Answer {
        let (mut rows, mut changed, mut failed) = (0u64, 0u64, false);
        self.firsts.clear();
        loop {
            while self.r.len() - self.at < 5 || self.r.len() - self.at < 1 + self.len() {
                self.fill();
            }
            let tag = self.r[self.at];
            let len = self.len();
            let body = self.at + 5..self.at + 1 + len;
            match tag {
                b'D' => {
                    if rows == 0 {
                        self.row.clear();
                        self.row.extend_from_slice(&self.r[body.clone()]);
                    }
                    if self.all_firsts {
                        let v = column(&self.r[body.clone()], 0);
                        self.firsts.push(parse_int(v));
                    }
                    rows += 1;
                }
                b'C' => {
                    let tag = &self.r[body.start..body.end - 1];
                    changed = tag
                        .rsplit(|b| *b == b' ')
                        .next()
                        .map_or(0, |n| parse_int(Some(n)) as u64);
                }
                b'E' => failed = true,
                b'R' if be_i32(&self.r[body.clone()]) != 0 => {
                    panic!("the floor only knows trust authentication")
                }
                b'Z' => {
                    self.at = body.end;
                    return Answer((!failed).then_some(Done { rows, changed }));
                }
                _ => {}
            }
            self.at = body.end;
        }
    }

    /// The length field of the message at `at` (the 4 bytes after its tag).
    fn len(&self) -> usize {
        be_i32(&self.r[self.at + 1..]) as usize
    }

    fn fill(&mut self) {
        if self.at == self.r.len() {
            self.r.clear();
            self.at = 0;
        }
        let have = self.r.len();
        self.r.resize(have + 16_384, 0);
        let n = self.sock.read(&mut self.r[have..]).expect("receive");
        assert!(n > 0, "the server closed the floor's connection");
        self.r.truncate(have + n);
    }

    pub(super) fn int(&self, i: usize) -> i64 {
        parse_int(column(&self.row, i))
    }

    pub(super) fn cents(&self, i: usize) -> i64 {
        let v = column(&self.row, i).unwrap_or_default();
        let f: f64 = std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0);
        (f * 100.0).round() as i64
    }

    pub(super) fn text(&self, i: usize) -> String {
        String::from_utf8_lossy(column(&self.row, i).unwrap_or_default()).into_owned()
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Column `i` of a DataRow's body (None for NULL).
fn column(row: &[u8], i: usize) -> Option<&[u8]> {
    let mut at = 2;
    for k in 0..=i {
        let len = be_i32(row.get(at..)?);
        at += 4;
        if k == i {
            return (len >= 0).then(|| &row[at..at + len as usize]);
        }
        at += len.max(0) as usize;
    }
    None
}

fn parse_int(v: Option<&[u8]>) -> i64 {
    let v = v.unwrap_or_default();
    let (neg, digits) = match v.first() {
        Some(b'-') => (true, &v[1..]),
        _ => (false, v),
    };
    let n = digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0i64, |n, b| n * 10 + i64::from(b - b'0'));
    if neg { -n } else { n }
}

/// `?` placeholders as PostgreSQL's `$1`, `$2`, ...
fn dollars(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(ch);
        }
    }
    out
}

/// An integer's decimal digits, without an allocation.
#[derive(Default)]
struct Digits([u8; 20]);

impl Digits {
    fn of(&mut self, v: i64) -> &[u8] {
        let mut at = self.0.len();
        let mut n = v.unsigned_abs();
        loop {
            at -= 1;
            self.0[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if v < 0 {
            at -= 1;
            self.0[at] = b'-';
        }
        &self.0[at..]
    }
}
