//! The web page's HTTP server (axum, on the coordinator's own runtime): the page itself
//! (embedded: no CDN, no file to install), the live view as JSON and as a stream of
//! server-sent events (one snapshot a second at most, whatever the run's pace: a slow or
//! idle client holds no buffer, it just gets the latest), and the catalog's runs, their
//! reports, trends and comparisons. Read-only: nothing here starts or stops a run. On a
//! non-loopback address every request must carry the token (`?token=` or `Authorization:
//! Bearer`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use fleetbench_catalog::{Catalog, Filter, IdSpec, Location};
use futures::Stream;

use super::live::LiveView;

const PAGE: &str = include_str!("page.html");

/// What every handler shares.
#[derive(Clone)]
struct App {
    live: Arc<LiveView>,
    catalog: Option<Location>,
    token: Option<Arc<str>>,
    streams: Arc<Streams>,
}

/// The event streams open now, how many have sent the final snapshot, and the snapshots
/// a stream skipped because a newer one was there by the time it sent.
#[derive(Debug, Default)]
pub struct Streams {
    open: AtomicUsize,
    done_sent: AtomicUsize,
    skipped: AtomicU64,
}

/// A running web server.
pub struct Web {
    pub addr: SocketAddr,
    live: Arc<LiveView>,
    streams: Arc<Streams>,
}

impl Web {
    /// Binds `addr` and serves the page in the background.
    pub async fn start(
        addr: SocketAddr,
        token: Option<String>,
        live: Arc<LiveView>,
        catalog: Option<Location>,
    ) -> std::io::Result<Web> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let bound = listener.local_addr()?;
        let streams = Arc::new(Streams::default());
        let app = App {
            live: live.clone(),
            catalog,
            token: token.map(Arc::from),
            streams: streams.clone(),
        };
        tokio::spawn(async move {
            let _ = axum::serve(listener, router(app)).await;
        });
        Ok(Web {
            addr: bound,
            live,
            streams,
        })
    }

    pub fn live(&self) -> &Arc<LiveView> {
        &self.live
    }

    /// After the last report: waits (at most `limit`) until every open page has been sent
    /// it, so that a browser keeps the report after the coordinator exits.
    pub async fn linger(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while tokio::time::Instant::now() < deadline {
            let open = self.streams.open.load(Ordering::Relaxed);
            if self.streams.done_sent.load(Ordering::Relaxed) >= open {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn router(app: App) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/live", get(live_json))
        .route("/api/events", get(events))
        .route("/api/runs", get(runs_json))
        .route("/runs/{id}", get(run_report))
        .route("/runs/{id}/trend", get(run_trend))
        .route("/compare", get(compare_text))
        .layer(middleware::from_fn_with_state(app.clone(), auth))
        .with_state(app)
}

/// Refuses a request without the token, where one is needed.
async fn auth(State(app): State<App>, req: Request, next: Next) -> Response {
    let Some(want) = &app.token else {
        return next.run(req).await;
    };
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let query = req.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("token=").map(percent_decode))
    });
    let given = bearer.or(query);
    if given.is_some_and(|g| constant_time_eq(g.as_bytes(), want.as_bytes())) {
        next.run(req).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            "this page needs the token: add ?token=... to its address\n",
        )
            .into_response()
    }
}

/// Whether `a` and `b` are equal, in a time that does not depend on where they differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `%XX` and `+` of a query value.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(v) => {
                    out.push(v);
                    i += 3;
                    continue;
                }
                Err(_) => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

async fn live_json(State(app): State<App>) -> Response {
    let mut v = serde_json::to_value(app.live.snapshot()).unwrap_or_default();
    v["dropped_updates"] = app.streams.skipped.load(Ordering::Relaxed).into();
    Json(v).into_response()
}

