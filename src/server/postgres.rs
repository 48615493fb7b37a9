//! A managed PostgreSQL server: initdb, then `postgres -D` with dbsweep's settings in an
//! included configuration file, as the unprivileged `postgres` user when dbsweep runs as root.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use std::os::unix::process::CommandExt;

use super::instance::ManagedServer;
use super::setup::{
    check_reachable, chown_tree, find_binary, free_port, run_setup, server_user, unprivileged_user,
    url_component, version_of, write_file,
};
use crate::error::Error;

/// The user and database that managed servers create (sysbench's defaults).
pub const USER: &str = "sbtest";
pub const DATABASE: &str = "sbtest";

/// The server binary's version line.
pub(super) fn version() -> Result<String, Error> {
    Ok(version_of(&bindir()?.join("postgres")))
}

/// The directory with initdb and postgres: the newest Debian cluster version, else PATH.
fn bindir() -> Result<PathBuf, Error> {
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, p): &(u32, PathBuf)| {
            p.join("postgres").is_file() && p.join("initdb").is_file()
        })
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.pop() {
        return Ok(dir);
    }
    let initdb = find_binary(&["initdb"], &[]);
    match initdb.and_then(|p| p.parent().map(PathBuf::from)).filter(|d| d.join("postgres").is_file()) {
        Some(dir) => Ok(dir),
        None => Err(Error::Usage(
            "--server postgres: the PostgreSQL server binaries (initdb, postgres) are not installed; \
             install the Debian package postgresql (apt-get install postgresql)"
                .into(),
        )),
    }
}

/// The directory of the server's binaries: its build's, or the system's newest.
fn bindir_of(s: &ManagedServer) -> Result<PathBuf, Error> {
    match &s.build {
        Some(b) => Ok(b
            .server
            .parent()
            .map_or_else(|| b.basedir.join("bin"), PathBuf::from)),
        None => bindir(),
    }
}

pub(super) fn start(s: &mut ManagedServer) -> Result<(), Error> {
    let bin = bindir_of(s)?;
    let user = server_user(s.kind);
    s.runs_as = unprivileged_user(user)?;
    s.version = match &s.build {
        Some(b) => b.line.clone(),
        None => version_of(&bin.join("postgres")),
    };
    check_reachable(&s.dir, s.runs_as, user)?;
    chown_tree(&s.dir, s.runs_as)?;
    let data = s.dir.join("data");
    if !data.join("PG_VERSION").exists() {
        let mut initdb = Command::new(bin.join("initdb"));
        if let Some(b) = &s.build {
            b.prepare(&mut initdb);
        }
        initdb
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .current_dir(&s.dir);
        if let Some((uid, gid)) = s.runs_as {
            initdb.uid(uid).gid(gid);
        }
        run_setup(&mut initdb, "initdb")?;
        let conf = data.join("postgresql.conf");
        let mut text = fs::read_to_string(&conf)
            .map_err(|e| Error::Run(format!("{}: {e}", conf.display())))?;
        text.push_str("\n# Written by dbsweep at every start: port, sockets and --server-set settings.\ninclude_if_exists = 'dbsweep.conf'\n");
        write_file(&conf, text.as_bytes(), 0o600)?;
    }
    launch(s)
}

/// Writes the server's dbsweep.conf (loopback, its socket directory, TLS when asked, the
/// settings) and, under TLS, a pg_hba.conf that requires it; the CA's file under TLS.
fn write_conf(
    s: &ManagedServer,
    data: &std::path::Path,
) -> Result<Option<std::path::PathBuf>, Error> {
    let quote = |v: &str| format!("'{}'", v.replace('\'', "''"));
    let mut conf = format!(
        "listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = {}\n",
        s.port,
        quote(&s.dir.to_string_lossy())
    );
    let tls = if s.tls {
        let files = super::certs::write(&s.dir, USER)?;
        for f in [&files.ca, &files.cert, &files.key] {
            chown_tree(f, s.runs_as)?;
        }
        conf.push_str(&format!(
            "ssl = on\nssl_cert_file = {}\nssl_key_file = {}\n",
            quote(&files.cert.to_string_lossy()),
            quote(&files.key.to_string_lossy())
        ));
        // Every TCP connection must use TLS (a plain one is refused by pg_hba.conf), unless
        // the spec lets plain ones in too.
        let hba = data.join("pg_hba.conf");
        let kind = if s.tls_required { "hostssl" } else { "host" };
        let rules = format!(
            "local all all trust\n{kind} all all 127.0.0.1/32 trust\n{kind} all all ::1/128 trust\n"
        );
        write_file(&hba, rules.as_bytes(), 0o600)?;
        chown_tree(&hba, s.runs_as)?;
        Some(files.ca)
    } else {
        None
    };
    for (name, value) in &s.settings {
        conf.push_str(&format!("{name} = {}\n", quote(value)));
    }
    let path = data.join("dbsweep.conf");
    write_file(&path, conf.as_bytes(), 0o600)?;
    chown_tree(&path, s.runs_as)?;
    Ok(tls)
}

