//! TLS to the database: sysbench's and the MySQL client's `--mysql-ssl*` settings, and the
//! rustls client configuration the lean client uses, built once per target on the agent
//! (the certificate files are read on the agent's host).

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// How much TLS a connection insists on (the MySQL client's --ssl-mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Plain TCP.
    #[default]
    Disabled,
    /// TLS when the server offers it, without checking its certificate.
    Preferred,
    /// TLS or no connection, without checking the server's certificate.
    Required,
    /// TLS with the server's certificate checked against the CA, not its name.
    VerifyCa,
    /// TLS with the certificate checked against the CA and the host name.
    VerifyIdentity,
}

impl SslMode {
    pub const NAMES: &'static str = "disabled, preferred, required, verify_ca or verify_identity";

    pub fn parse(s: &str) -> Option<SslMode> {
        Some(match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "disabled" => SslMode::Disabled,
            "preferred" => SslMode::Preferred,
            "required" => SslMode::Required,
            "verify_ca" => SslMode::VerifyCa,
            "verify_identity" => SslMode::VerifyIdentity,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disabled => "disabled",
            SslMode::Preferred => "preferred",
            SslMode::Required => "required",
            SslMode::VerifyCa => "verify_ca",
            SslMode::VerifyIdentity => "verify_identity",
        }
    }

    /// Whether a server without TLS is refused.
    pub fn requires_tls(self) -> bool {
        matches!(
            self,
            SslMode::Required | SslMode::VerifyCa | SslMode::VerifyIdentity
        )
    }
}

/// The TLS settings of one target, as given (paths on the agent's host).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SslSettings {
    pub mode: SslMode,
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

impl SslSettings {
    /// Checks what can be checked without the files: verification needs a CA, a client
    /// certificate needs its key and the other way round.
    pub fn validate(&self) -> Result<(), String> {
        if matches!(self.mode, SslMode::VerifyCa | SslMode::VerifyIdentity) && self.ca.is_none() {
            return Err(format!(
                "--mysql-ssl-mode={} needs --mysql-ssl-ca (the CA that signed the server's certificate)",
                self.mode.name()
            ));
        }
        if self.cert.is_some() != self.key.is_some() {
            return Err("--mysql-ssl-cert and --mysql-ssl-key go together".into());
        }
        Ok(())
    }

    /// Reads the files and builds the client configuration (None when TLS is disabled).
    /// Errors name the file.
    pub fn client_config(&self) -> Result<Option<Arc<ClientConfig>>, String> {
        if self.mode == SslMode::Disabled {
            return Ok(None);
        }
        self.validate()?;
        let mut provider = rustls::crypto::ring::default_provider();
        // AES-128-GCM first: a statement and its reply are records of a few hundred bytes,
        // where 10 AES rounds instead of 14 show in the client CPU per query.
        provider.cipher_suites.sort_by_key(|s| {
            let name = format!("{:?}", s.suite());
            !name.contains("AES_128_GCM")
        });
        let provider = Arc::new(provider);
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup: {e}"))?;
        let builder = match self.mode {
            SslMode::Disabled => unreachable!("handled above"),
            SslMode::Preferred | SslMode::Required => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCert(provider))),
            SslMode::VerifyCa | SslMode::VerifyIdentity => {
                let roots = self.roots()?;
                let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots),
                    provider,
                )
                .build()
                .map_err(|e| format!("TLS setup: {e}"))?;
                if self.mode == SslMode::VerifyIdentity {
                    builder.with_webpki_verifier(webpki)
                } else {
                    builder
                        .dangerous()
                        .with_custom_certificate_verifier(Arc::new(CaOnly(webpki)))
                }
            }
        };
        let config = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let certs = read_certs(cert)?;
                let key = PrivateKeyDer::from_pem_file(key)
                    .map_err(|e| format!("cannot read the private key {}: {e}", key.display()))?;
                builder
                    .with_client_auth_cert(certs, key)
                    .map_err(|e| format!("client certificate {}: {e}", cert.display()))?
            }
            _ => builder.with_no_client_auth(),
        };
        Ok(Some(Arc::new(config)))
    }

    fn roots(&self) -> Result<RootCertStore, String> {
        let mut roots = RootCertStore::empty();
        if let Some(ca) = &self.ca {
            for c in read_certs(ca)? {
                roots
                    .add(c)
                    .map_err(|e| format!("CA file {}: {e}", ca.display()))?;
            }
        }
        Ok(roots)
    }
}

fn read_certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read the certificates in {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// The server name a certificate is checked against: the host (an address or a DNS
/// name), or "localhost" over a Unix socket.
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string())
        .map_err(|e| format!("'{host}' is no TLS server name: {e}"))
}

/// preferred/required: encryption without checking who is at the other end (as the
/// MySQL client's modes of those names), but the handshake's signatures still checked.
#[derive(Debug)]
struct AnyCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
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
            &self.0.signature_verification_algorithms,
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
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// verify_ca: the chain must lead to the CA; the name in the certificate may differ.
#[derive(Debug)]
struct CaOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl ServerCertVerifier for CaOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_in_both_spellings() {
        assert_eq!(
            SslMode::parse("VERIFY_IDENTITY"),
            Some(SslMode::VerifyIdentity)
        );
        assert_eq!(SslMode::parse("verify-ca"), Some(SslMode::VerifyCa));
        assert_eq!(SslMode::parse("on"), None);
        for m in [
            "disabled",
            "preferred",
            "required",
            "verify_ca",
            "verify_identity",
        ] {
            assert_eq!(SslMode::parse(m).unwrap().name(), m);
        }
    }

    #[test]
    fn verification_without_a_ca_and_half_a_client_identity_are_refused() {
        let s = SslSettings {
            mode: SslMode::VerifyCa,
            ..Default::default()
        };
        assert!(s.validate().unwrap_err().contains("--mysql-ssl-ca"));
        let s = SslSettings {
            mode: SslMode::Required,
            cert: Some("c.pem".into()),
            ..Default::default()
        };
        assert!(s.validate().unwrap_err().contains("go together"));
        assert!(SslSettings::default().client_config().unwrap().is_none());
    }

    #[test]
    fn a_missing_ca_file_is_named() {
        let s = SslSettings {
            mode: SslMode::VerifyIdentity,
            ca: Some("/nonexistent/ca.pem".into()),
            ..Default::default()
        };
        let e = s.client_config().unwrap_err();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }
}
