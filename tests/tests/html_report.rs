//! The HTML report in a real browser: headless Chromium (Debian's `chromium` package,
//! which scripts/test.sh installs) loads the page from a file, its inline script reports
//! no error, every chart's SVG carries the run's data points, and a screenshot shows a
//! non-empty page. A missing Chromium fails the test; it never skips.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::{Scratch, fleetbench_ok};
use serde_json::Value;

fn chromium() -> String {
    for name in ["chromium", "chromium-browser"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if found {
            return name.to_string();
        }
    }
    panic!(
        "chromium is not installed: the HTML report test needs it (scripts/test.sh installs it; or apt-get install chromium)"
    );
}

/// Runs headless Chromium on `page` with `args`, as this user with its own profile
/// directory; returns stdout.
fn browse(dir: &Scratch, page: &Path, args: &[&str]) -> String {
    let profile = dir.path("chromium-profile");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 60s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("chromium output");
    assert!(out.status.success(), "chromium failed: {}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// (data-x, data-y) of every point of chart `id` in the dumped DOM.
fn points(dom: &str, id: &str) -> Vec<(f64, f64)> {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let svg = &dom[start..start + dom[start..].find("</svg>").expect("</svg>")];
    let attr = |s: &str, name: &str| -> f64 {
        let at = s.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
        s[at..at + s[at..].find('"').unwrap()].parse().unwrap()
    };
    svg.split("<circle")
        .skip(1)
        .map(|c| (attr(c, "data-x"), attr(c, "data-y")))
        .collect()
}

/// The status line the page's script wrote.
fn status(dom: &str) -> &str {
    let at = dom.find("<div id=\"status\"").expect("status element");
    &dom[at..at + dom[at..].find("</div>").unwrap()]
}

fn check_screenshot(dir: &Scratch, page: &Path) {
    let png = dir.path("shot.png");
    let _ = std::fs::remove_file(&png);
    browse(
        dir,
        page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1200,2000",
        ],
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    // A blank 1200x2000 page compresses to a few KB; charts and tables take far more.
    assert!(bytes.len() > 30_000, "screenshot of {} bytes", bytes.len());
}

#[test]
fn sweep_html_opens_in_chromium_with_every_data_point() {
    let dir = Scratch::new("html-sweep");
    let json = dir.path("sweep.json");
    let html = dir.path("sweep.html");
    fleetbench_ok(&[
        "cpu",
        "--threads=1,2",
        "--time=2",
        "--local-agents=2",
        "--cpu-max-prime=2000",
        &format!("--json={}", json.display()),
        &format!("--html={}", html.display()),
        "run",
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "self-contained"
    );

    let dom = browse(&dir, &html, &["--dump-dom"]);
    let st = status(&dom);
    assert!(
        st.contains("data-ok=\"true\"") && st.contains(">ok: "),
        "{st}"
    );
    // Events/s and p95 against threads: one point per step, with the step's figures.
    let steps = doc["steps"].as_array().unwrap();
    let tps = points(&dom, "tps-threads");
    let p95 = points(&dom, "p95-threads");
    assert_eq!(tps.len(), 2);
    for (i, s) in steps.iter().enumerate() {
        let sum = &s["summary"];
        assert_eq!(tps[i].0, sum["threads"].as_f64().unwrap());
        assert!((tps[i].1 - sum["tps"].as_f64().unwrap()).abs() < 0.001);
        assert!((p95[i].1 - sum["latency_ms"]["p95"].as_f64().unwrap()).abs() < 0.001);
        // Over time: one point per interval of that step, per line.
        let intervals = s["result"]["intervals"].as_array().unwrap();
        assert!(!intervals.is_empty());
        let over_time = points(&dom, &format!("s0-{i}-throughput-time"));
        assert_eq!(over_time.len(), intervals.len());
        assert_eq!(
            over_time[0].1,
            (intervals[0]["events_per_sec"].as_f64().unwrap() * 1000.0).round() / 1000.0
        );
        // Per agent: a line per agent that ran.
        let per_agent = points(&dom, &format!("s0-{i}-agents-time"));
        assert_eq!(per_agent.len(), intervals.len() * (i + 1));
    }
    // The spectrum of the last step, one point per spectrum percentile.
    let spectrum = points(&dom, "spectrum");
    let expected = steps[1]["result"]["totals"]["latency_spectrum_ms"]
        .as_array()
        .unwrap();
    assert_eq!(spectrum.len(), expected.len());
    assert!(spectrum.windows(2).all(|w| w[0].1 <= w[1].1), "monotonic");
    check_screenshot(&dir, &html);
}

#[test]
fn report_turns_a_run_json_into_html_with_time_series_and_configuration() {
    let dir = Scratch::new("html-run");
    let json = dir.path("run.json");
    let html = dir.path("run.html");
    fleetbench_ok(&[
        "cpu",
        "--threads=2",
        "--time=3",
        "--local-agents=2",
        "--cpu-max-prime=2000",
        &format!("--json={}", json.display()),
        "run",
    ]);
    fleetbench_ok(&[
        "report",
        json.to_str().unwrap(),
        &format!("--html={}", html.display()),
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let dom = browse(&dir, &html, &["--dump-dom"]);
    let st = status(&dom);
    assert!(st.contains("data-ok=\"true\""), "{st}");
    let intervals = doc["intervals"].as_array().unwrap();
    let lat = points(&dom, "latency-time");
    assert_eq!(lat.len(), intervals.len() * 2, "p95 and p99 per interval");
    for (iv, p) in intervals.iter().zip(&lat) {
        // To the millisecond the chart keeps (the last interval ends between seconds).
        assert!(
            (p.0 - iv["t_s"].as_f64().unwrap()).abs() < 1e-3,
            "{p:?} {iv}"
        );
        assert_eq!(p.1, iv["latency_ms"]["p95"].as_f64().unwrap());
    }
    assert_eq!(points(&dom, "agents-time").len(), intervals.len() * 2);
    assert!(
        dom.contains("<th>cpu_max_prime</th><td>2000</td>"),
        "configuration shown"
    );
    check_screenshot(&dir, &html);
    // A page whose script fails says so in the DOM: the check is real.
    let broken = dir.path("broken.html");
    std::fs::write(
        &broken,
        std::fs::read_to_string(&html)
            .unwrap()
            .replacen("data-points=\"", "data-points=\"9", 1),
    )
    .unwrap();
    let dom = browse(&dir, &broken, &["--dump-dom"]);
    assert!(status(&dom).contains("error: chart"), "{}", status(&dom));
}
