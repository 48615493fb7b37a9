//! sysbench's connection options (`--db-driver`, `--pgsql-*`, `--mysql-*`) turned into the target
//! URL they describe: the drop-in and a sysbench script's run share them.

use crate::error::Error;
/// sysbench's connection options (`--db-driver`, `--pgsql-host`, `--mysql-port`,
/// `--mysql-socket`, ...) become the `--target` URL they describe, so that published command
/// lines work as they are; `--mysql-ignore-errors` comes back apart. (A Lua script's command
/// line, which the script reads.)
pub(crate) fn sysbench_connection(
    general: Vec<String>,
) -> Result<(Vec<String>, Option<Vec<String>>), Error> {
    let c = connection(general, false)?;
    let mut rest = c.rest;
    if let Some(url) = c.url {
        rest.push(format!("--target={url}"));
    }
    Ok((rest, c.ignore))
}

/// What sysbench's connection options say.
pub(crate) struct Connection {
    /// The other options, as they were.
    pub rest: Vec<String>,
    /// The URL the options describe; None where none was given (and no default driver).
    pub url: Option<String>,
    /// `--mysql-ignore-errors`'s error names.
    pub ignore: Option<Vec<String>>,
}

/// sysbench's connection options out of `general` and the URL they describe; with
/// `mysql_default`, sysbench's default driver (MySQL, its defaults) where none is named.
pub(crate) fn connection(general: Vec<String>, mysql_default: bool) -> Result<Connection, Error> {
    let (rest, mut found) = take_connection_options(general);
    let ignore = found
        .iter()
        .rev()
        .find(|(k, _)| k == "mysql-ignore-errors")
        .map(|(_, v)| {
            v.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .filter(|c| !c.is_empty())
                .collect()
        });
    found.retain(|(k, _)| k != "mysql-ignore-errors");
    if mysql_default && !found.iter().any(|(k, _)| k == "db-driver") {
        found.insert(0, ("db-driver".into(), "mysql".into()));
    }
    if found.is_empty() {
        return Ok(Connection {
            rest,
            url: None,
            ignore,
        });
    }
    let url = connection_url(&found)?;
    if rest
        .iter()
        .any(|a| a == "--target" || a.starts_with("--target="))
    {
        return Err(Error::Usage(
            "give either --target or sysbench's --db-driver/--pgsql-*/--mysql-* options, not both"
                .into(),
        ));
    }
    Ok(Connection {
        rest,
        url: Some(url),
        ignore,
    })
}

/// sysbench's connection options out of `general`, with their values; the other words as
/// they were.
fn take_connection_options(general: Vec<String>) -> (Vec<String>, Vec<(String, String)>) {
    let mut rest = Vec::new();
    let mut found: Vec<(String, String)> = Vec::new();
    let mut it = general.into_iter().peekable();
    while let Some(a) = it.next() {
        let name = a
            .strip_prefix("--")
            .map(|n| n.split('=').next().unwrap_or(n).replace('_', "-"));
        let ours = name.as_deref().is_some_and(|n| {
            n == "db-driver"
                || n == "mysql-socket"
                || n == "mysql-ignore-errors"
                || ["pgsql-", "mysql-"].iter().any(|p| {
                    n.strip_prefix(p)
                        .is_some_and(|f| ["host", "port", "user", "password", "db"].contains(&f))
                })
                || [
                    "pgsql-sslmode",
                    "pgsql-sslrootcert",
                    "pgsql-sslcert",
                    "pgsql-sslkey",
                    "mysql-ssl",
                    "mysql-ssl-ca",
                    "mysql-ssl-cert",
                    "mysql-ssl-key",
                ]
                .contains(&n)
        });
        if !ours {
            rest.push(a);
            continue;
        }
        let name = name.expect("an option");
        let value = match a.split_once('=') {
            Some((_, v)) => v.to_string(),
            None => it.next_if(|n| !n.starts_with("--")).unwrap_or_default(),
        };
        found.push((name, value));
    }
    (rest, found)
}

