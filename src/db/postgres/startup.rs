//! A PostgreSQL connection's start: TLS asked for (SSLRequest), the startup message, and the
//! server's authentication (trust, password, md5, SCRAM-SHA-256 through `postgres-protocol`).

use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};

use super::wire::{Listener, Wire, WireError, be_i32, begin, cstr, end, server_error};
use crate::db::server_url::ServerUrl;
use crate::db::socket::Socket;
use crate::db::tls::{Mode, Tls};

/// Asks the server for TLS (SSLRequest) and starts it when the server agrees; `prefer` goes on
/// in plain text when it does not, the other modes fail saying so.
pub(in crate::db) fn negotiate_tls(
    sock: &mut Socket,
    tls: &Tls,
    host: &str,
) -> Result<(), WireError> {
    let mut request = Vec::with_capacity(8);
    request.extend_from_slice(&8i32.to_be_bytes());
    request.extend_from_slice(&80_877_103i32.to_be_bytes());
    sock.write_all(&request)?;
    sock.fill(1)?;
    let answer = sock.unread()[0];
    sock.consume(1);
    match answer {
        b'S' => Ok(sock.start_tls(tls, host)?),
        b'N' if tls.mode == Mode::Prefer => Ok(()),
        b'N' => Err(WireError::Protocol(format!(
            "sslmode={}: the server does not accept TLS connections (ssl = off); turn ssl on, or use sslmode=prefer or disable",
            tls.mode.name()
        ))),
        other => Err(WireError::Protocol(format!(
            "the server answered the TLS request with '{}' (neither S nor N)",
            other.escape_ascii()
        ))),
    }
}

impl Wire {
    /// Connects and authenticates with the settings of a `postgres://` URL.
    pub fn connect(
        cfg: &ServerUrl,
        tls: Option<&Tls>,
        timeouts: crate::db::Timeouts,
    ) -> Result<Wire, WireError> {
        let port = cfg.port.unwrap_or(5432);
        let (mut sock, host, listener) = if cfg.unix() {
            let path = std::path::Path::new(&cfg.host).join(format!(".s.PGSQL.{port}"));
            (Socket::unix(&path, timeouts)?, None, Listener::Unix(path))
        } else {
            let host = if cfg.host.is_empty() {
                "localhost"
            } else {
                cfg.host.as_str()
            };
            (
                Socket::tcp(host, port, timeouts)?,
                Some(host),
                Listener::Tcp(host.to_string(), port),
            )
        };
        if let (Some(tls), Some(host)) = (tls, host) {
            negotiate_tls(&mut sock, tls, host)?;
        }
        let mut w = Wire::start(sock, cfg)?;
        w.listener = Some(listener);
        Ok(w)
    }

    /// Logs in on a connected socket.
    pub fn start(sock: Socket, cfg: &ServerUrl) -> Result<Wire, WireError> {
        let mut w = Wire {
            sock,
            wbuf: Vec::with_capacity(8 * 1024),
            desc: Vec::new(),
            key: None,
            listener: None,
            status: b'I',
        };
        let user = cfg.user.as_deref().unwrap_or("postgres").to_string();
        let mut startup = Vec::new();
        startup.extend_from_slice(&[0; 4]);
        startup.extend_from_slice(&196_608i32.to_be_bytes());
        for (k, v) in [
            ("user", user.as_str()),
            ("database", cfg.database.as_deref().unwrap_or(&user)),
            ("application_name", "dbsweep"),
            ("client_encoding", "UTF8"),
        ] {
            cstr(&mut startup, k);
            cstr(&mut startup, v);
        }
        if let Some((_, o)) = cfg.params.iter().find(|(k, _)| k == "options") {
            cstr(&mut startup, "options");
            cstr(&mut startup, o);
        }
        startup.push(0);
        let len = startup.len() as u32;
        startup[..4].copy_from_slice(&len.to_be_bytes());
        w.sock.write_all(&startup)?;
        w.authenticate(&user, cfg.password.as_deref().unwrap_or_default())?;
        w.wait_ready()?;
        w.sock.handshake_done();
        Ok(w)
    }

    fn authenticate(&mut self, user: &str, password: &[u8]) -> Result<(), WireError> {
        let mut scram: Option<ScramSha256> = None;
        loop {
            let (tag, range) = self.next_message()?;
            let body = self.sock.bytes(range).to_vec();
            match tag {
                b'E' => return Err(server_error(&body)),
                b'R' => {}
                _ => {
                    return Err(WireError::Protocol(format!(
                        "unexpected message '{}' during authentication",
                        tag as char
                    )));
                }
            }
            match be_i32(&body) {
                0 => return Ok(()),
                3 => {
                    let at = begin(&mut self.wbuf, b'p');
                    self.wbuf.extend_from_slice(password);
                    self.wbuf.push(0);
                    end(&mut self.wbuf, at);
                }
                5 => {
                    let hash = md5_hash(
                        user.as_bytes(),
                        password,
                        body.get(4..8)
                            .and_then(|x| x.try_into().ok())
                            .unwrap_or_default(),
                    );
                    let at = begin(&mut self.wbuf, b'p');
                    cstr(&mut self.wbuf, &hash);
                    end(&mut self.wbuf, at);
                }
                10 => {
                    let offers_scram = body
                        .get(4..)
                        .unwrap_or_default()
                        .split(|b| *b == 0)
                        .any(|m| m == SCRAM_SHA_256.as_bytes());
                    if !offers_scram {
                        return Err(WireError::Protocol(
                            "the server offers no supported SASL mechanism".into(),
                        ));
                    }
                    let s = ScramSha256::new(password, ChannelBinding::unsupported());
                    let at = begin(&mut self.wbuf, b'p');
                    cstr(&mut self.wbuf, SCRAM_SHA_256);
                    self.wbuf
                        .extend_from_slice(&(s.message().len() as i32).to_be_bytes());
                    self.wbuf.extend_from_slice(s.message());
                    end(&mut self.wbuf, at);
                    scram = Some(s);
                }
                11 => {
                    let s = scram.as_mut().ok_or_else(|| {
                        WireError::Protocol("SASL continue without a start".into())
                    })?;
                    s.update(body.get(4..).unwrap_or_default())?;
                    let at = begin(&mut self.wbuf, b'p');
                    self.wbuf.extend_from_slice(s.message());
                    end(&mut self.wbuf, at);
                }
                12 => {
                    let s = scram
                        .as_mut()
                        .ok_or_else(|| WireError::Protocol("SASL final without a start".into()))?;
                    s.finish(body.get(4..).unwrap_or_default())?;
                    continue;
                }
                other => {
                    return Err(WireError::Protocol(format!(
                        "unsupported authentication method {other}"
                    )));
                }
            }
            self.flush()?;
        }
    }
}
