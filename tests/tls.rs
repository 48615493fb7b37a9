//! TLS (issue 20): every mode connects or fails as libpq would, against real managed servers
//! with TLS on (and required), and against a small in-test server whose certificate names
//! another host.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use dbsweep::server::{ManagedServer, ServerKind};

use crate::util::{Scratch, dbsweep, read_json, root_of, start, start_tls, u};

/// The managed server's URL with its query replaced by `query`.
fn with_query(server: &ManagedServer, query: &str) -> String {
    let base = server.url.split('?').next().unwrap();
    if query.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{query}")
    }
}

fn ca_of(server: &ManagedServer) -> String {
    server.dir.join("ca.pem").display().to_string()
}

/// `dbsweep run oltp_point_select` for 50 events on `url`; its output.
fn point_select(s: &Scratch, url: &str) -> std::process::Output {
    dbsweep()
        .current_dir(s.path(""))
        .args([
            "run",
            "oltp_point_select",
            "--table-size",
            "100",
            "--events",
            "50",
            "--time",
            "0",
            "--report-interval",
            "0",
            "--target",
            url,
            "--output",
        ])
        .arg(s.path("r.json"))
        .output()
        .unwrap()
}

/// `dbsweep prepare oltp_point_select` of 100 rows on `url`, which must succeed.
fn prepare(url: impl AsRef<std::ffi::OsStr>) {
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--table-size",
            "100",
            "--target",
        ])
        .arg(url)
        .assert()
        .success();
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A CA and a certificate it signs for `names`, as PEM: (ca, cert, key).
fn certificate(names: &[&str]) -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

