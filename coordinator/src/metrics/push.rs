//! `--metrics-push`: a run's final figures PUT to a Prometheus Pushgateway.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::exposition::TEXT_CONTENT_TYPE;

/// `--metrics-push`'s Pushgateway: where to PUT a run's final figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushUrl {
    pub host: String,
    pub port: u16,
    /// The path the URL gave, without a trailing `/`.
    pub path: String,
}

impl PushUrl {
    /// `http://HOST[:PORT][/PATH]`; the port defaults to the Pushgateway's 9091.
    pub fn parse(s: &str) -> Result<PushUrl, &'static str> {
        let rest = match s.strip_prefix("http://") {
            Some(r) => r,
            None if s.starts_with("https://") => {
                return Err(
                    "https is not supported: use http:// (a Pushgateway behind TLS needs a proxy)",
                );
            }
            None => return Err("expected http://HOST[:PORT][/PATH]"),
        };
        let (hostport, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
                h,
                p.parse::<u16>()
                    .map_err(|_| "the port is not a number in 1..65535")?,
            ),
            _ => (hostport, 9091),
        };
        if host.is_empty() || port == 0 {
            return Err("expected http://HOST[:PORT][/PATH]");
        }
        if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("the path holds a space or a control character");
        }
        Ok(PushUrl {
            host: host.to_string(),
            port,
            path: path.trim_end_matches('/').to_string(),
        })
    }

    /// The path a run's figures go to: the Pushgateway's grouping of job `fleetbench` and
    /// the run id, unless the URL named its own grouping (`/metrics/job/...`).
    pub fn grouping_path(&self, run_id: &str) -> String {
        if self.path.contains("/metrics/job/") {
            self.path.clone()
        } else {
            format!("{}/metrics/job/fleetbench/run_id/{run_id}", self.path)
        }
    }
}

/// PUTs `body` to `path` on the Pushgateway; Ok on a 2xx answer.
pub(super) async fn put(url: &PushUrl, path: &str, body: &str) -> Result<(), String> {
    let mut conn = TcpStream::connect((url.host.as_str(), url.port))
        .await
        .map_err(|e| format!("cannot connect: {e}"))?;
    let req = format!(
        "PUT {path} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: {TEXT_CONTENT_TYPE}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        url.host,
        url.port,
        body.len()
    );
    conn.write_all(req.as_bytes())
        .await
        .map_err(|e| format!("cannot send: {e}"))?;
    let mut answer = Vec::new();
    conn.take(64 * 1024)
        .read_to_end(&mut answer)
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let status = answer.lines().next().unwrap_or("");
    let code = status.split(' ').nth(1).unwrap_or("");
    if code.starts_with('2') {
        Ok(())
    } else {
        // The Pushgateway says why in the body.
        let why = answer
            .split("\r\n\r\n")
            .nth(1)
            .and_then(|b| b.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        Err(format!("{status} {why}").trim().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_urls_parse_and_group_by_run() {
        let u = PushUrl::parse("http://pgw.example:9091").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.path.as_str()),
            ("pgw.example", 9091, "")
        );
        assert_eq!(u.grouping_path("r1"), "/metrics/job/fleetbench/run_id/r1");
        let u = PushUrl::parse("http://127.0.0.1/base/").unwrap();
        assert_eq!(
            (u.port, u.grouping_path("r1").as_str()),
            (9091, "/base/metrics/job/fleetbench/run_id/r1")
        );
        let u = PushUrl::parse("http://[::1]:1234/metrics/job/nightly").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("[::1]", 1234));
        assert_eq!(u.grouping_path("r1"), "/metrics/job/nightly");
        assert!(PushUrl::parse("https://x").unwrap_err().contains("https"));
        assert!(PushUrl::parse("pgw:9091").is_err());
        assert!(PushUrl::parse("http://:9091").is_err());
        assert!(PushUrl::parse("http://x:port").is_err());
    }
}
