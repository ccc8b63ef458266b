//! `--metrics-listen`: a small HTTP server that answers scrapes from the board, and the
//! exporter that owns it and the push.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::board::Board;
use super::exposition::{OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE};
use super::push::{PushUrl, put};

/// Serves scrapes from a board (`--metrics-listen`) and pushes final figures
/// (`--metrics-push`). Cloned into every run of a command; the server stops when the last
/// clone goes.
#[derive(Clone)]
pub struct Exporter {
    inner: Arc<Inner>,
}

struct Inner {
    board: Arc<Board>,
    push: Option<PushUrl>,
    server: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(s) = &self.server {
            s.abort();
        }
    }
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("push", &self.inner.push)
            .field("serving", &self.inner.server.is_some())
            .finish()
    }
}

impl PartialEq for Exporter {
    fn eq(&self, o: &Exporter) -> bool {
        Arc::ptr_eq(&self.inner, &o.inner)
    }
}

/// The HTTP server could not listen.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {addr} for --metrics-listen: {source}")]
pub struct ListenError {
    addr: SocketAddr,
    source: std::io::Error,
}

impl Exporter {
    /// Starts serving on `listen` (when given; the bound address is returned, which
    /// differs from `listen` for port 0) and remembers where to push.
    pub async fn start(
        listen: Option<SocketAddr>,
        push: Option<PushUrl>,
    ) -> Result<(Exporter, Option<SocketAddr>), ListenError> {
        let board = Arc::new(Board::default());
        let (server, bound) = match listen {
            Some(addr) => {
                let l = TcpListener::bind(addr)
                    .await
                    .map_err(|source| ListenError { addr, source })?;
                let bound = l
                    .local_addr()
                    .map_err(|source| ListenError { addr, source })?;
                (Some(tokio::spawn(serve(l, board.clone()))), Some(bound))
            }
            None => (None, None),
        };
        let inner = Inner {
            board,
            push,
            server,
        };
        Ok((
            Exporter {
                inner: Arc::new(inner),
            },
            bound,
        ))
    }

    pub fn board(&self) -> &Board {
        &self.inner.board
    }

    /// Pushes the board (a run that has ended) to the Pushgateway, if there is one.
    /// Returns where it went, or why it could not.
    pub async fn push(&self) -> Option<Result<String, String>> {
        let url = self.inner.push.as_ref()?;
        let path = url.grouping_path(&self.inner.board.run_id());
        let body = self.inner.board.render(false);
        let at = format!("http://{}:{}{path}", url.host, url.port);
        Some(
            tokio::time::timeout(Duration::from_secs(10), put(url, &path, &body))
                .await
                .unwrap_or_else(|_| Err("no answer within 10 s".into()))
                .map(|()| at.clone())
                .map_err(|e| format!("{at}: {e}")),
        )
    }
}

/// Answers every connection on `l` from `board` until the task is aborted.
async fn serve(l: TcpListener, board: Arc<Board>) {
    loop {
        let Ok((conn, _)) = l.accept().await else {
            // Out of descriptors, say: try again shortly rather than spin.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let board = board.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(10), answer(conn, &board)).await;
        });
    }
}

/// The longest request head read; a scrape's is a few hundred bytes.
const MAX_HEAD: usize = 16 * 1024;

/// Reads one request and writes one response, then closes.
async fn answer(mut conn: TcpStream, board: &Board) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_HEAD {
            return respond(
                &mut conn,
                "431 Request Header Fields Too Large",
                "text/plain",
                "request head too large\n",
                false,
            )
            .await;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let (status, ctype, body, head_only) = route(&head, board);
    respond(&mut conn, status, ctype, &body, head_only).await
}

/// What a request gets: status, content type, body, and whether to send the body (HEAD).
fn route(head: &str, board: &Board) -> (&'static str, &'static str, String, bool) {
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return (
            "405 Method Not Allowed",
            "text/plain",
            "only GET and HEAD\n".into(),
            false,
        );
    }
    match path {
        "/metrics" => {
            let openmetrics = lines.any(|l| {
                l.split_once(':').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("accept")
                        && v.contains("application/openmetrics-text")
                })
            });
            let ctype = if openmetrics {
                OPENMETRICS_CONTENT_TYPE
            } else {
                TEXT_CONTENT_TYPE
            };
            ("200 OK", ctype, board.render(openmetrics), head_only)
        }
        "/" => (
            "200 OK",
            "text/plain",
            "fleetbench: the run's figures are at /metrics\n".into(),
            head_only,
        ),
        _ => (
            "404 Not Found",
            "text/plain",
            "not found: try /metrics\n".into(),
            head_only,
        ),
    }
}

async fn respond(
    conn: &mut TcpStream,
    status: &str,
    ctype: &str,
    body: &str,
    head_only: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).await?;
    if !head_only {
        conn.write_all(body.as_bytes()).await?;
    }
    conn.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::super::test_support::board;
    use super::*;
    use crate::metrics::series::RunLabels;

    #[test]
    fn requests_route_to_the_metrics_in_the_format_asked() {
        let b = board();
        let (s, ct, body, _) = route("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &b);
        assert_eq!((s, ct), ("200 OK", TEXT_CONTENT_TYPE));
        assert!(body.contains("fleetbench_run_info"));
        let (_, ct, body, _) = route(
            "GET /metrics?x=1 HTTP/1.1\r\naccept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n\r\n",
            &b,
        );
        assert_eq!(ct, OPENMETRICS_CONTENT_TYPE);
        assert!(body.ends_with("# EOF\n"));
        assert_eq!(route("GET /nope HTTP/1.1\r\n\r\n", &b).0, "404 Not Found");
        assert_eq!(
            route("POST /metrics HTTP/1.1\r\n\r\n", &b).0,
            "405 Method Not Allowed"
        );
        assert!(route("HEAD /metrics HTTP/1.1\r\n\r\n", &b).3);
    }

    #[tokio::test]
    async fn the_server_answers_a_scrape_over_tcp() {
        let (e, bound) = Exporter::start(Some("127.0.0.1:0".parse().unwrap()), None)
            .await
            .unwrap();
        e.board().begin(RunLabels {
            run_id: "live".into(),
            ..Default::default()
        });
        let mut c = TcpStream::connect(bound.unwrap()).await.unwrap();
        c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).await.unwrap();
        assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
        let body = got.split("\r\n\r\n").nth(1).unwrap();
        let len: usize = got
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(len, body.len());
        assert!(body.contains("fleetbench_run_info{run_id=\"live\""));
        assert!(e.push().await.is_none());
    }
}
