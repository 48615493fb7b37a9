//! A lean synchronous client for the MySQL/MariaDB client/server protocol.
//!
//! Why not only the `mysql` crate: measured with bench/vs_sysbench its client CPU per point
//! select in user space was above sysbench's (it allocates a row and values per result and
//! parameters per call). This client does what a benchmark needs with reused buffers: the
//! handshake (mysql_native_password, or caching_sha2_password's fast path), COM_QUERY,
//! COM_STMT_PREPARE/EXECUTE with binary parameters, result sets counted without decoding, and
//! LOAD DATA LOCAL INFILE. URLs are still parsed by the `mysql` crate.

use std::io;

use sha1::{Digest, Sha1};
use sha2::{Sha256, Sha512};

use super::socket::Socket;
use super::tls::Mode;
use super::{Outcome, Param};

#[derive(Debug)]
pub enum WireError {
    Io(io::Error),
    Server {
        code: u16,
        state: String,
        message: String,
    },
    Protocol(String),
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> Self {
        WireError::Io(e)
    }
}

// Capability flags.
const LONG_PASSWORD: u32 = 1;
const LONG_FLAG: u32 = 4;
const CONNECT_WITH_DB: u32 = 8;
const LOCAL_FILES: u32 = 0x80;
const PROTOCOL_41: u32 = 0x200;
const TRANSACTIONS: u32 = 0x2000;
const SECURE_CONNECTION: u32 = 0x8000;
const MULTI_RESULTS: u32 = 0x20000;
const PLUGIN_AUTH: u32 = 0x80000;
const SSL: u32 = 0x800;
/// Server status: another result follows.
const MORE_RESULTS: u16 = 0x0008;
const MAX_PACKET: usize = 0xFF_FFFF;

/// Where to connect and as whom.
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub user: String,
    pub password: String,
    pub database: Option<String>,
    /// TLS as the URL's `ssl-mode` asks (None: plain).
    pub tls: Option<super::tls::Tls>,
    /// The server's RSA public key (PEM) for full authentication outside TLS
    /// (`server-public-key=PATH`); None: asked of the server.
    pub server_public_key: Option<Vec<u8>>,
}

/// A MySQL 8 greeting (packet 0) that offers TLS and caching_sha2_password: the fuzz
/// harness's TLS server sends it before the handshake.
pub(super) fn fuzz_greeting() -> Vec<u8> {
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
        }
    }
}

/// A statement prepared on the server.
#[derive(Clone, Debug)]
pub struct Prepared {
    id: u32,
    pub(super) params: u16,
    /// The type code of each result column, for decoding binary rows.
    column_types: Vec<u8>,
}

/// A binary result row (prepared statements) decoded to text, so that callers see the same
/// values as from a text query. The buffers are reused from row to row.
#[derive(Default)]
pub struct BinRow {
    text: Vec<u8>,
    cells: Vec<Option<(usize, usize)>>,
}

impl super::TextRow for BinRow {
    fn len(&self) -> usize {
        self.cells.len()
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let (a, b) = (*self.cells.get(i)?)?;
        self.text.get(a..b)
    }
}