/// The URL parameters of each kind: its mode parameter and values, and its CA parameter.
struct Vocabulary {
    mode: &'static str,
    /// disable, prefer, require, verify-ca, verify-full as this kind spells them.
    modes: [&'static str; 5],
    ca: &'static str,
    /// What the server says to a plain connection when it requires TLS.
    refusal: &'static str,
}

const PG: Vocabulary = Vocabulary {
    mode: "sslmode",
    modes: ["disable", "prefer", "require", "verify-ca", "verify-full"],
    ca: "sslrootcert",
    refusal: "no encryption",
};

const MY: Vocabulary = Vocabulary {
    mode: "ssl-mode",
    modes: [
        "DISABLED",
        "PREFERRED",
        "REQUIRED",
        "VERIFY_CA",
        "VERIFY_IDENTITY",
    ],
    ca: "ssl-ca",
    // MariaDB 10.11 answers a plain login under require_secure_transport so.
    refusal: "Access denied",
};

/// MySQL's words are MariaDB's, but for its refusal of a plain login.
const ORACLE_MY: Vocabulary = Vocabulary {
    refusal: "insecure transport are prohibited",
    ..MY
};

/// Every mode against a managed server that requires TLS: connects or fails as libpq and the
/// mysql client would, with one-line errors that say what to change.
fn tls_modes_connect_or_fail_as_their_clients_would(kind: ServerKind, v: &Vocabulary) {
    let server = start_tls(kind);
    let s = Scratch::new();
    let ca = ca_of(&server);
    let [disable, prefer, require, verify_ca, verify_full] = v.modes;
    // The managed server's own URL: verify-ca against its CA; load and run over TLS.
    prepare(&server.url);
    for query in [
        format!("{}={prefer}", v.mode),
        format!("{}={require}", v.mode),
        format!("{}={verify_ca}&{}={ca}", v.mode, v.ca),
        format!("{}={verify_full}&{}={ca}", v.mode, v.ca),
    ] {
        let out = point_select(&s, &with_query(&server, &query));
        assert!(out.status.success(), "{query}: {}", stderr(&out));
        let r = read_json(&s.path("r.json"));
        assert_eq!(u(&r, "/events"), 50, "{query}");
        let tls = r["target"]["tls"].as_str().unwrap_or_default();
        assert!(tls.starts_with("TLSv1_"), "{query}: {tls}");
    }
    // verify-full by the name `localhost`, which the certificate holds too.
    let by_name = with_query(&server, &format!("{}={verify_full}&{}={ca}", v.mode, v.ca))
        .replace("127.0.0.1", "localhost");
    let out = point_select(&s, &by_name);
    assert!(out.status.success(), "{}", stderr(&out));
    // A plain connection to a server that requires TLS: the server's own refusal.
    let out = point_select(&s, &with_query(&server, &format!("{}={disable}", v.mode)));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(v.refusal), "{}", stderr(&out));
    // Another CA, and the platform's CAs, do not vouch for the run's certificate.
    let (other_ca, _, _) = certificate(&["localhost"]);
    let other = s.path("other-ca.pem");
    std::fs::write(&other, other_ca).unwrap();
    for query in [
        format!("{}={verify_ca}&{}={}", v.mode, v.ca, other.display()),
        format!("{}={verify_full}", v.mode),
    ] {
        let out = point_select(&s, &with_query(&server, &query));
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{query}: {e}");
        assert!(
            e.contains("certificate does not verify") && e.contains("sslrootcert"),
            "{query}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // Bad option values are usage errors.
    for (query, says) in [
        (
            format!("{}=maybe", v.mode),
            format!("{}=maybe: use", v.mode),
        ),
        (
            format!("{}={verify_ca}&{}=/no/such/ca.pem", v.mode, v.ca),
            "/no/such/ca.pem: no such file".to_string(),
        ),
    ] {
        let out = point_select(&s, &with_query(&server, &query));
        assert_eq!(out.status.code(), Some(2), "{query}: {}", stderr(&out));
        assert!(stderr(&out).contains(&says), "{query}: {}", stderr(&out));
    }
}

#[test]
fn postgres_tls_modes_connect_or_fail_as_libpq_would() {
    tls_modes_connect_or_fail_as_their_clients_would(ServerKind::Postgres, &PG);
    let server = start_tls(ServerKind::Postgres);
    let s = Scratch::new();
    let out = point_select(
        &s,
        &with_query(&server, "sslmode=require&sslcert=/etc/hostname"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("sslcert and sslkey go together"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn mariadb_tls_modes_connect_or_fail_as_the_mysql_client_would() {
    tls_modes_connect_or_fail_as_their_clients_would(ServerKind::Mariadb, &MY);
}

#[test]
fn mysql_tls_modes_connect_or_fail_as_the_mysql_client_would() {
    tls_modes_connect_or_fail_as_their_clients_would(ServerKind::Mysql, &ORACLE_MY);
}

#[test]
fn postgres_without_tls_goes_plain_on_prefer_and_refuses_require() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    prepare(&server.url);
    let out = point_select(&s, &with_query(&server, "sslmode=prefer"));
    assert!(out.status.success(), "{}", stderr(&out));
    let r = read_json(&s.path("r.json"));
    assert!(r["target"].get("tls").is_none(), "{}", r["target"]);
    let out = point_select(&s, &with_query(&server, "sslmode=require"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the server does not accept TLS connections"),
        "{}",
        stderr(&out)
    );
}

/// A PostgreSQL-speaking server of one connection: it agrees to TLS and shows a certificate
/// for another host, signed by a CA the client is given.
#[test]
fn verify_full_refuses_a_certificate_for_another_host() {
    let (ca, cert, key) = certificate(&["db.other.example"]);
    let s = Scratch::new();
    let ca_path = s.path("ca.pem");
    std::fs::write(&ca_path, ca).unwrap();
    let certs: Vec<rustls::pki_types::CertificateDer<'static>> =
        rustls::pki_types::pem::PemObject::pem_slice_iter(cert.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
    let key: rustls::pki_types::PrivateKeyDer<'static> =
        rustls::pki_types::pem::PemObject::from_pem_slice(key.as_bytes()).unwrap();
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut tcp, _) = listener.accept().unwrap();
        let mut request = [0u8; 8];
        tcp.read_exact(&mut request).unwrap();
        assert_eq!(request, [0, 0, 0, 8, 4, 210, 22, 47], "an SSLRequest");
        tcp.write_all(b"S").unwrap();
        let mut conn = rustls::ServerConnection::new(config).unwrap();
        // The client gives up on the certificate: the handshake ends with its alert.
        while conn.is_handshaking() {
            if conn.complete_io(&mut tcp).is_err() {
                break;
            }
        }
    });
    let url = format!(
        "postgres://sbtest@127.0.0.1:{port}/sbtest?sslmode=verify-full&sslrootcert={}",
        ca_path.display()
    );
    let out = point_select(&s, &url);
    server.join().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("does not name the host connected to"), "{e}");
}

/// sysbench 1.0.20 (libpq, PGSSLMODE=require) and dbsweep with the same command line run a
/// script over TLS against a server that requires it, with the same counts; TPC-C loads, runs
/// and checks over TLS too.
#[test]
fn a_sysbench_script_and_tpcc_run_over_tls_as_sysbench_does() {
    let server = start_tls(ServerKind::Postgres);
    let conn = crate::util::sysbench_connection(ServerKind::Postgres, &server);
    let opts = [
        "--tables=1",
        "--table-size=500",
        "--events=300",
        "--time=0",
        "--threads=2",
    ];
    let s = Scratch::new();
    same_counts_over_tls(
        &s,
        "oltp_read_only",
        &conn,
        &opts,
        &[("PGSSLMODE", "require")],
        &["read:", "other:", "total:", "transactions:"],
    );
    // Without PGSSLMODE, the TLS-only server refuses a plain connection.
    dbsweep()
        .args(["run", "oltp_read_only.lua", "--report-interval=0"])
        .args(&conn)
        .args(opts)
        .env_remove("PGSSLMODE")
        .assert()
        .code(1);
    // TPC-C: load, run and the consistency checks over the managed server's TLS URL.
    let tpcc = |action: &str, extra: &[&str]| {
        dbsweep()
            .args(["tpcc", action, "--warehouses", "1", "--target"])
            .arg(&server.url)
            .args(extra)
            .assert()
            .success()
    };
    tpcc("prepare", &[]);
    let out = s.path("tpcc.json");
    tpcc(
        "run",
        &[
            "--events",
            "200",
            "--time",
            "0",
            "--report-interval",
            "0",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let r = read_json(&out);
    assert_eq!(u(&r, "/events"), 200);
    assert!(r["target"]["tls"].as_str().is_some(), "{}", r["target"]);
    tpcc("check", &["--after-run"]);
}

/// A plan compares plain and TLS connections to the same kind of managed server: a
/// configuration's `tls = true` starts its server with TLS on and connects with verify-ca.
#[test]
fn a_sweep_compares_plain_and_tls_configurations() {
    let s = Scratch::new();
    let plan = s.path("tls.toml");
    std::fs::write(
        &plan,
        "name = \"tls\"\nclients = [1]\ntable_size = 500\nread_time = 1\n\n\
         [[targets]]\nname = \"pg\"\nserver = \"postgres\"\n\n\
         [configs.plain]\n[configs.tls]\ntls = true\n\n\
         [[steps]]\nload = true\n\n\
         [[steps]]\nname = \"point\"\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    )
    .unwrap();
    let dry = dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--dry-run"])
        .assert()
        .success();
    let schedule = String::from_utf8_lossy(&dry.get_output().stdout).to_string();
    assert_eq!(
        schedule.matches("over TLS (verify-ca)").count(),
        1,
        "{schedule}"
    );
    let dir = s.path("out");
    dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--output"])
        .arg(&dir)
        .assert()
        .success();
    let target = |config: &str| {
        read_json(&dir.join(format!("steps/pg.{config}.c1/02-point.json")))["results"]["target"]
            .clone()
    };
    assert!(target("plain").get("tls").is_none(), "{}", target("plain"));
    let tls = target("tls");
    assert!(
        tls["tls"].as_str().is_some_and(|t| t.starts_with("TLSv1_")),
        "{tls}"
    );
    assert!(
        tls["url"].as_str().unwrap().contains("sslmode=verify-ca"),
        "{tls}"
    );
    // The report says which configuration ran over TLS, with what.
    let out = dbsweep()
        .args(["report", "--full"])
        .arg(&dir)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let at = text
        .find("Connections: each configuration's server and TLS")
        .unwrap_or_else(|| panic!("{text}"));
    let row = |config: &str| {
        text[at..]
            .lines()
            .find(|l| l.starts_with(config))
            .unwrap_or_else(|| panic!("no {config} row"))
            .to_string()
    };
    assert!(
        row("plain").trim_end().ends_with("plain"),
        "{}",
        row("plain")
    );
    assert!(
        row("tls ").contains(tls["tls"].as_str().unwrap()),
        "{}",
        row("tls ")
    );
    // A URL target says its TLS in its URL.
    std::fs::write(
        &plan,
        "clients = [1]\n[[targets]]\nurl = \"postgres://u@127.0.0.1/db\"\ntls = true\n\n\
         [[steps]]\nworkload = \"oltp_point_select\"\nclass = \"read\"\n",
    )
    .unwrap();
    dbsweep()
        .args(["sweep", plan.to_str().unwrap(), "--dry-run"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "tls = true is for a managed server",
        ));
}

/// sysbench 1.0.20 and dbsweep with `--mysql-ssl=on` against a MariaDB (or MySQL) that
/// requires TLS: the same counts, over TLS.
fn a_sysbench_script_runs_over_tls_as_sysbench_does(kind: ServerKind) {
    let server = start_tls(kind);
    let mut conn = crate::util::sysbench_connection(kind, &server);
    conn.push("--mysql-ssl=on".into());
    // sysbench 1.0.20's --mysql-ssl=on reads these three files of the current directory.
    let s = Scratch::new();
    for (from, to) in [
        ("ca.pem", "cacert.pem"),
        ("client.crt", "client-cert.pem"),
        ("client.key", "client-key.pem"),
    ] {
        std::fs::copy(server.dir.join(from), s.path(to)).unwrap();
    }
    // One thread: two would deadlock now and then, and retried events differ between runs.
    let opts = [
        "--tables=1",
        "--table-size=500",
        "--events=300",
        "--time=0",
        "--threads=1",
    ];
    let r = same_counts_over_tls(
        &s,
        "oltp_read_write",
        &conn,
        &opts,
        &[],
        &["read:", "write:", "other:", "transactions:"],
    );
    assert!(
        r["target"]["url"]
            .as_str()
            .unwrap()
            .contains("ssl-mode=REQUIRED")
    );
}

#[test]
fn a_sysbench_script_runs_over_tls_on_mariadb_as_sysbench_does() {
    a_sysbench_script_runs_over_tls_as_sysbench_does(ServerKind::Mariadb);
}

#[test]
fn a_sysbench_script_runs_over_tls_on_mysql_as_sysbench_does() {
    a_sysbench_script_runs_over_tls_as_sysbench_does(ServerKind::Mysql);
}

/// A user that must present a certificate (REQUIRE X509): refused without `ssl-cert`/`ssl-key`,
/// let in with the client certificate the run's CA signed.
fn a_client_certificate_is_presented_when_given(kind: ServerKind) {
    let server = start_tls(kind);
    let mut admin = root_of(&server);
    for host in ["%", "localhost"] {
        admin
            .batch(&format!("ALTER USER 'sbtest'@'{host}' REQUIRE X509"))
            .unwrap();
    }
    let s = Scratch::new();
    let out = point_select(&s, &server.url);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("Access denied"), "{}", stderr(&out));
    let url = format!(
        "{}&ssl-cert={}&ssl-key={}",
        server.url,
        server.dir.join("client.crt").display(),
        server.dir.join("client.key").display()
    );
    prepare(&url);
    let out = point_select(&s, &url);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(u(&read_json(&s.path("r.json")), "/events"), 50);
}

#[test]
fn a_client_certificate_is_presented_when_given_on_mariadb() {
    a_client_certificate_is_presented_when_given(ServerKind::Mariadb);
}

#[test]
fn a_client_certificate_is_presented_when_given_on_mysql() {
    a_client_certificate_is_presented_when_given(ServerKind::Mysql);
}

/// A password in a TLS URL is shown as *** in every output and file, in success and in a
/// certificate failure alike.
#[test]
fn passwords_in_tls_urls_never_appear() {
    let server = start_tls(ServerKind::Postgres);
    let s = Scratch::new();
    let secret = "Sekr1t-tls";
    let base = with_query(&server, "").replace("sbtest@", &format!("sbtest:{secret}@"));
    prepare(&server.url);
    let ok = point_select(&s, &format!("{base}?sslmode=require"));
    let (other_ca, _, _) = certificate(&["localhost"]);
    let other = s.path("other-ca.pem");
    std::fs::write(&other, other_ca).unwrap();
    let failed = point_select(
        &s,
        &format!("{base}?sslmode=verify-ca&sslrootcert={}", other.display()),
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(failed.status.code(), Some(1));
    for o in [&ok, &failed] {
        let all = String::from_utf8_lossy(&o.stdout).to_string() + &stderr(o);
        assert!(!all.contains(secret), "{all}");
    }
    let results = std::fs::read_to_string(s.path("r.json")).unwrap();
    assert!(
        !results.contains(secret) && results.contains("***"),
        "{results}"
    );
}

/// MariaDB's own ed25519 authentication, end to end: a user identified via ed25519 logs in
/// with its password (plain TCP: the plugin never sends the password), and a wrong one is
/// refused by the server.
#[test]
fn mariadb_ed25519_users_log_in() {
    let server = start(ServerKind::Mariadb);
    let mut admin = root_of(&server);
    admin.batch("INSTALL SONAME 'auth_ed25519'").unwrap();
    for host in ["%", "localhost"] {
        admin
            .batch(&format!(
                "CREATE USER 'ed'@'{host}' IDENTIFIED VIA ed25519 USING PASSWORD('Ed-pw-25519')"
            ))
            .unwrap();
        admin
            .batch(&format!("GRANT ALL ON *.* TO 'ed'@'{host}'"))
            .unwrap();
    }
    let url = |pw: &str| format!("mysql://ed:{pw}@127.0.0.1:{}/sbtest", server.port);
    let s = Scratch::new();
    prepare(url("Ed-pw-25519"));
    let out = point_select(&s, &url("Ed-pw-25519"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(u(&read_json(&s.path("r.json")), "/events"), 50);
    let out = point_select(&s, &url("wrong"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("Access denied"), "{}", stderr(&out));
}

/// MySQL's caching_sha2_password full authentication, the path MariaDB never takes: a user's
/// first login after the server's cache is emptied goes through it. Over plain TCP the client
/// asks for the server's RSA key (or is given it with `server-public-key`) and seals the
/// password with it; inside TLS it sends the password; a wrong one is refused by the server.
#[test]
fn mysql_full_authentication_works_plain_with_the_servers_key_and_inside_tls() {
    let server = start(ServerKind::Mysql);
    let mut admin = root_of(&server);
    admin
        .batch("CREATE USER 'full'@'%' IDENTIFIED WITH caching_sha2_password BY 'Full-pw-2'")
        .unwrap();
    admin.batch("GRANT ALL ON *.* TO 'full'@'%'").unwrap();
    let key = std::fs::read_dir(&server.dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .flat_map(|d| [d.join("public_key.pem"), d.join("data/public_key.pem")])
        .chain([server.dir.join("public_key.pem")])
        .find(|p| p.is_file())
        .expect("MySQL writes its RSA key pair into its data directory");
    let url = |pw: &str, q: &str| format!("mysql://full:{pw}@127.0.0.1:{}/sbtest?{q}", server.port);
    let s = Scratch::new();
    prepare(url("Full-pw-2", "ssl-mode=DISABLED"));
    for q in [
        "ssl-mode=DISABLED".to_string(),
        format!("ssl-mode=DISABLED&server-public-key={}", key.display()),
        "ssl-mode=REQUIRED".to_string(),
    ] {
        // An empty cache: the next login is a full authentication.
        admin.batch("FLUSH PRIVILEGES").unwrap();
        let out = point_select(&s, &url("Full-pw-2", &q));
        assert!(out.status.success(), "{q}: {}", stderr(&out));
        assert_eq!(u(&read_json(&s.path("r.json")), "/events"), 50, "{q}");
    }
    admin.batch("FLUSH PRIVILEGES").unwrap();
    let out = point_select(&s, &url("wrong", "ssl-mode=DISABLED"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("Access denied"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("wrong"), "{}", stderr(&out));
}

/// Prepares `workload` with sysbench 1.0.20 and runs it with sysbench and with dbsweep running
/// sysbench's own script, both with `conn` and `opts` (and `env`) in `s`'s directory: the
/// summaries' `counts` must agree, and dbsweep's run was over TLS. Returns its results.
fn same_counts_over_tls(
    s: &Scratch,
    workload: &str,
    conn: &[String],
    opts: &[&str],
    env: &[(&str, &str)],
    counts: &[&str],
) -> serde_json::Value {
    let sysbench = |command: &str| {
        let out = std::process::Command::new("sysbench")
            .current_dir(s.path(""))
            .arg(workload)
            .args(conn)
            .args(opts)
            .arg(command)
            .envs(env.iter().copied())
            .output()
            .expect("sysbench is installed (scripts/test installs it)");
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "sysbench {command}: {text}{}",
            stderr(&out)
        );
        text
    };
    sysbench("prepare");
    let theirs = sysbench("run");
    let count = |text: &str, name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    let out = s.path("lua.json");
    let ours = dbsweep()
        .current_dir(s.path(""))
        .args(["run", &format!("{workload}.lua"), "--report-interval=0"])
        .args(conn)
        .args(opts)
        .arg(format!("--output={}", out.display()))
        .envs(env.iter().copied())
        .assert()
        .success();
    let ours = String::from_utf8_lossy(&ours.get_output().stdout).to_string();
    for name in counts {
        assert_eq!(count(&ours, name), count(&theirs, name), "{name}\n{ours}");
    }
    let r = read_json(&out);
    assert!(
        r["target"]["tls"]
            .as_str()
            .is_some_and(|t| t.starts_with("TLSv1_")),
        "{}",
        r["target"]
    );
    r
}
