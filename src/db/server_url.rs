//! A server URL read into what dbsweep's own clients connect with: `scheme://[user[:password]@]
//! [host][:port][/database][?name=value&...]`, each part percent-decoded; a host in brackets is
//! an IPv6 address, a host that decodes to a path (`%2Fvar%2Frun%2Fpostgresql`) a Unix socket
//! directory (PostgreSQL); `host`, `port`, `user`, `password` and `dbname` in the query win
//! over the same parts of the URL, as libpq reads them. Parsed here rather than by a client
//! crate's parser: the clients that measure are dbsweep's own (pgwire, mywire), and one reading
//! of a URL serves them, the managed servers' admin connections and the checks alike.

use percent_encoding::percent_decode_str;

/// What a server URL says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// The host, an IPv6 address without its brackets, or a Unix socket path; empty when the
    /// URL names none.
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    /// As bytes: a password need not be UTF-8 once decoded.
    pub password: Option<Vec<u8>>,
    pub database: Option<String>,
    /// The other query parameters (`socket`, ...), decoded, in order.
    pub params: Vec<(String, String)>,
}

impl ServerUrl {
    /// Reads `url` (already through [`super::url::normalise`], so that reserved characters
    /// of a password are encoded); the error says what is wrong, without the URL.
    pub fn parse(url: &str) -> Result<ServerUrl, String> {
        let parts = super::url::Parts::of(url).ok_or("not a URL (no ://)")?;
        let mut out = ServerUrl {
            user: parts.user.map(decode).transpose()?,
            password: parts.password.map(decode_bytes),
            ..ServerUrl::default()
        };
        let (hostport, path) = parts
            .hostpath
            .split_once('/')
            .unwrap_or((parts.hostpath, ""));
        if !path.is_empty() {
            out.database = Some(decode(path)?);
        }
        let (host, port) = match hostport.strip_prefix('[') {
            Some(v6) => {
                let (addr, rest) = v6
                    .split_once(']')
                    .ok_or("an IPv6 host opens [ and does not close it")?;
                let port = match rest {
                    "" => None,
                    r => Some(r.strip_prefix(':').ok_or("text after the IPv6 host's ]")?),
                };
                (addr.to_string(), port)
            }
            None => match hostport.rsplit_once(':') {
                Some((h, p)) => (decode(h)?, Some(p)),
                None => (decode(hostport)?, None),
            },
        };
        out.host = host;
        out.port = port.map(parse_port).transpose()?;
        for (k, v) in &parts.query {
            let v = v.ok_or_else(|| format!("parameter '{k}' is not name=value"))?;
            match k.to_ascii_lowercase().as_str() {
                "host" => out.host = decode(v)?,
                "port" => out.port = Some(parse_port(v)?),
                "user" => out.user = Some(decode(v)?),
                "password" | "pass" | "pwd" => out.password = Some(decode_bytes(v)),
                "dbname" => out.database = Some(decode(v)?),
                _ => out.params.push((k.to_string(), decode(v)?)),
            }
        }
        Ok(out)
    }

    /// Whether the host is a Unix socket directory (a path).
    pub fn unix(&self) -> bool {
        self.host.starts_with('/')
    }

    /// A query parameter's value (its name in either spelling, `-` or `_`).
    pub fn param(&self, name: &str) -> Option<&str> {
        let norm = |k: &str| k.to_ascii_lowercase().replace('-', "_");
        self.params
            .iter()
            .find(|(k, _)| norm(k) == norm(name))
            .map(|(_, v)| v.as_str())
    }
}

fn parse_port(p: &str) -> Result<u16, String> {
    p.parse::<u16>()
        .map_err(|_| format!("port {p:?} is not a port number (1 to 65535)"))
}

fn decode(s: &str) -> Result<String, String> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| "a part of the URL decodes to bytes that are not UTF-8".into())
}

fn decode_bytes(s: &str) -> Vec<u8> {
    percent_decode_str(s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_read_as_the_client_libraries_read_them() {
        let u = ServerUrl::parse("postgres://sb:p%40ss@db.example:5433/bench").unwrap();
        assert_eq!(
            u,
            ServerUrl {
                host: "db.example".into(),
                port: Some(5433),
                user: Some("sb".into()),
                password: Some(b"p@ss".to_vec()),
                database: Some("bench".into()),
                params: vec![],
            }
        );
        let u = ServerUrl::parse("postgres://sb@%2Fvar%2Frun%2Fpostgresql:5432/x").unwrap();
        assert!(u.unix() && u.host == "/var/run/postgresql" && u.port == Some(5432));
        let u = ServerUrl::parse("postgresql://sb@/x?host=/tmp/s&port=6000&dbname=y").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.database.as_deref()),
            ("/tmp/s", Some(6000), Some("y"))
        );
        let u = ServerUrl::parse("mysql://root@[::1]:3307/db?socket=/run/m.sock").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.param("socket")),
            ("::1", Some(3307), Some("/run/m.sock"))
        );
        let u = ServerUrl::parse("mysql://localhost").unwrap();
        assert_eq!(
            (u.user, u.password, u.database, u.port),
            (None, None, None, None)
        );
        // A password as bytes, and one given as a parameter.
        let u = ServerUrl::parse("mysql://u:%FF@h/db").unwrap();
        assert_eq!(u.password, Some(vec![0xff]));
        let u = ServerUrl::parse("postgres://u@h/db?password=a%26b").unwrap();
        assert_eq!(u.password, Some(b"a&b".to_vec()));
        for bad in [
            "postgres://u@h:99999/db",
            "postgres://u@h:x/db",
            "mysql://u@[::1/db",
            "mysql://u@[::1]x/db",
            "nothing",
        ] {
            assert!(ServerUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
