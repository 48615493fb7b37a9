//! A managed MariaDB (or MySQL) server: install-db, then mariadbd with a generated my.cnf
//! holding dbsweep's settings, as the unprivileged `mysql` user when dbsweep runs as root.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use super::instance::ManagedServer;
use super::kind::ServerKind;
use super::setup::{
    check_reachable, chown_tree, find_binary, free_port, run_setup, server_user, unprivileged_user,
    url_component, version_of, write_file,
};
use crate::error::Error;

pub const USER: &str = "sbtest";
pub const DATABASE: &str = "sbtest";

/// The server binary's version line.
pub(super) fn version(kind: ServerKind) -> Result<String, Error> {
    Ok(version_of(&server_binary(kind)?))
}

fn server_binary(kind: ServerKind) -> Result<PathBuf, Error> {
    let names: &[&str] = if kind == ServerKind::Mysql {
        &["mysqld"]
    } else {
        &["mariadbd", "mysqld"]
    };
    let bin = find_binary(names, &[PathBuf::from("/usr/sbin")]).ok_or_else(|| {
        Error::Usage(format!(
            "--server {}: no server binary ({}) is installed; install the Debian package {}",
            if kind == ServerKind::Mysql {
                "mysql"
            } else {
                "mariadb"
            },
            names.join(" or "),
            if kind == ServerKind::Mysql {
                "mysql-server (from MySQL's own repository)"
            } else {
                "mariadb-server (apt-get install mariadb-server)"
            }
        ))
    })?;
    let is_mariadb = version_of(&bin).contains("MariaDB");
    if kind == ServerKind::Mysql && is_mariadb {
        return Err(Error::Usage(format!(
            "--server mysql: {} is MariaDB's server, not MySQL's; use --server mariadb, or install MySQL's mysql-server",
            bin.display()
        )));
    }
    Ok(bin)
}

/// The server binary: its build's, or the system's.
fn binary_of(s: &ManagedServer) -> Result<PathBuf, Error> {
    match &s.build {
        Some(b) => Ok(b.server.clone()),
        None => server_binary(s.kind),
    }
}

/// `--basedir` for a build of its own (an unpacked tree finds its share/ and plugins there).
fn basedir_arg(s: &ManagedServer) -> Option<String> {
    s.build
        .as_ref()
        .filter(|b| !b.is_system())
        .map(|b| format!("--basedir={}", b.basedir.display()))
}

pub(super) fn start(s: &mut ManagedServer) -> Result<(), Error> {
    let bin = binary_of(s)?;
    s.version = match &s.build {
        Some(b) => b.line.clone(),
        None => version_of(&bin),
    };
    let user = server_user(s.kind);
    s.runs_as = unprivileged_user(user)?;
    check_reachable(&s.dir, s.runs_as, user)?;
    chown_tree(&s.dir, s.runs_as)?;
    let data = s.dir.join("data");
    if !data.join("mysql").exists() && !super::tables_cache::restore(s, &bin, &data) {
        let mut install = if s.kind == ServerKind::Mariadb {
            let names = ["mariadb-install-db", "mysql_install_db"];
            let script = match &s.build {
                Some(b) if !b.is_system() => b.tool(&names).ok_or_else(|| {
                    Error::Usage(format!(
                        "--server-basedir {}: no scripts/mariadb-install-db (or mysql_install_db) in it",
                        b.basedir.display()
                    ))
                })?,
                _ => find_binary(&names, &[]).ok_or_else(|| {
                    Error::Usage("--server mariadb: mariadb-install-db is not installed; install the Debian package mariadb-server".into())
                })?,
            };
            let mut c = Command::new(script);
            c.arg("--no-defaults");
            if let Some(arg) = basedir_arg(s) {
                c.arg(arg);
            }
            c.arg(format!("--datadir={}", data.display()))
                .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
            c
        } else {
            let mut c = Command::new(&bin);
            c.arg("--no-defaults");
            if let Some(arg) = basedir_arg(s) {
                c.arg(arg);
            }
            c.arg("--initialize-insecure")
                .arg(format!("--datadir={}", data.display()));
            c
        };
        // Its temporary files go to the server's own directory: the caller's TMPDIR may be
        // closed to the server's user.
        install.current_dir(&s.dir).env("TMPDIR", &s.dir);
        if let Some(b) = &s.build {
            b.prepare(&mut install);
        }
        if let Some((uid, gid)) = s.runs_as {
            install.uid(uid).gid(gid);
        }
        run_setup(&mut install, "installing the server's system tables")?;
        super::tables_cache::keep(s, &bin, &data);
    }
    launch(s)
}