impl BinRow {
    /// Decodes packet `p` (0x00, the NULL bitmap with its offset of 2, then the values) by the
    /// column type codes.
    fn decode(&mut self, p: &[u8], types: &[u8]) -> Result<(), WireError> {
        use std::io::Write;
        let short = || WireError::Protocol("a truncated binary row".into());
        self.text.clear();
        self.cells.clear();
        let bitmap = p.get(1..1 + (types.len() + 9) / 8).ok_or_else(short)?;
        let mut at = 1 + bitmap.len();
        for (i, &ty) in types.iter().enumerate() {
            let bit = i + 2;
            if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
                self.cells.push(None);
                continue;
            }
            let start = self.text.len();
            let mut fixed = |n: usize| -> Result<&[u8], WireError> {
                let v = p.get(at..at + n).ok_or_else(short)?;
                at += n;
                Ok(v)
            };
            let t = &mut self.text;
            let w = |r: std::io::Result<()>| r.map_err(WireError::Io);
            match ty {
                0x01 => w(write!(t, "{}", fixed(1)?[0] as i8))?,
                0x02 | 0x0D => w(write!(
                    t,
                    "{}",
                    i16::from_le_bytes(fixed(2)?.try_into().unwrap_or_default())
                ))?,
                0x03 | 0x09 => w(write!(
                    t,
                    "{}",
                    i32::from_le_bytes(fixed(4)?.try_into().unwrap_or_default())
                ))?,
                0x08 => w(write!(
                    t,
                    "{}",
                    i64::from_le_bytes(fixed(8)?.try_into().unwrap_or_default())
                ))?,
                0x04 => w(write!(
                    t,
                    "{}",
                    f32::from_le_bytes(fixed(4)?.try_into().unwrap_or_default())
                ))?,
                0x05 => w(write!(
                    t,
                    "{}",
                    f64::from_le_bytes(fixed(8)?.try_into().unwrap_or_default())
                ))?,
                // DATE, DATETIME, TIMESTAMP: a length, then year, month, day, [h, m, s, [us]].
                0x07 | 0x0A | 0x0C => {
                    let n = usize::from(fixed(1)?[0]);
                    let d = fixed(n)?;
                    let year = d.get(..2).map_or(0, |y| u16::from_le_bytes([y[0], y[1]]));
                    let part = |k: usize| d.get(k).copied().unwrap_or(0);
                    w(write!(t, "{year:04}-{:02}-{:02}", part(2), part(3)))?;
                    if ty != 0x0A {
                        w(write!(t, " {:02}:{:02}:{:02}", part(4), part(5), part(6)))?;
                    }
                }
                // TIME: a length, then sign, days, h, m, s, [us].
                0x0B => {
                    let n = usize::from(fixed(1)?[0]);
                    let d = fixed(n)?;
                    let part = |k: usize| u32::from(d.get(k).copied().unwrap_or(0));
                    let sign = if part(0) == 1 { "-" } else { "" };
                    let days = d
                        .get(1..5)
                        .map_or(0, |x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]));
                    w(write!(
                        t,
                        "{sign}{:02}:{:02}:{:02}",
                        days * 24 + part(5),
                        part(6),
                        part(7)
                    ))?;
                }
                // DECIMAL, strings, blobs, everything else: length-encoded bytes.
                _ => {
                    let (len, skip) = lenenc_int(p.get(at..).unwrap_or_default());
                    let len = usize::try_from(len).map_err(|_| short())?;
                    let v = p.get(at + skip..at + skip + len).ok_or_else(short)?;
                    at += skip + len;
                    t.extend_from_slice(v);
                }
            }
            self.cells.push(Some((start, self.text.len())));
        }
        Ok(())
    }
}

/// The type code of a column definition packet: after six length-encoded strings (catalog,
/// schema, table, original table, name, original name), the length of the fixed fields, the
/// character set (2 bytes) and the column length (4 bytes).
fn column_type(p: &[u8]) -> u8 {
    let mut at = 0;
    for _ in 0..6 {
        let (len, skip) = lenenc_int(p.get(at..).unwrap_or_default());
        at += skip + usize::try_from(len).unwrap_or(usize::MAX / 2);
    }
    let (_, skip) = lenenc_int(p.get(at..).unwrap_or_default());
    p.get(at + skip + 6).copied().unwrap_or(0xFE)
}

pub struct Wire {
    sock: Socket,
    wbuf: Vec<u8>,
    /// Sequence id of the next packet this side sends.
    seq: u8,
    /// Reused to decode binary rows.
    bin_row: BinRow,
}

/// A row packet. Text rows (what `query` returns) are length-encoded values, 0xFB for NULL;
/// binary rows (prepared statements) are never looked into.
pub struct MyRow<'a>(&'a [u8]);

impl super::TextRow for MyRow<'_> {
    fn len(&self) -> usize {
        let mut at = 0;
        let mut n = 0;
        while let Some(rest) = self.0.get(at..).filter(|r| !r.is_empty()) {
            if rest[0] == 0xFB {
                at += 1;
            } else {
                let (len, skip) = lenenc_int(rest);
                at += skip + usize::try_from(len).unwrap_or(usize::MAX / 2);
            }
            n += 1;
        }
        n
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let mut at = 0;
        for n in 0.. {
            let rest = self.0.get(at..).filter(|r| !r.is_empty())?;
            let value = if rest[0] == 0xFB {
                at += 1;
                None
            } else {
                let (len, skip) = lenenc_int(rest);
                let start = at + skip;
                at = start + usize::try_from(len).ok()?;
                Some((start, at))
            };
            if n == i {
                return value.and_then(|(a, b)| self.0.get(a..b));
            }
        }
        None
    }
}

