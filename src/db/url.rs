//! Database URLs: forms, the password parameters and their redaction, a password from the
//! environment, a server URL's checks and ${VAR} interpolation.

use super::conn::Param;
use crate::error::Error;

/// The directory that holds a `sqlite://` URL's file (`.` for a bare file name); None for
/// another database.
pub fn sqlite_dir(url: &str) -> Option<std::path::PathBuf> {
    let path = url.strip_prefix("sqlite://")?;
    let file = std::path::Path::new(path.split('?').next().unwrap_or(path));
    Some(match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    })
}

/// Query parameters that name a password, in any URL form dbsweep reads.
pub(crate) const PASSWORD_PARAMS: [&str; 3] = ["password", "pass", "pwd"];

/// Every query parameter a target URL may carry, for any database: where a query starts and
/// where one parameter ends are found by these names, so that a password holding `?`, `&`,
/// `@`, `/` or `#` unencoded is still read (and hidden) whole.
const KNOWN_PARAMS: [&str; 22] = [
    "host",
    "port",
    "user",
    "password",
    "pass",
    "pwd",
    "dbname",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "socket",
    "ssl-mode",
    "ssl_mode",
    "ssl-ca",
    "ssl_ca",
    "ssl-cert",
    "ssl_cert",
    "ssl-key",
    "ssl_key",
    "server-public-key",
    "server_public_key",
];

/// Whether `s` starts with a known parameter and its `=`.
fn starts_known_param(s: &str) -> bool {
    KNOWN_PARAMS.iter().any(|k| {
        // Bytes, not str slices: the URL may hold any character where a name is looked for.
        let b = s.as_bytes();
        b.len() > k.len() && b[..k.len()].eq_ignore_ascii_case(k.as_bytes()) && b[k.len()] == b'='
    })
}

/// A URL taken apart: `scheme://[user[:password]@]hostpath[?query]`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Parts<'a> {
    pub scheme: &'a str,
    pub user: Option<&'a str>,
    pub password: Option<&'a str>,
    pub hostpath: &'a str,
    /// `(name, value)` in order (no value without `=`); a known parameter's value runs up to
    /// the next `&` that starts a known parameter.
    pub query: Vec<(&'a str, Option<&'a str>)>,
    /// Whether a `?` started a query (perhaps empty).
    pub has_query: bool,
}

impl<'a> Parts<'a> {
    /// Takes `url` apart; `None` without `://`. The user information runs to the last `@`
    /// before the query, and the query starts at the first `?` that a known parameter follows
    /// (or the first `?` after the user information), so that unencoded reserved characters in
    /// a password stay in the password.
    pub fn of(url: &'a str) -> Option<Parts<'a>> {
        let (scheme, rest) = url.split_once("://")?;
        let query_at = rest
            .match_indices('?')
            .map(|(i, _)| i)
            .find(|&i| starts_known_param(&rest[i + 1..]));
        let head = &rest[..query_at.unwrap_or(rest.len())];
        let (userinfo, after) = match head.rfind('@') {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let (hostpath, query) = match query_at {
            Some(q) => (&rest[rest.len() - after.len()..q], Some(&rest[q + 1..])),
            None => match after.split_once('?') {
                Some((h, q)) => (h, Some(q)),
                None => (after, None),
            },
        };
        let (user, password) = match userinfo {
            Some(u) => match u.split_once(':') {
                Some((user, pw)) => (Some(user), Some(pw)),
                None => (Some(u), None),
            },
            None => (None, None),
        };
        Some(Parts {
            scheme,
            user,
            password,
            hostpath,
            query: query.map(split_query).unwrap_or_default(),
            has_query: query.is_some(),
        })
    }

    /// The URL with the user, the password and a password parameter's value percent-encoded
    /// (valid `%XX` escapes kept): what a URL parser reads back as exactly these. Other values
    /// (paths, modes) stay as written: dbsweep reads them itself, undecoded.
    pub fn encoded(&self) -> String {
        let mut out = format!("{}://", self.scheme);
        if let Some(u) = self.user {
            out.push_str(&encode(u));
            if let Some(p) = self.password {
                out.push(':');
                out.push_str(&encode(p));
            }
            out.push('@');
        }
        out.push_str(self.hostpath);
        if self.has_query {
            out.push('?');
            let pairs: Vec<String> = self
                .query
                .iter()
                .map(|(k, v)| match v {
                    Some(v) if PASSWORD_PARAMS.contains(&k.to_ascii_lowercase().as_str()) => {
                        format!("{k}={}", encode(v))
                    }
                    Some(v) => format!("{k}={v}"),
                    None => k.to_string(),
                })
                .collect();
            out.push_str(&pairs.join("&"));
        }
        out
    }
}

/// Splits a query at each `&` that a known parameter follows (and at every `&` between
/// unknown ones, which the checks then name).
fn split_query(q: &str) -> Vec<(&str, Option<&str>)> {
    let mut cuts = vec![0];
    for (i, _) in q.match_indices('&') {
        let next = &q[i + 1..];
        let in_known_value = q[*cuts.last().unwrap_or(&0)..i]
            .split_once('=')
            .is_some_and(|(k, _)| KNOWN_PARAMS.iter().any(|p| p.eq_ignore_ascii_case(k)));
        if !in_known_value || starts_known_param(next) {
            cuts.push(i + 1);
        }
    }
    cuts.push(q.len() + 1);
    cuts.windows(2)
        .map(|w| &q[w[0]..w[1] - 1])
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (p, None),
        })
        .collect()
}