/// The server's my.cnf (its directories, loopback, the log, what MySQL's defaults assume of
/// its package, TLS when asked, the settings); the CA's file under TLS.
fn my_cnf(
    s: &ManagedServer,
    socket: &std::path::Path,
) -> Result<(String, Option<std::path::PathBuf>), Error> {
    let mut cnf = format!(
        "[mysqld]\ndatadir={}\ntmpdir={}\nport={}\nbind-address=127.0.0.1\nsocket={}\npid-file={}\nlog-error={}\n",
        s.dir.join("data").display(),
        s.dir.display(),
        s.port,
        socket.display(),
        s.dir.join("mysqld.pid").display(),
        s.log.display()
    );
    if let Some(arg) = basedir_arg(s) {
        cnf.push_str(arg.trim_start_matches("--"));
        cnf.push('\n');
    }
    if s.kind == ServerKind::Mysql {
        // MySQL's defaults assume its package's layout: a secure-file-priv directory under
        // /var/lib, the X plugin on a port of its own, LOAD DATA LOCAL refused (the loader's
        // bulk path). The files directory is the server's own, inside its directory.
        let files = s.dir.join("files");
        std::fs::create_dir_all(&files)
            .map_err(|e| Error::Run(format!("{}: {e}", files.display())))?;
        chown_tree(&files, s.runs_as)?;
        cnf.push_str(&format!(
            "secure-file-priv={}\nmysqlx=OFF\nlocal-infile=ON\n",
            files.display()
        ));
    }
    let tls = if s.tls {
        let files = super::certs::write(&s.dir, USER)?;
        for f in [&files.ca, &files.cert, &files.key] {
            chown_tree(f, s.runs_as)?;
        }
        // TLS on, and required of every TCP connection (the Unix socket counts as secure).
        cnf.push_str(&format!(
            "ssl-ca={}\nssl-cert={}\nssl-key={}\nrequire-secure-transport={}\n",
            files.ca.display(),
            files.cert.display(),
            files.key.display(),
            if s.tls_required { "ON" } else { "OFF" }
        ));
        Some(files.ca)
    } else {
        if s.kind == ServerKind::Mariadb {
            // TLS off when not asked for: MariaDB 11.4 and later would otherwise make a
            // self-signed certificate at every start (an RSA key: seconds of CPU on this kind
            // of machine, per cell) that no connection of the run uses; off, every version
            // runs as 10.11 does. A setting of the plan's own (`ssl=...`) still wins.
            cnf.push_str("ssl=0\n");
        }
        None
    };
    for (name, value) in &s.settings {
        cnf.push_str(&format!("{name}={value}\n"));
    }
    Ok((cnf, tls))
}