fn lenenc_int(b: &[u8]) -> (u64, usize) {
    match b.first() {
        Some(0xFC) if b.len() >= 3 => (u64::from(u16::from_le_bytes([b[1], b[2]])), 3),
        Some(0xFD) if b.len() >= 4 => (u64::from(u32::from_le_bytes([b[1], b[2], b[3], 0])), 4),
        Some(0xFE) if b.len() >= 9 => (
            u64::from_le_bytes(b[1..9].try_into().unwrap_or_default()),
            9,
        ),
        Some(0xFC..=0xFE) => (0, b.len()),
        Some(&v) => (u64::from(v), 1),
        None => (0, 0),
    }
}

fn put_lenenc(buf: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => buf.push(v as u8),
        251..=0xFFFF => {
            buf.push(0xFC);
            buf.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            buf.push(0xFD);
            buf.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            buf.push(0xFE);
            buf.extend_from_slice(&v.to_le_bytes());
        }
    }
}

fn server_error(p: &[u8]) -> WireError {
    if p.len() < 3 {
        return WireError::Protocol("a truncated error packet".into());
    }
    let code = u16::from_le_bytes([p[1], p[2]]);
    let (state, msg) = if p.get(3) == Some(&b'#') && p.len() >= 9 {
        (&p[4..9], &p[9..])
    } else {
        (&b""[..], &p[3..])
    };
    WireError::Server {
        code,
        state: String::from_utf8_lossy(state).into_owned(),
        message: String::from_utf8_lossy(msg).into_owned(),
    }
}

/// The password as caching_sha2_password and sha256_password send it outside TLS: the
/// NUL-terminated password XOR-ed with the scramble (repeated), encrypted with RSA-OAEP
/// (SHA-1) under the server's public key (`pem`, SubjectPublicKeyInfo or PKCS#1).
fn rsa_password(pem: &[u8], password: &[u8], scramble: &[u8]) -> Result<Vec<u8>, WireError> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let text = std::str::from_utf8(pem)
        .map_err(|_| WireError::Protocol("the server's RSA public key is not PEM text".into()))?;
    let key = rsa::RsaPublicKey::from_public_key_pem(text.trim())
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(text.trim()))
        .map_err(|e| WireError::Protocol(format!("the server's RSA public key: {e}")))?;
    if scramble.is_empty() {
        return Err(WireError::Protocol("an empty scramble".into()));
    }
    let mut plain = password.to_vec();
    plain.push(0);
    for (i, b) in plain.iter_mut().enumerate() {
        *b ^= scramble[i % scramble.len()];
    }
    key.encrypt(
        &mut rsa::rand_core::OsRng,
        rsa::Oaep::new::<sha1::Sha1>(),
        &plain,
    )
    .map_err(|e| {
        WireError::Protocol(format!(
            "encrypting the password with the server's RSA key: {e}"
        ))
    })
}

