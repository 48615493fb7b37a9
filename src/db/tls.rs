//! TLS for dbsweep's own protocol clients, with rustls (ring as its crypto, no OpenSSL): the
//! modes as libpq spells them (`disable`, `prefer`, `require`, `verify-ca`, `verify-full`) and
//! the certificate files a URL names. A configuration is built once per target and shared by
//! its connections; the bytes go through [`super::socket::Socket`], which keeps its tick,
//! deadline and buffer rules over TLS.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// How much TLS a connection asks for, and how much of the server's certificate it checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// Plain (dbsweep's default, as sysbench's: a benchmark measures what it is told to).
    Disable,
    /// TLS when the server offers it, plain otherwise.
    Prefer,
    /// TLS or nothing; the certificate is checked against `sslrootcert` when one is given
    /// (as libpq does), not at all otherwise.
    Require,
    /// TLS with a certificate signed by the given (or the platform's) CA; any host name.
    VerifyCa,
    /// As VerifyCa, and the certificate names the host connected to.
    VerifyFull,
}

impl Mode {
    /// libpq's spelling (`sslmode=`), or the MySQL client's (`ssl-mode=`), any case.
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "disable" | "disabled" => Mode::Disable,
            "prefer" | "preferred" | "allow" => Mode::Prefer,
            "require" | "required" => Mode::Require,
            "verify_ca" => Mode::VerifyCa,
            "verify_full" | "verify_identity" => Mode::VerifyFull,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }
}

/// What a URL asks of TLS.
#[derive(Clone, Debug, PartialEq)]
pub struct TlsOptions {
    pub mode: Mode,
    /// The CA certificates (PEM) the server's certificate must chain to; None: the platform's.
    pub root_cert: Option<PathBuf>,
    /// A client certificate and its key (PEM), for servers that ask for one.
    pub client_cert: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
}

impl Default for TlsOptions {
    fn default() -> TlsOptions {
        TlsOptions {
            mode: Mode::Disable,
            root_cert: None,
            client_cert: None,
            client_key: None,
        }
    }
}

/// A target's TLS: its mode and the configuration its connections share.
#[derive(Clone)]
pub struct Tls {
    pub mode: Mode,
    pub config: Arc<ClientConfig>,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = crate::input::read(path, crate::input::SMALL)
        .map_err(|e| format!("{what} {}: {e}", path.display()))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{what} {}: not PEM certificates: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{what} {}: no certificate in it", path.display()));
    }
    Ok(certs)
}

impl Tls {
    /// The configuration of `opts`; None for `disable`. Errors name the option and the file.
    pub fn new(opts: &TlsOptions) -> Result<Option<Tls>, String> {
        if opts.mode == Mode::Disable {
            return Ok(None);
        }
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?;
        let verify = match opts.mode {
            Mode::Prefer | Mode::Require if opts.root_cert.is_none() => None,
            _ => {
                let mut roots = RootCertStore::empty();
                match &opts.root_cert {
                    Some(path) => {
                        for c in read_certs(path, "sslrootcert")? {
                            roots
                                .add(c)
                                .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
                        }
                    }
                    None => {
                        let found = rustls_native_certs::load_native_certs();
                        for c in found.certs {
                            let _ = roots.add(c);
                        }
                        if roots.is_empty() {
                            return Err(
                                "TLS: the platform has no CA certificates to verify the server with; give the CA with sslrootcert=FILE"
                                    .into(),
                            );
                        }
                    }
                }
                Some(
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| format!("TLS: {e}"))?,
                )
            }
        };
        let verifier: Arc<dyn ServerCertVerifier> = Arc::new(Verifier {
            inner: verify,
            check_name: opts.mode == Mode::VerifyFull,
            provider,
        });
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match (&opts.client_cert, &opts.client_key) {
            (Some(cert), Some(key)) => {
                let certs = read_certs(cert, "sslcert")?;
                let bytes = crate::input::read(key, crate::input::SMALL)
                    .map_err(|e| format!("sslkey {}: {e}", key.display()))?;
                let key = PrivateKeyDer::from_pem_slice(&bytes)
                    .map_err(|e| format!("sslkey {}: not a PEM private key: {e}", key.display()))?;
                builder
                    .with_client_auth_cert(certs, key)
                    .map_err(|e| format!("sslcert/sslkey: {e}"))?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => return Err("sslcert and sslkey go together: give both or neither".into()),
        };
        Ok(Some(Tls {
            mode: opts.mode,
            config: Arc::new(config),
        }))
    }
}

/// The server name TLS checks (and sends as SNI): a host name or an IP address.
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string()).map_err(|_| format!("TLS: '{host}' is not a host name"))
}

