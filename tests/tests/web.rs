//! The live web page in headless Chromium (a real browser): during a run with `--web`, the
//! page lists the agents and charts TPS, its last point moving from one look to the next;
//! when the run ends the page holds the report; `serve` lists the catalog's runs; an
//! address other than loopback wants the token.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::{Scratch, bin, fleetbench_env};

/// A coordinator started in the background with `--web`, and the page's address.
struct Served {
    child: Child,
    url: String,
}

impl Served {
    /// Starts `fleetbench ARGS` with `env` and waits for its "live page" line.
    fn start(args: &[&str], env: &[(&str, &str)]) -> Served {
        let mut child = Command::new(bin("fleetbench"))
            .args(args)
            .env_remove("FLEETBENCH_TOKEN")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start fleetbench");
        let err = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no live page line from {args:?}");
            };
            if let Some(at) = line.strip_prefix("note: the live page is at ") {
                let url = at.split('?').next().unwrap().to_string();
                return Served { child, url };
            }
        }
    }

    fn wait(mut self) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "fleetbench did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Headless Chromium's DOM of `url` once the page is idle for the `--virtual-time-budget`
/// of `wait` (a page that holds a stream: once the stream ended).
fn dom(dir: &Scratch, url: &str, wait: &str) -> String {
    let chromium = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| {
            Command::new("sh")
                .args(["-c", &format!("command -v {c}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect(
            "chromium is not installed: the web page test needs it (scripts/test.sh installs it)",
        );
    let profile = dir.path(&format!("profile-{}", rand_suffix()));
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            wait,
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish with {url} within 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium failed");
    reader.join().unwrap()
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The value of attribute `name` on the element with id `id`.
fn attr(dom: &str, id: &str, name: &str) -> String {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {dom}"));
    let tag_start = dom[..at].rfind('<').unwrap();
    let tag = &dom[tag_start..tag_start + dom[tag_start..].find('>').unwrap()];
    let key = format!("{name}=\"");
    let v = &tag[tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len()..];
    v[..v.find('"').unwrap()].to_string()
}

/// An HTTP GET of `path` on `addr` (HOST:PORT): the status code.
fn get_status(addr: &str, path: &str) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    resp.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_page_follows_a_run_and_keeps_its_report() {
    let scratch = Scratch::new("web-live");
    let db = scratch.path("c.db");
    let env = [("FLEETBENCH_CATALOG", db.to_str().unwrap())];
    let served = Served::start(
        &[
            "cpu",
            "--threads=2",
            "--local-agents=2",
            // Paced, so that the browser on the same cores gets its share.
            "--rate=300",
            "--time=8",
            "--report-interval=1",
            "--web=127.0.0.1:0",
            "run",
        ],
        &env,
    );
    // Two looks a couple of seconds apart (the page asking once a second, `?poll=1`, so
    // that the browser's clock can run ahead): the agents, and a chart that moved on.
    let polled = format!("{}?poll=1", served.url);
    std::thread::sleep(Duration::from_millis(2500));
    let first = dom(&scratch, &polled, "--virtual-time-budget=1500");
    assert!(first.contains("id=\"state\">running<"), "{first}");
    assert_eq!(first.matches("<tr data-addr=").count(), 2, "{first}");
    let n1: u32 = attr(&first, "tps-chart", "data-points").parse().unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    let second = dom(&scratch, &polled, "--virtual-time-budget=1500");
    let n2: u32 = attr(&second, "tps-chart", "data-points").parse().unwrap();
    assert!(n1 >= 1 && n2 > n1, "points {n1} then {n2}");
    assert!(!attr(&second, "tps-chart", "data-last").is_empty());
    assert!(second.contains("class=\"series\""), "{second}");
    // Open until the run ends: the report arrives and stays on the page.
    let last = dom(&scratch, &served.url, "--virtual-time-budget=20000");
    assert!(last.contains("id=\"state\">done<"), "{last}");
    assert!(
        last.contains("id=\"report\"") && last.contains("srcdoc="),
        "{last}"
    );
    assert_eq!(served.wait(), 0);

    // `serve` lists the run the catalog recorded, with its report a click away.
    let serve = Served::start(&["serve", "--web=127.0.0.1:0"], &env);
    // (Asking, not holding a stream: `serve` has no run to end it.)
    let page = dom(
        &scratch,
        &format!("{}?poll=1", serve.url),
        "--virtual-time-budget=3000",
    );
    let rows = page.matches("<tr data-id=").count();
    assert_eq!(rows, 1, "{page}");
    let id = attr(&page, "runs", "id");
    assert_eq!(id, "runs");
    let addr = serve
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let run_id = page
        .split("<tr data-id=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(get_status(addr, &format!("/runs/{run_id}")), 200);
    assert_eq!(get_status(addr, &format!("/runs/{run_id}/trend")), 200);
    assert_eq!(get_status(addr, "/runs/ffffffff"), 404);
}

#[test]
fn another_address_than_loopback_needs_the_token() {
    let scratch = Scratch::new("web-token");
    let token = scratch.write("token", "s3cret-token\n");
    let db = scratch.path("c.db");
    let env = [("FLEETBENCH_CATALOG", db.to_str().unwrap())];
    let token_opt = format!("--web-token-file={}", token.display());
    let serve = Served::start(&["serve", "--web=0.0.0.0:0", &token_opt], &env);
    let port = serve.url.rsplit(':').next().unwrap().trim_end_matches('/');
    let addr = format!("127.0.0.1:{port}");
    assert_eq!(get_status(&addr, "/api/live"), 401);
    assert_eq!(get_status(&addr, "/api/live?token=wrong"), 401);
    assert_eq!(get_status(&addr, "/api/live?token=s3cret-token"), 200);
    // Without a token anywhere: refused before anything runs, in one line.
    let out = fleetbench_env(&["serve", "--web=0.0.0.0:0"], &env);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a loopback address"), "{err}");
}

#[test]
fn live_agents_puts_a_line_per_agent_under_each_interval_line() {
    let out = fleetbench_env(
        &[
            "cpu",
            "--threads=2",
            "--local-agents=2",
            "--time=3",
            "--report-interval=1",
            "--live-agents",
            "--no-catalog",
            "run",
        ],
        &[],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let intervals: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("[ ") && lines[i].contains("s ] thds: "))
        .collect();
    assert!(intervals.len() >= 2, "{text}");
    for &i in &intervals {
        let under: Vec<&&str> = lines[i + 1..]
            .iter()
            .take_while(|l| l.starts_with("    agent "))
            .collect();
        assert_eq!(under.len(), 2, "{text}");
        assert!(
            under.iter().all(|l| l.contains(" events/s, 95%: ")),
            "{text}"
        );
    }
}

#[test]
fn a_hundred_idle_pages_do_not_hold_the_run() {
    let scratch = Scratch::new("web-idle");
    let db = scratch.path("c.db");
    let env = [("FLEETBENCH_CATALOG", db.to_str().unwrap())];
    let started = Instant::now();
    let served = Served::start(
        &[
            "cpu",
            "--threads=1",
            "--rate=200",
            "--time=3",
            "--web=127.0.0.1:0",
            "run",
        ],
        &env,
    );
    let addr = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    // A hundred streams opened and never read.
    let idle: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            write!(s, "GET /api/events HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
            s
        })
        .collect();
    assert_eq!(served.wait(), 0);
    // The run's 3 s, its start and a few seconds' grace at most for the pages.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    drop(idle);
}