/// The URL that sysbench's connection options (`found`, the last of each name winning) describe.
fn connection_url(found: &[(String, String)]) -> Result<String, Error> {
    let get = |n: &str| {
        found
            .iter()
            .rev()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
    };

    let driver = get("db-driver").unwrap_or_else(|| {
        if found.iter().any(|(k, _)| k.starts_with("pgsql-")) {
            "pgsql".into()
        } else {
            "mysql".into()
        }
    });
    let (scheme, prefix, port) = match driver.as_str() {
        "pgsql" => ("postgres", "pgsql", 5432),
        "mysql" => ("mysql", "mysql", 3306),
        other => {
            return Err(Error::Usage(format!(
                "--db-driver={other}: use pgsql or mysql (or --target URL)"
            )));
        }
    };
    let opt = |f: &str| get(&format!("{prefix}-{f}"));
    // The user and password are options, not URL text: encoded whole, so that any character
    // in them (`?`, `@`, `%`, spaces) reaches the server as given and is hidden whole.
    let enc = |v: &str| {
        percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC).to_string()
    };
    let user = enc(&opt("user").unwrap_or_else(|| "sbtest".into()));
    let auth = match opt("password").filter(|p| !p.is_empty()) {
        Some(p) => format!("{user}:{}", enc(&p)),
        None => user,
    };
    // sysbench's MySQL driver spreads its connections over lists of hosts and ports (libpq
    // would try a list of PostgreSQL hosts in turn): dbsweep measures one server at a time.
    for f in ["host", "port"] {
        if let Some(v) = opt(f).filter(|v| v.contains(',')) {
            return Err(Error::Usage(format!(
                "--{prefix}-{f}={v}: a list of {f}s is not supported (sysbench spreads its \
                 connections over them); dbsweep connects to one server: give one {f}, and run \
                 one dbsweep per server"
            )));
        }
    }
    // A host that is a directory is PostgreSQL's socket directory (percent-encoded in the URL).
    let host = opt("host")
        .unwrap_or_else(|| "localhost".into())
        .replace('/', "%2F");
    let mut url = format!(
        "{scheme}://{auth}@{host}:{}/{}",
        opt("port").unwrap_or_else(|| port.to_string()),
        opt("db").unwrap_or_else(|| "sbtest".into()),
    );
    let mut query: Vec<String> = Vec::new();
    // sysbench takes an empty --mysql-socket as none (its suite passes one to mean TCP).
    if let Some(socket) = get("mysql-socket").filter(|s| prefix == "mysql" && !s.is_empty()) {
        query.push(format!("socket={socket}"));
    }
    if prefix == "mysql" {
        // sysbench's --mysql-ssl (on/off, or 1.1's mode names) and its certificate files.
        if let Some(v) = opt("ssl") {
            let mode = match v.to_ascii_lowercase().as_str() {
                "on" | "true" | "yes" | "1" => "REQUIRED".to_string(),
                "off" | "false" | "no" | "0" => "DISABLED".to_string(),
                other => other.to_ascii_uppercase(),
            };
            query.push(format!("ssl-mode={mode}"));
        }
        for f in ["ssl-ca", "ssl-cert", "ssl-key"] {
            if let Some(v) = opt(f) {
                let v =
                    percent_encoding::utf8_percent_encode(&v, percent_encoding::NON_ALPHANUMERIC);
                query.push(format!("{f}={v}"));
            }
        }
    }
    if prefix == "pgsql" {
        // sysbench's --pgsql-sslmode and the certificate files, as libpq's URL parameters.
        for f in ["sslmode", "sslrootcert", "sslcert", "sslkey"] {
            if let Some(v) = opt(f) {
                let v =
                    percent_encoding::utf8_percent_encode(&v, percent_encoding::NON_ALPHANUMERIC);
                query.push(format!("{f}={v}"));
            }
        }
    }
    if !query.is_empty() {
        url.push('?');
        url.push_str(&query.join("&"));
    }
    Ok(url)
}