/// Writes dbsweep.conf, starts the postmaster and waits until database `sbtest` accepts
/// connections (creating it on a fresh cluster).
pub(super) fn launch(s: &mut ManagedServer) -> Result<(), Error> {
    let bin = bindir_of(s)?;
    let data = s.dir.join("data");
    if s.port == 0 {
        s.port = free_port()?;
    }
    let tls = write_conf(s, &data)?;
    s.spawn(
        &bin.join("postgres"),
        &["-D".into(), data.to_string_lossy().into_owned()],
    )?;
    // The admin connection goes over the Unix socket: it needs no TLS. It is dbsweep's own
    // client, and every statement of it is bounded (the server is fresh and local: ten seconds
    // are plenty), so that no wait of dbsweep's is unbounded.
    let admin_url = format!(
        "postgres://{USER}@{}:{}/postgres",
        url_component(&s.dir),
        s.port
    );
    let bound = std::time::Duration::from_secs(10);
    let own = crate::db::Timeouts {
        connect: bound,
        query: Some(bound),
    };
    let admin = crate::db::postgres::PostgresTarget::from_url(&admin_url, true, false, own)?;
    s.wait_ready(|_| {
        admin
            .connect_bounded(bound)
            .map(drop)
            .map_err(|e| e.to_string())
    })?;
    let mut client = admin
        .connect_bounded(bound)
        .map_err(|e| Error::Run(format!("connecting to the managed server: {e}")))?;
    let exists = client
        .query_text(&format!(
            "SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"
        ))
        .map_err(|e| Error::Run(format!("managed server: {e}")))?
        .is_some();
    if !exists {
        client
            .batch(&format!("CREATE DATABASE {DATABASE}"))
            .map_err(|e| Error::Run(format!("managed server: creating database: {e}")))?;
    }
    s.check_settings(|name, requested| {
        // Setting names are letters, digits, `_`, `-` and `.` (parse_setting); quoted anyway.
        let name = name.to_ascii_lowercase().replace('\'', "''");
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        let row = client
            .query_rows(
                &format!(
                    "SELECT setting, coalesce(unit, ''), vartype, source FROM pg_settings \
                     WHERE name = '{name}'"
                ),
                4,
            )
            .map_err(|e| e.to_string())?
            .into_iter()
            .next();
        // A setting this connection set for itself (the client library's client_encoding,
        // say) shows the session's value: the server's is the one its configuration file
        // applied.
        if let Some(r) = &row
            && matches!(text(&r[3]).as_str(), "client" | "session")
        {
            let file = client
                .query_text(&format!(
                    "SELECT setting FROM pg_file_settings WHERE name = '{name}' AND applied \
                     ORDER BY seqno DESC LIMIT 1"
                ))
                .map_err(|e| e.to_string())?;
            if let Some(value) = file {
                let same = value.trim_matches('\'') == requested.trim_matches('\'');
                return Ok(Some((value, same)));
            }
        }
        Ok(row.map(|r| {
            let (setting, unit, vartype) = (text(&r[0]), text(&r[1]), text(&r[2]));
            let same = super::effective::pg_same(requested, &setting, &unit, &vartype);
            let shown = if unit.is_empty() {
                setting
            } else {
                format!("{setting} {unit}")
            };
            (shown, same)
        }))
    })?;
    s.url = if s.socket {
        // The socket directory as host; the port names the socket file in it.
        let dir = url_component(&s.dir);
        format!("postgres://{USER}@{dir}:{}/{DATABASE}", s.port)
    } else if let Some(ca) = tls {
        format!(
            "postgres://{USER}@127.0.0.1:{}/{DATABASE}?sslmode=verify-ca&sslrootcert={}",
            s.port,
            url_component(&ca)
        )
    } else {
        format!("postgres://{USER}@127.0.0.1:{}/{DATABASE}", s.port)
    };
    Ok(())
}
