//! TLS to the database as a run asks for it: sysbench's and the MySQL client's
//! `--mysql-ssl*` settings. The agent reads the files and builds the client from them.

use std::path::PathBuf;

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

    pub const LIBPQ_NAMES: &'static str =
        "disable, allow, prefer, require, verify-ca or verify-full";

    /// libpq's sslmode (`--pgsql-sslmode`, a postgres:// URL's `sslmode`): `allow` tries
    /// without TLS first in libpq; here it is `prefer`, as the server decides either way.
    pub fn parse_libpq(s: &str) -> Option<SslMode> {
        Some(match s.trim() {
            "disable" => SslMode::Disabled,
            "allow" | "prefer" => SslMode::Preferred,
            "require" => SslMode::Required,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyIdentity,
            _ => return None,
        })
    }

    /// The mode as libpq names it.
    pub fn libpq_name(self) -> &'static str {
        match self {
            SslMode::Disabled => "disable",
            SslMode::Preferred => "prefer",
            SslMode::Required => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyIdentity => "verify-full",
        }
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
}
