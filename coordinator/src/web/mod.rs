//! The live web page (`--web ADDR` on any run, sweep or scenario file; `fleetbench serve`
//! over the catalog): the run as it goes, merged over the fleet, and the catalog's runs.
//! Loopback by default; another address needs a token. Read-only.

pub mod live;
pub mod server;

use std::net::SocketAddr;
use std::sync::Arc;

use fleetbench_catalog::Record;
use serde_json::{Value, json};

pub use live::LiveView;
pub use server::Web;

use crate::cli::RawArgs;
use crate::error::UsageError;

/// `--web ADDR` (and its token), checked before anything runs.
#[derive(Debug, Clone, PartialEq)]
pub struct WebSettings {
    pub addr: SocketAddr,
    /// Needed on every request when the address is not loopback.
    pub token: Option<String>,
}

impl WebSettings {
    /// From `--web` and `--web-token-file` (else the agents' token); None without `--web`.
    pub fn of(raw: &RawArgs) -> Result<Option<WebSettings>, UsageError> {
        let Some(given) = &raw.web else {
            if raw.web_token_file.is_some() {
                return Err(UsageError::new(
                    "--web-token-file has no effect without --web ADDR",
                ));
            }
            return Ok(None);
        };
        let addr = parse_addr(given).ok_or_else(|| {
            UsageError(format!(
                "--web '{given}': expected IP:PORT or localhost:PORT (port 0 picks a free one)"
            ))
        })?;
        if addr.ip().is_loopback() {
            if raw.web_token_file.is_some() {
                return Err(UsageError(format!(
                    "--web-token-file: the page at {addr} (loopback) asks for no token; a token is for an address other than loopback"
                )));
            }
            return Ok(Some(WebSettings { addr, token: None }));
        }
        let token = match &raw.web_token_file {
            Some(f) => fleetbench_model::auth::load(Some(f)).map_err(UsageError)?,
            None => fleetbench_model::auth::load(raw.token_file.as_deref()).map_err(UsageError)?,
        };
        match token {
            Some(t) => Ok(Some(WebSettings {
                addr,
                token: Some(t),
            })),
            None => Err(UsageError(format!(
                "--web {addr} is not a loopback address: the page then needs a token (--web-token-file FILE, or the agents' --token-file / FLEETBENCH_TOKEN)"
            ))),
        }
    }

    /// Starts the server; says on stderr where the page is.
    pub async fn start(
        &self,
        live: Arc<LiveView>,
        catalog: Option<fleetbench_catalog::Location>,
    ) -> anyhow::Result<Web> {
        let web = Web::start(self.addr, self.token.clone(), live, catalog)
            .await
            .map_err(|e| UsageError(format!("--web {}: {e}", self.addr)))?;
        let query = if self.token.is_some() {
            "?token=..."
        } else {
            ""
        };
        eprintln!("note: the live page is at http://{}/{query}", web.addr);
        Ok(web)
    }
}

/// `IP:PORT` or `localhost:PORT`.
fn parse_addr(v: &str) -> Option<SocketAddr> {
    if let Ok(a) = v.parse() {
        return Some(a);
    }
    let port = v.strip_prefix("localhost:")?.parse().ok()?;
    Some(SocketAddr::from(([127, 0, 0, 1], port)))
}

/// The catalog's runs as the page lists them.
pub fn runs_json(runs: &[Record]) -> Value {
    Value::Array(
        runs.iter()
            .map(|r| {
                json!({
                    "id": r.id,
                    "kind": r.kind,
                    "label": r.label,
                    "started_ms": r.started_ms,
                    "test": r.test,
                    "threads": r.threads,
                    "tps": r.tps,
                    "lat_pct": r.lat_pct,
                    "lat_pct_ms": r.lat_pct_ms,
                    "tags": r.tags,
                    "interrupted": r.interrupted,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_loopback_unless_a_token_comes_with_it() {
        let raw = |args: &[&str]| {
            let mut all = vec!["fb", "cpu"];
            all.extend_from_slice(args);
            all.push("run");
            crate::cli::parse(all).unwrap()
        };
        let w = WebSettings::of(&raw(&["--web=localhost:0"]))
            .unwrap()
            .unwrap();
        assert_eq!((w.addr.port(), w.token), (0, None));
        assert!(WebSettings::of(&raw(&[])).unwrap().is_none());
        let e = WebSettings::of(&raw(&["--web=nonsense"])).unwrap_err();
        assert!(e.to_string().contains("--web 'nonsense'"), "{e}");
        // SAFETY: no other thread of this test reads the variable.
        let e = WebSettings::of(&raw(&["--web=0.0.0.0:8080", "--token-file=/nonexistent"]))
            .unwrap_err();
        assert!(e.to_string().contains("/nonexistent"), "{e}");
        let e = WebSettings::of(&raw(&["--web-token-file=/x"])).unwrap_err();
        assert!(e.to_string().contains("without --web"), "{e}");
        // On loopback the page asks for no token: one given is refused, not ignored.
        let e = WebSettings::of(&raw(&["--web=127.0.0.1:0", "--web-token-file=/x"])).unwrap_err();
        assert!(e.to_string().contains("asks for no token"), "{e}");
    }
}
