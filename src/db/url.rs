//! Database URLs: forms, the password parameters and their redaction, a password from the
//! environment, a server URL's checks and ${VAR} interpolation.

use super::conn::Param;
use crate::error::Error;

/// Query parameters that name a password, in any URL form dbsweep reads.
pub(crate) const PASSWORD_PARAMS: [&str; 3] = ["password", "pass", "pwd"];

/// `url` with every password replaced by `***` (the `user:password@` form and `?password=`):
/// for output and results files.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let main = match main.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => main.to_string(),
        },
        None => main.to_string(),
    };
    let Some(query) = query else {
        return format!("{scheme}://{main}");
    };
    let query: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if PASSWORD_PARAMS.contains(&k.to_ascii_lowercase().as_str()) => {
                format!("{k}=***")
            }
            _ => p.to_string(),
        })
        .collect();
    format!("{scheme}://{main}?{}", query.join("&"))
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
pub(crate) fn query_pairs(query: &str, url: &str) -> Result<Vec<(String, String)>, Error> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| {
                    Error::Usage(format!("--target {url}: parameter '{p}' is not name=value"))
                })
        })
        .collect()
}
