//! TLS (issue 20): every mode connects or fails as libpq would, against real managed servers
//! with TLS on (and required), and against a small in-test server whose certificate names
//! another host.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;

use dbsweep::server::{ManagedServer, ServerKind};

use crate::util::{Scratch, dbsweep, read_json, start, start_tls, u};

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

#[test]
fn postgres_tls_modes_connect_or_fail_as_libpq_would() {
    let server = start_tls(ServerKind::Postgres);
    let s = Scratch::new();
    let ca = ca_of(&server);
    // The managed server's own URL: verify-ca against its CA; load and run over TLS.
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--table-size",
            "100",
            "--target",
        ])
        .arg(&server.url)
        .assert()
        .success();
    for query in [
        String::new() + "sslmode=prefer",
        "sslmode=require".into(),
        format!("sslmode=verify-ca&sslrootcert={ca}"),
        format!("sslmode=verify-full&sslrootcert={ca}"),
    ] {
        let out = point_select(&s, &with_query(&server, &query));
        assert!(out.status.success(), "{query}: {}", stderr(&out));
        let r = read_json(&s.path("r.json"));
        assert_eq!(u(&r, "/events"), 50, "{query}");
        let tls = r["target"]["tls"].as_str().unwrap_or_default();
        assert!(tls.starts_with("TLSv1_"), "{query}: {tls}");
    }
    // verify-full by the name `localhost`, which the certificate holds too.
    let by_name = with_query(&server, &format!("sslmode=verify-full&sslrootcert={ca}"))
        .replace("127.0.0.1", "localhost");
    let out = point_select(&s, &by_name);
    assert!(out.status.success(), "{}", stderr(&out));
    // A plain connection to a server that requires TLS: the server's own refusal.
    let out = point_select(&s, &with_query(&server, "sslmode=disable"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no encryption"), "{}", stderr(&out));
    // Another CA, and the platform's CAs, do not vouch for the run's certificate.
    let (other_ca, _, _) = certificate(&["localhost"]);
    let other = s.path("other-ca.pem");
    std::fs::write(&other, other_ca).unwrap();
    for query in [
        format!("sslmode=verify-ca&sslrootcert={}", other.display()),
        "sslmode=verify-full".to_string(),
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
            "sslmode=maybe",
            "sslmode=maybe: use disable, prefer, require, verify-ca, verify-full",
        ),
        (
            "sslmode=verify-ca&sslrootcert=/no/such/ca.pem",
            "/no/such/ca.pem: no such file",
        ),
        (
            "sslmode=require&sslcert=/etc/hostname",
            "sslcert and sslkey go together",
        ),
    ] {
        let out = point_select(&s, &with_query(&server, query));
        assert_eq!(out.status.code(), Some(2), "{query}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{query}: {}", stderr(&out));
    }
}

#[test]
fn postgres_without_tls_goes_plain_on_prefer_and_refuses_require() {
    let server = start(ServerKind::Postgres);
    let s = Scratch::new();
    dbsweep()
        .args([
            "prepare",
            "oltp_point_select",
            "--table-size",
            "100",
            "--target",
        ])
        .arg(&server.url)
        .assert()
        .success();
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
    let sysbench = |command: &str| {
        let out = std::process::Command::new("sysbench")
            .arg("oltp_read_only")
            .args(&conn)
            .args(opts)
            .arg(command)
            .env("PGSSLMODE", "require")
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
    let s = Scratch::new();
    let out = s.path("lua.json");
    let ours = dbsweep()
        .args(["run", "oltp_read_only.lua", "--report-interval=0"])
        .args(&conn)
        .args(opts)
        .arg(format!("--output={}", out.display()))
        .env("PGSSLMODE", "require")
        .assert()
        .success();
    let ours = String::from_utf8_lossy(&ours.get_output().stdout).to_string();
    for name in ["read:", "other:", "total:", "transactions:"] {
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