/// One snapshot a second (or sooner when the run ends), the latest each time.
async fn events(State(app): State<App>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    app.streams.open.fetch_add(1, Ordering::Relaxed);
    let guard = OpenStream(app.streams.clone());
    let stream = futures::stream::unfold(
        (app, guard, 0u64, false),
        |(app, guard, sent, finished)| async move {
            if finished {
                return None;
            }
            // A new snapshot is copied at most once a second (or at once when the run
            // ends); in between only its version is looked at.
            let mut tick = 0;
            let snap = loop {
                let (version, done) = app.live.version();
                if version != sent && (tick >= 4 || done || sent == 0) {
                    break app.live.snapshot();
                }
                tick += 1;
                tokio::time::sleep(Duration::from_millis(250)).await;
            };
            if sent != 0 && snap.version > sent + 1 {
                app.streams
                    .skipped
                    .fetch_add(snap.version - sent - 1, Ordering::Relaxed);
            }
            let done = snap.state == "done";
            let data = serde_json::to_string(&snap).unwrap_or_default();
            if done {
                app.streams.done_sent.fetch_add(1, Ordering::Relaxed);
            }
            let ev = Event::default().event("snapshot").data(data);
            Some((Ok(ev), (app, guard, snap.version, done)))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// Counts an event stream as open until it is dropped.
struct OpenStream(Arc<Streams>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn open_catalog(app: &App) -> Result<Catalog, Response> {
    let Some(loc) = &app.catalog else {
        return Err((StatusCode::NOT_FOUND, "no catalog\n").into_response());
    };
    Catalog::open(loc)
        .await
        .map_err(|e| (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response())
}

async fn runs_json(State(app): State<App>) -> Response {
    let mut c = match open_catalog(&app).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let f = Filter {
        limit: Some(200),
        ..Default::default()
    };
    match c.list(&f).await {
        Ok(runs) => Json(super::runs_json(&runs)).into_response(),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, format!("{e}\n")).into_response(),
    }
}

/// A stored run's document, read back.
async fn stored(
    app: &App,
    id: &str,
) -> Result<(fleetbench_catalog::Record, crate::report::doc::Document), Response> {
    let spec = IdSpec::parse(id)
        .map_err(|e| (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response())?;
    let mut c = open_catalog(app).await?;
    let r = c
        .get(&spec)
        .await
        .map_err(|e| (StatusCode::NOT_FOUND, format!("{e}\n")).into_response())?;
    let doc = crate::report::doc::Document::from_slice(r.doc.as_bytes())
        .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response())?;
    Ok((r, doc))
}

async fn run_report(State(app): State<App>, Path(id): Path<String>) -> Response {
    match stored(&app, &id).await {
        Ok((_, doc)) => Html(crate::report::html::render(&doc)).into_response(),
        Err(r) => r,
    }
}

async fn run_trend(State(app): State<App>, Path(id): Path<String>) -> Response {
    let (base, _) = match stored(&app, &id).await {
        Ok(x) => x,
        Err(r) => return r,
    };
    let mut c = match open_catalog(&app).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    match crate::catalog::trend(&mut c, &base, "tps").await {
        Ok((points, changes)) => {
            let points: Vec<(&fleetbench_catalog::Record, f64)> =
                points.iter().map(|(r, v)| (r, *v)).collect();
            Html(crate::report::trend::html(
                "tps",
                &base.cmp_key,
                &points,
                &changes,
            ))
            .into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    }
}

#[derive(serde::Deserialize)]
struct CompareQuery {
    ids: String,
}

async fn compare_text(State(app): State<App>, Query(q): Query<CompareQuery>) -> Response {
    let mut docs = Vec::new();
    for id in q.ids.split(',').filter(|s| !s.is_empty()) {
        match stored(&app, id).await {
            Ok((r, doc)) => docs.push((doc, r.id)),
            Err(r) => return r,
        }
    }
    if docs.len() < 2 {
        return (StatusCode::BAD_REQUEST, "compare takes ?ids=A,B[,...]\n").into_response();
    }
    match crate::report::compare::series_of(&docs, true) {
        Ok(all) => {
            let (body, _) = crate::report::compare::text(&all);
            let text = format!("{}{body}", crate::report::compare::differing_settings(&all));
            ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole_and_queries_decode() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert_eq!(percent_decode("a%2Bb+c%zz%4"), "a+b c%zz%4");
    }
}
