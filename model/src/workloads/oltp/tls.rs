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
        self.validate_for(crate::workloads::driver::Driver::Mysql)
    }

    /// [`SslSettings::validate`], naming the options of `driver` as the user gave them
    /// (`--pgsql-sslmode=verify-ca needs --pgsql-sslrootcert` for PostgreSQL).
    pub fn validate_for(&self, driver: crate::workloads::driver::Driver) -> Result<(), String> {
        use crate::workloads::driver::Driver;
        let (mode, ca, cert, key) = match driver {
            Driver::Mysql => (
                format!("--mysql-ssl-mode={}", self.mode.name()),
                "--mysql-ssl-ca",
                "--mysql-ssl-cert",
                "--mysql-ssl-key",
            ),
            Driver::Pgsql => (
                format!("--pgsql-sslmode={}", self.mode.libpq_name()),
                "--pgsql-sslrootcert",
                "--pgsql-sslcert",
                "--pgsql-sslkey",
            ),
        };
        if matches!(self.mode, SslMode::VerifyCa | SslMode::VerifyIdentity) && self.ca.is_none() {
            return Err(format!(
                "{mode} needs {ca} (the CA that signed the server's certificate)"
            ));
        }
        if self.cert.is_some() != self.key.is_some() {
            return Err(format!("{cert} and {key} go together"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::driver::Driver;

    /// A refusal names the options of the target's own driver, as the user gave them.
    #[test]
    fn refusals_name_the_drivers_own_options() {
        let verify = SslSettings {
            mode: SslMode::VerifyCa,
            ..Default::default()
        };
        assert_eq!(
            verify.validate_for(Driver::Pgsql).unwrap_err(),
            "--pgsql-sslmode=verify-ca needs --pgsql-sslrootcert (the CA that signed the server's certificate)"
        );
        assert!(
            verify
                .validate()
                .unwrap_err()
                .starts_with("--mysql-ssl-mode=verify_ca needs --mysql-ssl-ca")
        );
        let half = SslSettings {
            cert: Some("c.pem".into()),
            ..Default::default()
        };
        assert_eq!(
            half.validate_for(Driver::Pgsql).unwrap_err(),
            "--pgsql-sslcert and --pgsql-sslkey go together"
        );
    }
}