/// MariaDB's ed25519 authentication: an Ed25519 signature of the server's 32-byte scramble
/// with the password as the secret (its SHA-512 is the expanded key, as RFC 8032 expands a
/// seed; MariaDB takes the password itself as the seed, whatever its length).
fn ed25519_signature(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    use ed25519_dalek::hazmat::{ExpandedSecretKey, raw_sign};
    let expanded: [u8; 64] = Sha512::digest(password).into();
    let key = ExpandedSecretKey::from_bytes(&expanded);
    let public = ed25519_dalek::VerifyingKey::from(&key);
    raw_sign::<Sha512>(&key, scramble, &public)
        .to_bytes()
        .to_vec()
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

/// The auth response of `plugin` for `password` and the server's 20-byte `scramble`;
/// `secure` when the connection is inside TLS (plugins that send the password itself need it).
fn scramble_password(
    plugin: &str,
    password: &[u8],
    scramble: &[u8],
    secure: bool,
) -> Result<Vec<u8>, WireError> {
    if password.is_empty() {
        return Ok(Vec::new());
    }
    match plugin {
        "mysql_clear_password" | "sha256_password" if secure => {
            let mut p = password.to_vec();
            p.push(0);
            Ok(p)
        }
        // Outside TLS, sha256_password asks for the server's RSA key first (`finish_auth`).
        "sha256_password" => Ok(vec![1]),
        "client_ed25519" => Ok(ed25519_signature(password, scramble)),
        "mysql_clear_password" => Err(WireError::Protocol(format!(
            "authentication plugin {plugin} sends the password itself: it needs TLS (ssl-mode=REQUIRED)"
        ))),
        "mysql_native_password" => {
            let h1 = Sha1::digest(password);
            let h2 = Sha1::digest(h1);
            let mut h = Sha1::new();
            h.update(scramble);
            h.update(h2);
            Ok(xor(&h1, &h.finalize()))
        }
        "caching_sha2_password" => {
            let h1 = Sha256::digest(password);
            let h2 = Sha256::digest(h1);
            let mut h = Sha256::new();
            h.update(h2);
            h.update(scramble);
            Ok(xor(&h1, &h.finalize()))
        }
        other => Err(WireError::Protocol(format!(
            "authentication plugin {other} is not supported; use mysql_native_password"
        ))),
    }
}

impl Wire {
    /// The negotiated TLS protocol and cipher; None on a plain connection.
    pub fn tls_info(&self) -> Option<String> {
        self.sock.tls_info()
    }

    pub fn connect(e: &Endpoint) -> Result<Wire, WireError> {
        let sock = match &e.socket {
            Some(path) => Socket::unix(std::path::Path::new(path))?,
            None => Socket::tcp(&e.host, e.port)?,
        };
        Wire::start(sock, e)
    }

    /// Logs in on a connected socket.
    pub fn start(sock: Socket, e: &Endpoint) -> Result<Wire, WireError> {
        let mut w = Wire {
            sock,
            wbuf: Vec::with_capacity(8 * 1024),
            seq: 0,
            bin_row: BinRow::default(),
        };
        w.handshake(e)?;
        w.sock.handshake_done();
        Ok(w)
    }

    fn handshake(&mut self, e: &Endpoint) -> Result<(), WireError> {
        let p = match self.read_packet() {
            Ok(p) => p.to_vec(),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                return Err(WireError::Protocol(format!(
                    "{e}: a MySQL or MariaDB server greets a new connection at once; is this one?"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        match p.first() {
            Some(0xFF) => return Err(server_error(&p)),
            Some(10) => {}
            Some(v) => {
                return Err(WireError::Protocol(format!(
                    "a greeting of protocol version {v}, where MySQL speaks 10: is this a MySQL or MariaDB server?"
                )));
            }
            None => return Err(WireError::Protocol("an empty greeting".into())),
        }
        let mut at = 1
            + p[1..]
                .iter()
                .position(|b| *b == 0)
                .ok_or_else(|| WireError::Protocol("bad handshake".into()))?
            + 1;
        at += 4; // connection id
        // scramble 8, filler 1, capabilities 2, charset 1, status 2, capabilities 2, length 1,
        // reserved 10.
        if p.len() < at + 27 {
            return Err(WireError::Protocol("a truncated handshake".into()));
        }
        let mut scramble = p[at..at + 8].to_vec();
        at += 9;
        let caps_low = u32::from(u16::from_le_bytes([p[at], p[at + 1]]));
        at += 2 + 1 + 2; // capabilities, charset, status
        let caps = caps_low | u32::from(u16::from_le_bytes([p[at], p[at + 1]])) << 16;
        at += 2;
        let data_len = p[at] as usize;
        at += 1 + 10;
        if caps & PROTOCOL_41 == 0 {
            return Err(WireError::Protocol(
                "the server does not speak protocol 4.1".into(),
            ));
        }
        let rest = (data_len.max(21) - 8).min(p.len() - at);
        scramble.extend_from_slice(&p[at..at + rest]);
        scramble.truncate(20);
        at += rest;
        let plugin = if caps & PLUGIN_AUTH != 0 && at < p.len() {
            String::from_utf8_lossy(p[at..].split(|b| *b == 0).next().unwrap_or_default())
                .into_owned()
        } else {
            "mysql_native_password".to_string()
        };
        let mut flags = LONG_PASSWORD
            | LONG_FLAG
            | LOCAL_FILES
            | PROTOCOL_41
            | TRANSACTIONS
            | SECURE_CONNECTION
            | MULTI_RESULTS
            | PLUGIN_AUTH;
        if e.database.is_some() {
            flags |= CONNECT_WITH_DB;
        }
        flags &= caps | CONNECT_WITH_DB;
        self.seq = 1;
        if let Some(tls) = &e.tls {
            if caps & SSL != 0 {
                // SSLRequest: the first 32 bytes of the handshake response, then TLS, then the
                // whole response inside it.
                flags |= SSL;
                let w = &mut self.wbuf;
                w.extend_from_slice(&flags.to_le_bytes());
                w.extend_from_slice(&(MAX_PACKET as u32).to_le_bytes());
                w.push(45);
                w.extend_from_slice(&[0; 23]);
                self.send_packet()?;
                self.sock.start_tls(tls, &e.host)?;
            } else if tls.mode != Mode::Prefer {
                return Err(WireError::Protocol(format!(
                    "ssl-mode={}: the server does not offer TLS (have_ssl is not YES); give it ssl-cert and ssl-key, or use ssl-mode=PREFERRED or DISABLED",
                    tls.mode.name()
                )));
            }
        }
        let secure = self.sock.tls_info().is_some();
        let auth = scramble_password(&plugin, e.password.as_bytes(), &scramble, secure)?;
        let w = &mut self.wbuf;
        w.extend_from_slice(&flags.to_le_bytes());
        w.extend_from_slice(&(MAX_PACKET as u32).to_le_bytes());
        w.push(45); // utf8mb4_general_ci
        w.extend_from_slice(&[0; 23]);
        w.extend_from_slice(e.user.as_bytes());
        w.push(0);
        w.push(auth.len() as u8);
        w.extend_from_slice(&auth);
        if let Some(db) = &e.database {
            w.extend_from_slice(db.as_bytes());
            w.push(0);
        }
        w.extend_from_slice(plugin.as_bytes());
        w.push(0);
        self.send_packet()?;
        self.finish_auth(e, &plugin, scramble)
    }

    /// Sends the password RSA-encrypted for full authentication outside TLS: with the key the
    /// URL gave, or after asking the server for its key (`request`: 0x02 for
    /// caching_sha2_password; sha256_password asked in its first response already).
    fn send_rsa_password(
        &mut self,
        e: &Endpoint,
        scramble: &[u8],
        request: Option<u8>,
    ) -> Result<(), WireError> {
        // sha256_password's first response already asked (None): the key comes regardless.
        let pem = match (&e.server_public_key, request) {
            (Some(pem), Some(_)) => pem.clone(),
            _ => {
                if let Some(byte) = request {
                    self.wbuf.push(byte);
                    self.send_packet()?;
                }
                let p = self.read_packet()?.to_vec();
                match p.first() {
                    Some(0x01) => p[1..].to_vec(),
                    Some(0xFF) => return Err(server_error(&p)),
                    _ => {
                        return Err(WireError::Protocol(
                            "the server did not send its RSA public key".into(),
                        ));
                    }
                }
            }
        };
        let sealed = rsa_password(&pem, e.password.as_bytes(), scramble)?;
        self.wbuf.extend_from_slice(&sealed);
        self.send_packet()?;
        Ok(())
    }

    fn finish_auth(
        &mut self,
        e: &Endpoint,
        plugin: &str,
        mut scramble: Vec<u8>,
    ) -> Result<(), WireError> {
        let mut plugin = plugin.to_string();
        let secure = self.sock.tls_info().is_some();
        if plugin == "sha256_password" && !secure && !e.password.is_empty() {
            // The first response asked for the key: it comes next.
            self.send_rsa_password(e, &scramble, None)?;
        }
        loop {
            let p = self.read_packet()?.to_vec();
            match p.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(server_error(&p)),
                Some(0xFE) => {
                    // Auth switch: another plugin, a new scramble.
                    let name_end = p[1..]
                        .iter()
                        .position(|b| *b == 0)
                        .map_or(p.len(), |i| i + 1);
                    plugin = String::from_utf8_lossy(&p[1..name_end]).into_owned();
                    // ed25519's scramble is 32 bytes; the others' 20 (and a NUL).
                    let len = if plugin == "client_ed25519" { 32 } else { 20 };
                    scramble = p[(name_end + 1).min(p.len())..]
                        .iter()
                        .copied()
                        .take(len)
                        .collect();
                    let auth =
                        scramble_password(&plugin, e.password.as_bytes(), &scramble, secure)?;
                    self.wbuf.extend_from_slice(&auth);
                    self.send_packet()?;
                    if plugin == "sha256_password" && !secure && !e.password.is_empty() {
                        self.send_rsa_password(e, &scramble, None)?;
                    }
                }
                Some(0x01) if p.get(1) == Some(&3) => {} // caching_sha2 fast auth succeeded; OK follows
                Some(0x01) if p.get(1) == Some(&4) && secure => {
                    // caching_sha2_password's full authentication: inside TLS, the password
                    // itself (NUL-terminated).
                    self.wbuf.extend_from_slice(e.password.as_bytes());
                    self.wbuf.push(0);
                    self.send_packet()?;
                }
                Some(0x01) if p.get(1) == Some(&4) => {
                    // Outside TLS: the password under the server's RSA key.
                    self.send_rsa_password(e, &scramble, Some(2))?;
                }
                Some(0x01) => {
                    return Err(WireError::Protocol(format!(
                        "{plugin} sent an authentication step dbsweep does not know"
                    )));
                }
                _ => {
                    return Err(WireError::Protocol(
                        "unexpected packet during authentication".into(),
                    ));
                }
            }
        }
    }

    /// Sends `wbuf` as one packet (or several when over 16 MB) with the next sequence ids.
    fn send_packet(&mut self) -> io::Result<()> {
        let mut out = Vec::with_capacity(self.wbuf.len() + 8);
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
        self.sock.write_all(&out)
    }

    /// Starts a command: a packet with sequence id 0 whose payload begins with `command`.
    fn command(&mut self, command: u8) {
        self.wbuf.clear();
        self.wbuf.push(command);
        self.seq = 0;
    }

    /// Reads the next packet (a packet of 16 MB or more is not expected in replies here).
    fn read_packet(&mut self) -> io::Result<&[u8]> {
        self.sock.fill(4)?;
        let h = self.sock.unread();
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        self.seq = h[3].wrapping_add(1);
        self.sock.fill(4 + len)?;
        let r = self.sock.consume(4 + len);
        Ok(self.sock.bytes(r.start + 4..r.end))
    }

    /// Reads one command's reply: OK, ERR, a result set (rows counted; `on_row` sees a text
    /// row's first value), or a LOCAL INFILE request answered with `infile`. Follows
    /// multi-results.
    fn reply(
        &mut self,
        mut on_row: impl FnMut(&[u8]) -> Result<(), WireError>,
        infile: Option<&[u8]>,
    ) -> Result<Outcome, WireError> {
        let mut out = Outcome::default();
        loop {
            let p = self.read_packet()?;
            let Some(&first) = p.first() else {
                return Err(WireError::Protocol("an empty reply packet".into()));
            };
            let status = match first {
                0x00 => {
                    let (affected, n) = lenenc_int(&p[1..]);
                    let (_, m) = lenenc_int(p.get(1 + n..).unwrap_or_default());
                    out.changed += affected;
                    let at = 1 + n + m;
                    p.get(at..at + 2)
                        .map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
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
                    let (columns, _) = lenenc_int(p);
                    for _ in 0..columns {
                        self.read_packet()?;
                    }
                    self.read_packet()?; // EOF after the column definitions
                    loop {
                        let p = self.read_packet()?;
                        let Some(&lead) = p.first() else {
                            return Err(WireError::Protocol("an empty row packet".into()));
                        };
                        match lead {
                            0xFE if p.len() < 9 => {
                                break p.get(3..5).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
                            }
                            0xFF => return Err(server_error(p)),
                            _ => {
                                out.rows += 1;
                                on_row(p)?;
                            }
                        }
                    }
                }
            };
            if status & MORE_RESULTS == 0 {
                return Ok(out);
            }
        }
    }

    /// Runs `sql` as a text query; `on_row` sees each row.
    pub fn query(&mut self, sql: &str, on_row: impl FnMut(&MyRow)) -> Result<Outcome, WireError> {
        self.command(0x03);
        self.wbuf.extend_from_slice(sql.as_bytes());
        self.send_packet()?;
        let mut on_row = on_row;
        self.reply(
            |p| {
                on_row(&MyRow(p));
                Ok(())
            },
            None,
        )
    }

    /// Runs `sql` (a LOAD DATA LOCAL INFILE statement) sending `data` as the file.
    pub fn load_local(&mut self, sql: &str, data: &[u8]) -> Result<Outcome, WireError> {
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
        let mut column_types = Vec::with_capacity(columns.into());
        for (n, is_columns) in [(params, false), (columns, true)] {
            if n > 0 {
                for i in 0..=n {
                    let p = self.read_packet()?; // definitions, then EOF
                    if is_columns && i < n {
                        column_types.push(column_type(p));
                    }
                }
            }
        }
        Ok(Prepared {
            id,
            params,
            column_types,
        })
    }

    /// Executes a prepared statement with binary parameters (integers as BIGINT, text as
    /// strings). Rows are counted; with `on_row`, each is decoded and shown to it.
    pub fn execute(
        &mut self,
        st: &Prepared,
        params: &[Param],
        on_row: Option<super::OnRow<'_>>,
    ) -> Result<Outcome, WireError> {
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
        match on_row {
            None => self.reply(|_| Ok(()), None),
            Some(f) => {
                let mut row = std::mem::take(&mut self.bin_row);
                let out = self.reply(
                    |p| {
                        row.decode(p, &st.column_types)?;
                        f(&row);
                        Ok(())
                    },
                    None,
                );
                self.bin_row = row;
                out
            }
        }
    }
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
    fn native_password_scramble_matches_the_protocol_formula() {
        // SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))): XOR with SHA1(SHA1(pw)) again after
        // re-hashing must give back SHA1(pw) as the server checks it.
        let scramble = [7u8; 20];
        let got = scramble_password("mysql_native_password", b"secret", &scramble, false).unwrap();
        let h1 = Sha1::digest(b"secret");
        let mut h = Sha1::new();
        h.update(scramble);
        h.update(Sha1::digest(h1));
        assert_eq!(xor(&got, &h.finalize()), h1.to_vec());
        assert!(
            scramble_password("mysql_native_password", b"", &scramble, false)
                .unwrap()
                .is_empty()
        );
    }

    /// A key for the RSA tests (1024 bits: the formula does not depend on the size, and a
    /// test need not wait for a 2048-bit prime search).
    fn test_key() -> rsa::RsaPrivateKey {
        rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap()
    }

    fn public_pem(key: &rsa::RsaPrivateKey) -> Vec<u8> {
        use rsa::pkcs8::EncodePublicKey;
        rsa::RsaPublicKey::from(key)
            .to_public_key_pem(rsa::pkcs8::LineEnding::LF)
            .unwrap()
            .into_bytes()
    }

    /// The server's side of the formula: RSA-OAEP(SHA-1) decrypt, XOR with the scramble.
    fn unseal(key: &rsa::RsaPrivateKey, sealed: &[u8], scramble: &[u8]) -> Vec<u8> {
        let mut plain = key.decrypt(rsa::Oaep::new::<sha1::Sha1>(), sealed).unwrap();
        for (i, b) in plain.iter_mut().enumerate() {
            *b ^= scramble[i % scramble.len()];
        }
        plain
    }

    #[test]
    fn the_rsa_sealed_password_is_the_protocols_formula() {
        let key = test_key();
        let scramble: Vec<u8> = (1..=20).collect();
        let sealed = rsa_password(
            &public_pem(&key),
            b"s3cret-longer-than-the-scramble",
            &scramble,
        )
        .unwrap();
        assert_eq!(sealed.len(), 128, "one RSA block");
        assert_eq!(
            unseal(&key, &sealed, &scramble),
            b"s3cret-longer-than-the-scramble\0"
        );
        assert!(matches!(
            rsa_password(b"not a key", b"pw", &scramble),
            Err(WireError::Protocol(_))
        ));
    }

    /// One MySQL packet: 3-byte length, sequence id, payload.
    fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        p.push(seq);
        p.extend_from_slice(payload);
        p
    }

    fn read_packet_from(s: &mut std::os::unix::net::UnixStream) -> Vec<u8> {
        use std::io::Read;
        let mut h = [0u8; 4];
        s.read_exact(&mut h).unwrap();
        let mut p = vec![0u8; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
        s.read_exact(&mut p).unwrap();
        p
    }

    /// caching_sha2_password's full authentication outside TLS against an in-test server: the
    /// client asks for the key (0x02), then sends the password sealed with it.
    #[test]
    fn full_authentication_outside_tls_asks_for_the_key_and_seals_the_password() {
        use std::io::Write;
        let key = test_key();
        let pem = public_pem(&key);
        let scramble: Vec<u8> = (b'a'..=b't').collect();
        let (client, mut server) = std::os::unix::net::UnixStream::pair().unwrap();
        let caps = PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | CONNECT_WITH_DB | TRANSACTIONS;
        let mut greeting = vec![10];
        greeting.extend_from_slice(b"8.0.40\0");
        greeting.extend_from_slice(&7u32.to_le_bytes());
        greeting.extend_from_slice(&scramble[..8]);
        greeting.push(0);
        greeting.extend_from_slice(&(caps as u16).to_le_bytes());
        greeting.push(45);
        greeting.extend_from_slice(&2u16.to_le_bytes());
        greeting.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        greeting.push(21);
        greeting.extend_from_slice(&[0; 10]);
        greeting.extend_from_slice(&scramble[8..]);
        greeting.push(0);
        greeting.extend_from_slice(b"caching_sha2_password\0");
        let theirs = std::thread::spawn(move || {
            server.write_all(&packet(0, &greeting)).unwrap();
            let _response = read_packet_from(&mut server);
            server.write_all(&packet(2, &[1, 4])).unwrap(); // perform full authentication
            assert_eq!(
                read_packet_from(&mut server),
                [2],
                "asks for the public key"
            );
            let mut key_packet = vec![1];
            key_packet.extend_from_slice(&pem);
            server.write_all(&packet(4, &key_packet)).unwrap();
            let sealed = read_packet_from(&mut server);
            assert_eq!(unseal(&key, &sealed, &scramble), b"pw\0");
            server
                .write_all(&packet(6, &[0, 0, 0, 2, 0, 0, 0]))
                .unwrap();
        });
        let e = Endpoint::local("pw");
        let w = Wire::start(Socket::from_unix(client).unwrap(), &e);
        theirs.join().unwrap();
        assert!(w.is_ok(), "{:?}", w.err());
    }

    #[test]
    fn ed25519_signs_as_rfc_8032_with_the_password_as_seed() {
        // RFC 8032 section 7.1, test 2: a 32-byte secret key signs the one-byte message 0x72.
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let seed = hex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");
        let signature = hex(
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da\
             085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
        );
        assert_eq!(ed25519_signature(&seed, &[0x72]), signature);
        assert_eq!(
            scramble_password("client_ed25519", &seed, &[0x72], false).unwrap(),
            signature
        );
    }

    #[test]
    fn plugins_that_send_the_password_itself_do_so_only_inside_tls() {
        let scramble = [1u8; 20];
        for plugin in ["mysql_clear_password", "sha256_password"] {
            assert_eq!(
                scramble_password(plugin, b"pw", &scramble, true).unwrap(),
                b"pw\0"
            );
        }
        assert!(matches!(
            scramble_password("mysql_clear_password", b"pw", &scramble, false),
            Err(WireError::Protocol(m)) if m.contains("needs TLS")
        ));
        // sha256_password outside TLS asks for the server's key first.
        assert_eq!(
            scramble_password("sha256_password", b"pw", &scramble, false).unwrap(),
            [1]
        );
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
