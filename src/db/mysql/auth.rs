//! The MySQL handshake's authentication: the plugins' scrambles (mysql_native_password,
//! caching_sha2_password, sha256_password, ed25519, cleartext), the RSA exchange outside TLS and
//! the auth-switch dialogue.

use std::io;

use sha1::{Digest, Sha1};
use sha2::{Sha256, Sha512};

use super::packet::{
    CLIENT_MYSQL, CONNECT_WITH_DB, DEPRECATE_EOF, LOCAL_FILES, LONG_FLAG, LONG_PASSWORD,
    MARIADB_CACHE_METADATA, MAX_PACKET, MULTI_RESULTS, PLUGIN_AUTH, PROTOCOL_41, SECURE_CONNECTION,
    SSL, TRANSACTIONS, WireError, server_error,
};
use super::wire::{Endpoint, Wire};
use crate::db::tls::Mode;
/// The password as caching_sha2_password and sha256_password send it outside TLS: the
/// NUL-terminated password XOR-ed with the scramble (repeated), encrypted with RSA-OAEP
/// (SHA-1) under the server's public key (`pem`, SubjectPublicKeyInfo or PKCS#1).
pub(crate) fn rsa_password(
    pem: &[u8],
    password: &[u8],
    scramble: &[u8],
) -> Result<Vec<u8>, WireError> {
    use base64::Engine as _;
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    let text = std::str::from_utf8(pem)
        .map_err(|_| WireError::Protocol("the server's RSA public key is not PEM text".into()))?;
    // The body between the BEGIN and END lines, read leniently (the strict PEM reader refuses
    // MySQL's own public_key.pem files): SubjectPublicKeyInfo, or PKCS#1 ("RSA PUBLIC KEY").
    let body: String = text
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN "))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END "))
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .map_err(|e| WireError::Protocol(format!("the server's RSA public key: {e}")))?;
    let key = rsa::RsaPublicKey::from_public_key_der(&der)
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_der(&der))
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
pub(crate) fn ed25519_signature(password: &[u8], scramble: &[u8]) -> Vec<u8> {
    use ed25519_dalek::hazmat::{ExpandedSecretKey, raw_sign};
    let expanded: [u8; 64] = Sha512::digest(password).into();
    let key = ExpandedSecretKey::from_bytes(&expanded);
    let public = ed25519_dalek::VerifyingKey::from(&key);
    raw_sign::<Sha512>(&key, scramble, &public)
        .to_bytes()
        .to_vec()
}

pub(crate) fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

/// The auth response of `plugin` for `password` and the server's 20-byte `scramble`;
/// `secure` when the connection is inside TLS (plugins that send the password itself need it).
pub(crate) fn scramble_password(
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
    /// The server's greeting: its capabilities (MariaDB's extended ones apart), the scramble
    /// and the authentication plugin it asks for; the connection id kept for KILL QUERY.
    fn read_greeting(&mut self) -> Result<Greeting, WireError> {
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
        // The connection id: what KILL QUERY names when Ctrl-C stops a statement.
        if let Some(&[a, b, c, d]) = p.get(at..at + 4) {
            self.connection_id = Some(u32::from_le_bytes([a, b, c, d]));
        }
        at += 4;
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
        // MariaDB (CLIENT_MYSQL clear): its extended capabilities in the last 4 reserved bytes.
        let extended = match p.get(at + 7..at + 11) {
            Some(&[a, b, c, d]) if caps & CLIENT_MYSQL == 0 => u32::from_le_bytes([a, b, c, d]),
            _ => 0,
        };
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
        Ok(Greeting {
            caps,
            extended,
            scramble,
            plugin,
        })
    }

    pub(crate) fn handshake(&mut self, e: &Endpoint) -> Result<(), WireError> {
        let Greeting {
            caps,
            extended,
            scramble,
            plugin,
        } = self.read_greeting()?;
        let mut flags = LONG_PASSWORD
            | LONG_FLAG
            | LOCAL_FILES
            | PROTOCOL_41
            | TRANSACTIONS
            | SECURE_CONNECTION
            | MULTI_RESULTS
            | PLUGIN_AUTH
            | DEPRECATE_EOF;
        if e.database.is_some() {
            flags |= CONNECT_WITH_DB;
        }
        flags &= caps | CONNECT_WITH_DB;
        let extended = extended & MARIADB_CACHE_METADATA;
        self.deprecate_eof = flags & DEPRECATE_EOF != 0;
        self.cache_metadata = extended != 0;
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
                w.extend_from_slice(&[0; 19]);
                w.extend_from_slice(&extended.to_le_bytes());
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
        w.extend_from_slice(&[0; 19]);
        w.extend_from_slice(&extended.to_le_bytes()); // zero unless MariaDB offered them
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
    pub(crate) fn send_rsa_password(
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

    pub(crate) fn finish_auth(
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
}

/// What a MySQL server's greeting says.
struct Greeting {
    caps: u32,
    extended: u32,
    scramble: Vec<u8>,
    plugin: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::socket::Socket;

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
        let w = Wire::start(Socket::from_unix(client, Default::default()).unwrap(), &e);
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
}