/// Writes my.cnf, starts the server, waits for it, and creates the sbtest user and database.
pub(super) fn launch(s: &mut ManagedServer) -> Result<(), Error> {
    let bin = binary_of(s)?;
    if s.port == 0 {
        s.port = free_port()?;
    }
    let socket = s.dir.join("mysqld.sock");
    let (cnf, tls) = my_cnf(s, &socket)?;
    let path = s.dir.join("my.cnf");
    write_file(&path, cnf.as_bytes(), 0o644)?;
    chown_tree(&path, s.runs_as)?;
    // The server opens its error log itself (log-error), as its own user: the file must be
    // there and its own before the start (dbsweep appends the server's output to it too).
    if !s.log.exists() {
        write_file(&s.log, b"", 0o644)?;
    }
    chown_tree(&s.log, s.runs_as)?;
    s.spawn(&bin, &[format!("--defaults-file={}", path.display())])?;
    // The set-up connection is dbsweep's own client, root over the socket; its statements
    // are bounded, as every wait of dbsweep's is.
    let admin_url = format!("mysql://root@localhost/?socket={}", url_component(&socket));
    let bound = std::time::Duration::from_secs(10);
    let own = crate::db::Timeouts {
        connect: bound,
        query: Some(bound),
    };
    let admin = crate::db::mysql::MysqlTarget::from_url(&admin_url, true, own)?;
    s.wait_ready(|_| {
        admin
            .connect_bounded(bound)
            .map(drop)
            .map_err(|e| e.to_string())
    })?;
    let mut conn = admin
        .connect_bounded(bound)
        .map_err(|e| Error::Run(format!("connecting to the managed server: {e}")))?;
    for sql in [
        format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"),
        format!("CREATE USER IF NOT EXISTS '{USER}'@'%'"),
        format!("CREATE USER IF NOT EXISTS '{USER}'@'localhost'"),
        format!("GRANT ALL ON *.* TO '{USER}'@'%'"),
        format!("GRANT ALL ON *.* TO '{USER}'@'localhost'"),
    ] {
        conn.batch(&sql)
            .map_err(|e| Error::Run(format!("managed server: {sql}: {e}")))?;
    }
    s.check_settings(|name, requested| {
        let variable = super::effective::mysql_variable(name);
        if variable == "performance_schema_instrument" {
            return instruments_read_back(conn.as_mut(), requested);
        }
        let (variable, requested) = match super::effective::mysql_shown_in(&variable, requested) {
            Some((shown, expected)) => (shown.to_string(), expected),
            None => (variable, requested),
        };
        // Setting names are letters, digits, `_`, `-` and `.` (parse_setting): nothing to
        // escape; `_` matches any character in LIKE, so the exact name is picked below.
        let rows = conn
            .query_rows(&format!("SHOW GLOBAL VARIABLES LIKE '{variable}'"), 2)
            .map_err(|e| e.to_string())?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let mut r = r.into_iter().map(Option::unwrap_or_default);
                (r.next().unwrap_or_default(), r.next().unwrap_or_default())
            })
            .find(|(n, _)| n.eq_ignore_ascii_case(&variable))
            .map(|(_, v)| {
                let same = super::effective::mysql_same(requested, &v);
                (v, same)
            }))
    })?;
    s.url = if s.socket {
        let socket = url_component(&s.dir.join("mysqld.sock"));
        format!("mysql://{USER}@localhost/{DATABASE}?socket={socket}")
    } else if let Some(ca) = tls {
        format!(
            "mysql://{USER}@127.0.0.1:{}/{DATABASE}?ssl-mode=VERIFY_CA&ssl-ca={}",
            s.port,
            url_component(&ca)
        )
    } else {
        format!("mysql://{USER}@127.0.0.1:{}/{DATABASE}", s.port)
    };
    Ok(())
}

/// `performance_schema_instrument` is a start-up option, not a variable: what it did is read
/// back from performance_schema.setup_instruments (how many of the pattern's instruments are
/// enabled). None when the request is not `PATTERN=ON|OFF` of plain characters.
fn instruments_read_back(
    conn: &mut dyn crate::db::Conn,
    requested: &str,
) -> Result<Option<(String, bool)>, String> {
    let request = requested.trim_matches(|c| c == '\'' || c == '"');
    let Some((pattern, value)) = request.rsplit_once('=') else {
        return Ok(None);
    };
    let on = match value.to_ascii_uppercase().as_str() {
        "ON" | "YES" | "TRUE" | "1" | "COUNTED" => true,
        "OFF" | "NO" | "FALSE" | "0" => false,
        _ => return Ok(None),
    };
    // Only instrument-name characters reach the query.
    if pattern.is_empty()
        || !pattern
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/_%-".contains(c))
    {
        return Ok(None);
    }
    let sql = format!(
        "SELECT COUNT(*), CAST(COALESCE(SUM(ENABLED = 'YES'), 0) AS UNSIGNED) \
         FROM performance_schema.setup_instruments WHERE NAME LIKE '{pattern}'"
    );
    let number = |v: &Option<String>| v.as_deref().and_then(|v| v.parse::<u64>().ok());
    let row = conn
        .query_rows(&sql, 2)
        .map_err(|e| e.to_string())?
        .into_iter()
        .next()
        .and_then(|r| Some((number(&r[0])?, number(&r[1])?)));
    Ok(row.map(|(total, enabled)| {
        let applied = total > 0 && if on { enabled == total } else { enabled == 0 };
        (
            format!("{enabled} of {total} instruments {pattern} enabled"),
            applied,
        )
    }))
}