/// Percent-encodes what is not unreserved in a URL part, keeping valid `%XX` escapes (a
/// password written encoded stays as written; a lone `%` is encoded).
fn encode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let escape = c == b'%'
            && i + 2 < b.len()
            && b[i + 1].is_ascii_hexdigit()
            && b[i + 2].is_ascii_hexdigit();
        if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') || escape {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
        i += 1;
    }
    out
}

/// `url` with its user and passwords percent-encoded where they hold reserved characters, for
/// the URL parsers: a password with `?`, `@`, `/`, `#`, `&` or spaces connects as written.
pub(crate) fn normalise(url: &str) -> String {
    Parts::of(url).map_or_else(|| url.to_string(), |p| p.encoded())
}

/// `url` with every password replaced by `***` (the `user:password@` form and `?password=`):
/// for output and results files. Found by taking the URL apart (see [`Parts::of`]), so that a
/// password holding reserved characters is hidden whole.
pub fn redact_url(url: &str) -> String {
    let Some(p) = Parts::of(url) else {
        return url.to_string();
    };
    let mut out = format!("{}://", p.scheme);
    if let Some(u) = p.user {
        out.push_str(u);
        if p.password.is_some() {
            out.push_str(":***");
        }
        out.push('@');
    }
    out.push_str(p.hostpath);
    if p.has_query {
        let pairs: Vec<String> = p
            .query
            .iter()
            .map(|(k, v)| match v {
                Some(_) if PASSWORD_PARAMS.contains(&k.to_ascii_lowercase().as_str()) => {
                    format!("{k}=***")
                }
                Some(v) => format!("{k}={v}"),
                None => k.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

/// The password to use instead of the URL's, from `var` (as libpq and the mysql client do):
/// when the URL has none, or has the `***` that dbsweep writes in place of a password (a
/// resumed sweep's saved plan), which then needs `var`.
pub(crate) fn password_from_env(
    url: &str,
    given: Option<&[u8]>,
    var: &str,
) -> Result<Option<Vec<u8>>, Error> {
    let redacted = given == Some(b"***".as_slice());
    if given.is_some() && !redacted {
        return Ok(None);
    }
    match std::env::var_os(var) {
        Some(p) => Ok(Some(p.into_encoded_bytes())),
        None if redacted => Err(Error::Usage(format!(
            "--target {}: dbsweep does not save passwords; set {var} to this target's password",
            redact_url(url)
        ))),
        None => Ok(None),
    }
}

/// Refuses a server URL whose query has a parameter that dbsweep does not act on (a silently
/// ignored `sslmode=require` would send in plain text what the user asked to encrypt), and
/// one without a host or with port 0.
pub(crate) fn check_server_url(
    url: &str,
    allowed: &[(&str, Option<&[&str]>)],
) -> Result<(), Error> {
    let shown = redact_url(url);
    let bad = |why: String| Error::Usage(format!("--target {shown}: {why}"));
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut has_socket = false;
    for (k, v) in query_pairs(query, &shown)? {
        has_socket |= k == "host" || k == "socket";
        match allowed.iter().find(|(name, _)| *name == k) {
            None => {
                let names: Vec<&str> = allowed.iter().map(|(n, _)| *n).collect();
                return Err(bad(format!(
                    "parameter '{k}' is not supported by dbsweep (it would be ignored); \
                     supported: {}",
                    names.join(", ")
                )));
            }
            Some((_, Some(values))) if !values.iter().any(|x| x.eq_ignore_ascii_case(&v)) => {
                return Err(bad(format!(
                    "{k}={v}: use {}, or leave it out",
                    values.join(", ")
                )));
            }
            _ => {}
        }
    }
    let hostport = main.split('/').next().unwrap_or_default();
    let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
    if hostport.is_empty() && !has_socket {
        return Err(bad(
            "no host: write the server's host after :// (and @)".into()
        ));
    }
    let port = if let Some(p) = hostport.strip_prefix('[') {
        p.split_once("]:").map(|(_, port)| port)
    } else {
        hostport.rsplit_once(':').map(|(_, port)| port)
    };
    if let Some(port) = port
        && port.parse::<u16>().is_ok_and(|p| p == 0)
    {
        return Err(bad("port 0 is not a server's port".into()));
    }
    Ok(())
}

/// Renders `sql` with each `?` replaced by its parameter as an SQL literal, for text-protocol
/// statements (`--ps-mode disable`). `backslash_escapes`: MySQL treats `\` in strings as an
/// escape, PostgreSQL (standard_conforming_strings) does not.
pub fn interpolate(sql: &str, params: &[Param], backslash_escapes: bool) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(sql.len() + params.len() * 16);
    let mut values = params.iter();
    for ch in sql.chars() {
        if ch != '?' {
            out.push(ch);
            continue;
        }
        match values.next() {
            Some(Param::Int(i)) => {
                let _ = write!(out, "{i}");
            }
            Some(Param::Text(s)) => {
                out.push('\'');
                for c in s.chars() {
                    match c {
                        '\'' => out.push_str("''"),
                        '\\' if backslash_escapes => out.push_str("\\\\"),
                        c => out.push(c),
                    }
                }
                out.push('\'');
            }
            Some(Param::Null) | None => out.push_str("NULL"),
        }
    }
    out
}

/// Splits `a=b&c=d` query parameters of a target URL.
/// A parameter given twice is refused: which of the two counts would be a guess.
pub(crate) fn query_pairs(query: &str, url: &str) -> Result<Vec<(String, String)>, Error> {
    let pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| {
                    Error::Usage(format!("--target {url}: parameter '{p}' is not name=value"))
                })
        })
        .collect::<Result<_, _>>()?;
    let norm = |k: &str| k.to_ascii_lowercase().replace('-', "_");
    for (i, (k, _)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(e, _)| norm(e) == norm(k)) {
            return Err(Error::Usage(format!(
                "--target {url}: parameter '{k}' is given twice; give it once"
            )));
        }
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_given_twice_is_refused() {
        let e = query_pairs("lock_wait=fifo&lock_wait=poll", "sqlite://x.db")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'lock_wait' is given twice"), "{e}");
        assert!(query_pairs("lock-wait=fifo&LOCK_WAIT=poll", "x").is_err());
        assert_eq!(query_pairs("a=1&b=2", "x").unwrap().len(), 2);
    }

    #[test]
    fn passwords_with_reserved_characters_are_hidden_whole_and_encoded_exactly() {
        let pw = "p?w@d:/x#y%zz&q r";
        for url in [
            format!("postgres://u:{pw}@h:5432/db"),
            format!("mysql://u:{pw}@h/db?ssl-mode=REQUIRED"),
            format!("postgres://h/db?user=u&password={pw}&sslmode=require"),
        ] {
            let shown = redact_url(&url);
            for part in ["p?w", "d:/x", "#y", "zz", "q r"] {
                assert!(!shown.contains(part), "{url} -> {shown}");
            }
            let p = Parts::of(&url).unwrap();
            let given = p.password.or_else(|| {
                p.query
                    .iter()
                    .find(|(k, _)| *k == "password")
                    .and_then(|(_, v)| *v)
            });
            assert_eq!(given, Some(pw), "{url}");
            assert!(
                p.hostpath.starts_with('h') && p.hostpath.ends_with("/db"),
                "{url}"
            );
        }
        // A multi-byte character where a parameter name is looked for is no panic.
        assert_eq!(
            redact_url("postgres://h/db?ho€st=1&password=x€y"),
            "postgres://h/db?ho€st=1&password=***"
        );
        assert_eq!(
            normalise("mysql://u:a?b%41 c@h/db"),
            "mysql://u:a%3Fb%41%20c@h/db"
        );
        // Nothing to hide, nothing changed.
        assert_eq!(
            redact_url("postgres://u@h/db?sslmode=require"),
            "postgres://u@h/db?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://u:pw@h/db?password=x&sslmode=require"),
            "postgres://u:***@h/db?password=***&sslmode=require"
        );
    }
}
