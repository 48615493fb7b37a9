//! Certificates for a managed server with TLS on: a CA made for the run and a server
//! certificate it signs, for `localhost` and 127.0.0.1, and a client certificate, written into
//! the server's directory.
//! Clients verify against the CA (`verify-ca`, and `verify-full` holds too). Made with rcgen:
//! no openssl binary needed.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use crate::error::Error;

/// Where a server's TLS files are.
pub struct Files {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Writes `ca.pem`, `server.crt` and `server.key` (mode 0600) into `dir`, and a client
/// certificate the same CA signs (`client.crt`, `client.key`), for clients that present one
/// (sysbench's `--mysql-ssl=on` always does), named `client_user`.
pub fn write(dir: &Path, client_user: &str) -> Result<Files, Error> {
    let bad = |e: rcgen::Error| Error::Run(format!("making the server's TLS certificate: {e}"));
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(bad)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "dbsweep managed server CA");
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().map_err(bad)?).map_err(bad)?;
    let mut params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .map_err(bad)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    let key = KeyPair::generate().map_err(bad)?;
    let cert = params.signed_by(&key, &ca).map_err(bad)?;
    let files = Files {
        ca: dir.join("ca.pem"),
        cert: dir.join("server.crt"),
        key: dir.join("server.key"),
    };
    // Servers refuse a key file others may read; no file is written through a link.
    let put = |path: &Path, text: String| {
        let private = path.extension().is_some_and(|e| e == "key");
        super::setup::write_file(path, text.as_bytes(), if private { 0o600 } else { 0o644 })
    };
    let mut client = CertificateParams::new(Vec::<String>::new()).map_err(bad)?;
    client
        .distinguished_name
        .push(DnType::CommonName, client_user);
    let client_key = KeyPair::generate().map_err(bad)?;
    let client = client.signed_by(&client_key, &ca).map_err(bad)?;
    put(&files.ca, ca.pem())?;
    put(&files.cert, cert.pem())?;
    put(&files.key, key.serialize_pem())?;
    put(&dir.join("client.crt"), client.pem())?;
    put(&dir.join("client.key"), client_key.serialize_pem())?;
    Ok(files)
}
