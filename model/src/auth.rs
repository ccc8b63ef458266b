//! Bearer-token authentication of every call: an agent is a remote trigger for heavy load,
//! so each RPC must carry `authorization: Bearer <token>` when the agent has a token.

use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

/// Server side: rejects calls without the agent's token. Without a token (loopback only,
/// or `--insecure`) every call is let through.
#[derive(Clone)]
pub struct Check {
    expected: Option<Vec<u8>>,
}

impl Check {
    pub fn new(token: Option<String>) -> Self {
        Check {
            expected: token.map(|t| format!("Bearer {t}").into_bytes()),
        }
    }
}

impl Interceptor for Check {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(req);
        };
        match req.metadata().get("authorization") {
            Some(v) if constant_time_eq(v.as_bytes(), expected) => Ok(req),
            Some(_) => Err(Status::unauthenticated("wrong token")),
            None => Err(Status::unauthenticated(
                "this agent requires a token (--token-file or FLEETBENCH_TOKEN)",
            )),
        }
    }
}

/// Client side: adds the token to every call.
#[derive(Clone)]
pub struct Attach {
    header: Option<MetadataValue<tonic::metadata::Ascii>>,
}

impl Attach {
    /// Fails if the token cannot be sent as a header (control characters).
    pub fn new(token: Option<&str>) -> Result<Self, String> {
        let header = match token {
            None => None,
            Some(t) => Some(
                format!("Bearer {t}")
                    .parse()
                    .map_err(|_| "the token must be printable ASCII".to_string())?,
            ),
        };
        Ok(Attach { header })
    }
}

impl Interceptor for Attach {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(h) = &self.header {
            req.metadata_mut().insert("authorization", h.clone());
        }
        Ok(req)
    }
}

/// Compares without an early exit, so timing does not tell how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Reads a token: the file's first line, trimmed; else FLEETBENCH_TOKEN; else the
/// credential `token` systemd passes with `LoadCredential=` (`$CREDENTIALS_DIRECTORY/token`).
/// An empty token is an error rather than "no authentication".
pub fn load(file: Option<&std::path::Path>) -> Result<Option<String>, String> {
    let credential = std::env::var_os("CREDENTIALS_DIRECTORY")
        .map(|d| std::path::PathBuf::from(d).join("token"));
    load_from(
        file,
        std::env::var("FLEETBENCH_TOKEN").ok(),
        credential.as_deref(),
    )
}

fn load_from(
    file: Option<&std::path::Path>,
    env: Option<String>,
    credential: Option<&std::path::Path>,
) -> Result<Option<String>, String> {
    let read = |f: &std::path::Path, what: &'static str| {
        crate::capped::read_to_string(f, what, crate::capped::SECRET_CAP).map_err(|e| e.to_string())
    };
    let raw = match (file, env, credential) {
        (Some(f), _, _) => read(f, "the token file")?,
        (None, Some(t), _) => t,
        (None, None, Some(c)) => read(c, "the systemd credential")?,
        (None, None, None) => return Ok(None),
    };
    let t = raw.lines().next().unwrap_or("").trim().to_string();
    if t.is_empty() {
        return Err("the token is empty".into());
    }
    Ok(Some(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(auth: Option<&str>) -> Request<()> {
        let mut r = Request::new(());
        if let Some(a) = auth {
            r.metadata_mut().insert("authorization", a.parse().unwrap());
        }
        r
    }

    #[test]
    fn only_the_right_token_passes() {
        let mut c = Check::new(Some("s3cret".into()));
        assert!(c.call(req(Some("Bearer s3cret"))).is_ok());
        assert_eq!(
            c.call(req(Some("Bearer s3cre"))).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        assert_eq!(
            c.call(req(Some("s3cret"))).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        assert_eq!(
            c.call(req(None)).unwrap_err().code(),
            tonic::Code::Unauthenticated
        );
        let mut open = Check::new(None);
        assert!(open.call(req(None)).is_ok());
    }

    #[test]
    fn token_sources_in_order() {
        let dir = std::env::temp_dir().join(format!("fleetbench-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (file, cred) = (dir.join("file"), dir.join("token"));
        std::fs::write(&file, "from-file\n").unwrap();
        std::fs::write(&cred, "from-credential\n").unwrap();
        let env = || Some("from-env".to_string());
        let got = |f, e, c| load_from(f, e, c).unwrap();
        assert_eq!(got(Some(&*file), env(), Some(&*cred)).unwrap(), "from-file");
        assert_eq!(got(None, env(), Some(&*cred)).unwrap(), "from-env");
        assert_eq!(got(None, None, Some(&*cred)).unwrap(), "from-credential");
        assert_eq!(got(None, None, None), None);
        let missing = dir.join("missing");
        assert!(load_from(None, None, Some(&missing)).is_err());
        std::fs::write(&cred, "\n").unwrap();
        assert!(load_from(None, None, Some(&cred)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn attach_sets_the_header_check_accepts() {
        let mut a = Attach::new(Some("tok")).unwrap();
        let r = a.call(Request::new(())).unwrap();
        assert!(Check::new(Some("tok".into())).call(r).is_ok());
        assert!(Attach::new(Some("bad\ntoken")).is_err());
    }
}