/// Checks a server's certificate as the mode asks: not at all (`require` without a CA file),
/// its chain only (`verify-ca`), or its chain and name (`verify-full`). The handshake's
/// signatures are always checked, so the server holds the certificate's key.
#[derive(Debug)]
struct Verifier {
    inner: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(inner) = &self.inner else {
            return Ok(ServerCertVerified::assertion());
        };
        match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A TLS failure in words that say what to change: an unknown CA, a name the certificate does
/// not hold, an expired certificate.
pub fn describe(e: &rustls::Error, mode: Mode) -> String {
    match e {
        rustls::Error::InvalidCertificate(c) => {
            let why = match c {
                CertificateError::UnknownIssuer => {
                    "it is not signed by a CA dbsweep trusts: give the server's CA with sslrootcert=FILE (ssl-ca=FILE)".to_string()
                }
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                    "it does not name the host connected to: connect by a name it holds, or use verify-ca".to_string()
                }
                CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                    "it has expired".to_string()
                }
                other => format!("{other:?}"),
            };
            format!(
                "TLS ({}): the server's certificate does not verify: {why}",
                mode.name()
            )
        }
        other => format!("TLS ({}): {other}", mode.name()),
    }
}

/// The negotiated protocol and cipher suite, as results record them (`TLSv1_3 TLS13_AES_256_GCM_SHA384`).
pub fn negotiated(conn: &rustls::ClientConnection) -> Option<String> {
    let version = conn.protocol_version()?;
    let suite = conn.negotiated_cipher_suite()?;
    Some(format!("{version:?} {:?}", suite.suite()))
}

/// Takes the query parameters called `names` (any of `-`/`_` spellings) out of `url`: the URL
/// without them, and their decoded values. The URL parsers of the `postgres` and `mysql` crates
/// do not know the TLS file parameters; dbsweep reads those itself.
pub fn take_params(url: &str, names: &[&str]) -> (String, Vec<(String, String)>) {
    let Some((main, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if names.iter().any(|n| norm(n) == norm(k)) {
            let v = percent_encoding::percent_decode_str(v)
                .decode_utf8_lossy()
                .into_owned();
            taken.push((norm(k), v));
        } else {
            kept.push(pair);
        }
    }
    let url = if kept.is_empty() {
        main.to_string()
    } else {
        format!("{main}?{}", kept.join("&"))
    };
    (url, taken)
}

/// The TLS options of a URL's taken parameters: the mode parameter `mode_key`, and the CA,
/// certificate and key parameters, each a (parameter, field) pair.
pub fn options_of(
    params: &[(String, String)],
    mode_key: &str,
    files: [&str; 3],
) -> Result<TlsOptions, String> {
    let mut o = TlsOptions::default();
    for (k, v) in params {
        if *k == mode_key {
            o.mode = Mode::parse(v).ok_or_else(|| {
                format!("{mode_key}={v}: use disable, prefer, require, verify-ca or verify-full")
            })?;
        } else if *k == files[0] {
            o.root_cert = Some(PathBuf::from(v));
        } else if *k == files[1] {
            o.client_cert = Some(PathBuf::from(v));
        } else if *k == files[2] {
            o.client_key = Some(PathBuf::from(v));
        }
    }
    for p in [&o.root_cert, &o.client_cert, &o.client_key]
        .into_iter()
        .flatten()
    {
        if !p.is_file() {
            return Err(format!("{}: no such file", p.display()));
        }
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_libpq_and_mysql_spellings() {
        assert_eq!(Mode::parse("verify-full"), Some(Mode::VerifyFull));
        assert_eq!(Mode::parse("VERIFY_IDENTITY"), Some(Mode::VerifyFull));
        assert_eq!(Mode::parse("REQUIRED"), Some(Mode::Require));
        assert_eq!(Mode::parse("Preferred"), Some(Mode::Prefer));
        assert_eq!(Mode::parse("DISABLED"), Some(Mode::Disable));
        assert_eq!(Mode::parse("maybe"), None);
    }

    #[test]
    fn tls_parameters_leave_the_url() {
        let (url, taken) = take_params(
            "postgres://u@h/db?sslmode=verify-full&application_name=x&sslrootcert=%2Ftmp%2Fca.pem",
            &["sslmode", "sslrootcert"],
        );
        assert_eq!(url, "postgres://u@h/db?application_name=x");
        assert_eq!(
            taken,
            [
                ("sslmode".to_string(), "verify-full".to_string()),
                ("sslrootcert".to_string(), "/tmp/ca.pem".to_string())
            ]
        );
        let (url, _) = take_params("postgres://u@h/db?sslmode=require", &["sslmode"]);
        assert_eq!(url, "postgres://u@h/db");
    }
}
