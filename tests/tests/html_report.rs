//! The HTML report in a real browser: headless Chromium (Debian's `chromium` package,
//! which scripts/test.sh installs) loads the pages of a run, a sweep, a rate sweep and a
//! scenario file, made by real runs. Each page's inline script reports no error (and its verdict stays
//! out of view), every chart's SVG carries the run's data points, no SVG text reaches out
//! of its chart or overlaps another text (measured by the browser's layout), thread axes
//! have whole-number ticks only, and a screenshot of the whole page is a real picture.
//! A missing Chromium fails the test; it never skips.
//!
//! With FLEETBENCH_HTML_SHOTS=DIR set, the screenshots are kept in DIR for a person to look
//! at.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fleetbench_tests::mariadb::MariaDb;
use fleetbench_tests::{Scratch, fleetbench_ok, run_json, scenario_json, words};
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
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    // Read the dump while chromium writes it: a page larger than the pipe's buffer would
    // otherwise block chromium on its write while this side waits for it to exit.
    let mut stdout = child.stdout.take().expect("chromium's stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish within 60s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = reader.join().expect("the reader");
    assert!(status.success(), "chromium failed: {status}");
    String::from_utf8_lossy(&out).into_owned()
}

/// The SVG element of chart `id` in the dumped DOM.
fn chart<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    &dom[start..start + dom[start..].find("</svg>").expect("</svg>")]
}

/// (data-x, data-y) of every point of chart `id` in the dumped DOM.
fn points(dom: &str, id: &str) -> Vec<(f64, f64)> {
    let svg = chart(dom, id);
    let attr = |s: &str, name: &str| -> f64 {
        let at = s.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
        s[at..at + s[at..].find('"').unwrap()].parse().unwrap()
    };
    svg.split("<circle")
        .skip(1)
        .map(|c| (attr(c, "data-x"), attr(c, "data-y")))
        .collect()
}

/// The text of every `<text class="{class}" ...>` in `svg`.
fn texts<'a>(svg: &'a str, class: &str) -> Vec<&'a str> {
    svg.split(&format!("<text class=\"{class}\""))
        .skip(1)
        .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
        .collect()
}

/// The element the page's script records its verdict on (up to its text).
fn status(dom: &str) -> &str {
    let at = dom.find("<div id=\"status\"").expect("status element");
    &dom[at..at + dom[at..].find("</div>").unwrap()]
}

/// The page's table of contents links every section heading, in the page's order, and
/// lists at least the sections `titles`.
fn check_toc(dom: &str, titles: &[&str]) {
    let at = dom.find("<nav class=\"toc\"").expect("a table of contents");
    let toc = &dom[at..at + dom[at..].find("</nav>").unwrap()];
    let links: Vec<(&str, &str)> = toc
        .split("<a href=\"#")
        .skip(1)
        .map(|l| {
            (
                &l[..l.find('"').unwrap()],
                &l[l.find('>').unwrap() + 1..l.find("</a>").unwrap()],
            )
        })
        .collect();
    let mut last = 0;
    for (id, title) in &links {
        // A section's heading, or a step's charts behind its picker.
        let heading = format!(" id=\"{id}\">{title}</h");
        let step = format!("<div class=\"step\" id=\"{id}\"");
        let found = dom
            .find(&heading)
            .or_else(|| dom.find(&step))
            .unwrap_or_else(|| panic!("no section {heading}"));
        assert!(found > last, "{title}: in the page's order");
        last = found;
    }
    for t in titles {
        assert!(links.iter().any(|l| l.1 == *t), "{t} in {toc}");
    }
    // Every section heading has its entry.
    for h in dom.split("<h2 id=\"").skip(1) {
        let id = &h[..h.find('"').unwrap()];
        assert!(links.iter().any(|l| l.0 == id), "no entry for section {id}");
    }
}

/// The ids of the charts left out for want of data, from every note that names them.
fn left_out(dom: &str) -> Vec<String> {
    dom.split("<p class=\"nodata\"")
        .skip(1)
        .flat_map(|p| attr(p, "data-left-out").split(' ').map(str::to_string))
        .collect()
}

/// The text of the notes naming charts left out.
fn left_out_note(dom: &str) -> String {
    dom.split("<p class=\"nodata\"")
        .skip(1)
        .map(|p| &p[p.find('>').unwrap() + 1..p.find("</p>").unwrap()])
        .collect::<Vec<_>>()
        .join("\n")
}

/// The value of attribute `name` in the start tag `tag` (text from `<` on).
fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let tag = &tag[..tag.find('>').expect("end of tag")];
    let at = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + name.len()
        + 3;
    &tag[at..at + tag[at..].find('"').unwrap()]
}

/// Measures the page in the browser: every SVG text's box against its chart's SVG box and
/// against the chart's other texts, whether the script's verdict is visible, and the
/// page's height. Injected by the test into a copy of the page, so that the page does not
/// check itself.
const PROBE: &str = r#"<script>(function () {
  var found = [], count = 0;
  // Every step's charts, not only the one its picker shows.
  var steps = document.querySelectorAll('div.step');
  for (var i = 0; i < steps.length; i++) { steps[i].hidden = false; }
  var charts = document.querySelectorAll('svg.chart');
  for (var i = 0; i < charts.length; i++) {
    // The box the chart is drawn in, as wide as its column of the grid.
    var svg = charts[i], outer = svg.getBoundingClientRect();
    var left = outer.left, top = outer.top, right = outer.right, bottom = outer.bottom;
    var seen = [];
    var list = svg.querySelectorAll('text');
    for (var j = 0; j < list.length; j++) {
      var t = list[j], r = t.getBoundingClientRect(), name = svg.id + ': "' + t.textContent + '"';
      count++;
      if (r.width === 0 || r.height === 0) { found.push(name + ' has no size'); continue; }
      if (r.left < left - 0.5 || r.right > right + 0.5 || r.top < top - 0.5 || r.bottom > bottom + 0.5) {
        found.push(name + ' overflows: x ' + Math.round(r.left - left) + '..' + Math.round(r.right - left)
          + ', y ' + Math.round(r.top - top) + '..' + Math.round(r.bottom - top)
          + ' in ' + Math.round(right - left) + 'x' + Math.round(bottom - top));
      }
      for (var k = 0; k < seen.length; k++) {
        var q = seen[k].r;
        if (r.left < q.right - 0.5 && q.left < r.right - 0.5 && r.top < q.bottom - 0.5 && q.top < r.bottom - 0.5) {
          found.push(name + ' overlaps "' + seen[k].text + '"');
        }
      }
      seen.push({ r: r, text: t.textContent });
    }
  }
  var st = document.getElementById('status');
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.setAttribute('data-texts', String(count));
  pre.setAttribute('data-charts', String(charts.length));
  pre.setAttribute('data-status-shown', String(st.getClientRects().length > 0));
  pre.setAttribute('data-height', String(Math.ceil(document.documentElement.scrollHeight)));
  pre.setAttribute('data-width', String(Math.ceil(document.documentElement.scrollWidth)));
  pre.textContent = found.join('\n');
  document.body.appendChild(pre);
})();</script>"#;

const SHOT_WIDTH: u32 = 1000;

/// The window a wide screen gives the page: the charts must use its width.
const WIDE: u32 = 1400;

/// Where the page's charts are, as a reader sees the page (pickers showing their first
/// step): the top and bottom of every chart shown, in px from the top of the page, and
/// the page's height.
const LAYOUT_PROBE: &str = r#"<script>(function () {
  var boxes = [], charts = document.querySelectorAll('svg.chart');
  for (var i = 0; i < charts.length; i++) {
    if (charts[i].getClientRects().length === 0) { continue; }
    var r = charts[i].getBoundingClientRect();
    boxes.push(Math.round(r.top + window.scrollY) + ',' + Math.round(r.bottom + window.scrollY));
  }
  var pre = document.createElement('pre');
  pre.id = 'layout';
  pre.setAttribute('data-boxes', boxes.join(' '));
  pre.setAttribute('data-width', String(window.innerWidth));
  pre.setAttribute('data-height', String(Math.ceil(document.documentElement.scrollHeight)));
  document.body.appendChild(pre);
})();</script>"#;

/// Reads a screenshot (a PNG, as a data URL) back in the browser and, over the pixel rows
/// the charts occupy (`ROWS`: top,bottom pairs), finds in each row the rightmost pixel
/// that is not the page's white: the width beside the charts left empty is what lies to
/// its right.
const PIXEL_PROBE: &str = r#"<script>window.addEventListener('load', function () {
  var img = document.getElementById('shot'), c = document.createElement('canvas');
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  var g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  var w = c.width, d = g.getImageData(0, 0, w, c.height).data, out = [];
  var rows = ROWS;
  for (var b = 0; b < rows.length; b++) {
    for (var y = rows[b][0]; y < Math.min(rows[b][1], c.height); y++) {
      var right = -1;
      for (var x = w - 1; x >= 0; x--) {
        var i = (y * w + x) * 4;
        if (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245) { right = x; break; }
      }
      out.push(String(w - 1 - right));
    }
  }
  var pre = document.createElement('pre');
  pre.id = 'pixels';
  pre.setAttribute('data-image-width', String(w));
  pre.textContent = out.join(' ');
  document.body.appendChild(pre);
});</script>"#;

/// `bytes` in base64, for a data URL.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len() / 3 * 4 + 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A screenshot of the page in a window `WIDE` px wide: in the pixel rows the charts
/// occupy, no more than a third of the width beside them is empty (at the widest row,
/// and in at least half of the rows: a last chart alone in its row leaves its half).
/// Measured on the picture itself, so that a chart drawn narrower than its box counts
/// as the empty space it leaves.
fn check_width(dir: &Scratch, html: &Path, name: &str) {
    let page = std::fs::read_to_string(html).unwrap();
    let probed = dir.path(&format!("{name}-layout.html"));
    std::fs::write(
        &probed,
        page.replacen("</body>", &format!("{LAYOUT_PROBE}</body>"), 1),
    )
    .unwrap();
    let size = format!("--window-size={WIDE},2000");
    let dom = browse(dir, &probed, &["--dump-dom", &size]);
    let at = dom
        .find("<pre id=\"layout\"")
        .expect("the layout probe ran");
    let layout = &dom[at..];
    assert_eq!(attr(layout, "data-width"), WIDE.to_string(), "{name}");
    let height: u32 = attr(layout, "data-height").parse().unwrap();
    let rows: Vec<String> = attr(layout, "data-boxes")
        .split(' ')
        .filter(|b| !b.is_empty())
        .map(|b| format!("[{b}]"))
        .collect();
    assert!(rows.len() >= 2, "{name}: {} charts shown", rows.len());

    let png = dir.path(&format!("{name}-wide.png"));
    browse(
        dir,
        html,
        &[
            &format!("--screenshot={}", png.display()),
            &format!("--window-size={WIDE},{height}"),
        ],
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    let reader = dir.path(&format!("{name}-pixels.html"));
    std::fs::write(
        &reader,
        format!(
            "<!DOCTYPE html><html><body><img id=\"shot\" src=\"data:image/png;base64,{}\">{}</body></html>",
            base64(&bytes),
            PIXEL_PROBE.replace("ROWS", &format!("[{}]", rows.join(",")))
        ),
    )
    .unwrap();
    let dom = browse(dir, &reader, &["--dump-dom"]);
    let at = dom.find("<pre id=\"pixels\"").expect("the pixel probe ran");
    let pixels = &dom[at..];
    assert_eq!(attr(pixels, "data-image-width"), WIDE.to_string());
    let empty: Vec<u32> = pixels[pixels.find('>').unwrap() + 1..pixels.find("</pre>").unwrap()]
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        empty.len() > 200,
        "{name}: {} pixel rows of charts",
        empty.len()
    );
    let third = WIDE / 3;
    let least = *empty.iter().min().unwrap();
    let wide_rows = empty.iter().filter(|e| **e <= third).count();
    assert!(
        least <= third && wide_rows * 2 >= empty.len(),
        "{name}: at {WIDE} px the charts leave {least} px empty beside them at best, and more than {third} px in {} of {} rows",
        empty.len() - wide_rows,
        empty.len()
    );
    if let Some(keep) = std::env::var_os("FLEETBENCH_HTML_SHOTS") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).unwrap();
        std::fs::copy(&png, keep.join(format!("{name}-wide.png"))).unwrap();
    }
}

/// Everything a page must satisfy in the browser beyond its data: its script passed and
/// says so only in attributes, no chart text overflows or overlaps, thread axes have
/// integer ticks, and a screenshot of the whole page is a real picture.
fn check_page(dir: &Scratch, html: &Path, name: &str) {
    let page = std::fs::read_to_string(html).unwrap();
    assert!(
        !page.contains("src=\"http") && !page.contains("href=\"http"),
        "self-contained"
    );
    let probed = dir.path(&format!("{name}-probe.html"));
    std::fs::write(
        &probed,
        page.replacen("</body>", &format!("{PROBE}</body>"), 1),
    )
    .unwrap();
    let dom = browse(dir, &probed, &["--dump-dom"]);

    let st = status(&dom);
    assert_eq!(attr(st, "data-ok"), "true", "{name}: {st}");
    let at = dom.find("<pre id=\"probe\"").expect("the probe ran");
    let probe = &dom[at..at + dom[at..].find("</pre>").unwrap()];
    let findings = &probe[probe.find('>').unwrap() + 1..];
    assert_eq!(
        attr(probe, "data-charts"),
        attr(st, "data-charts"),
        "{name}: the probe saw every chart"
    );
    let measured: usize = attr(probe, "data-texts").parse().unwrap();
    assert!(measured > 20, "{name}: only {measured} texts measured");
    assert!(
        findings.trim().is_empty(),
        "{name}: chart texts out of place:\n{findings}"
    );
    assert_eq!(
        attr(probe, "data-status-shown"),
        "false",
        "{name}: the script's verdict is not for the reader"
    );
    assert!(!dom.contains(">ok: "), "{name}: no test line on the page");
    let width: u32 = attr(probe, "data-width").parse().unwrap();
    assert!(width <= SHOT_WIDTH, "{name}: the page is {width}px wide");

    // Thread axes: whole numbers only.
    let mut thread_axes = 0;
    for part in dom.split("<svg class=\"chart\"").skip(1) {
        let svg = &part[..part.find("</svg>").unwrap()];
        if !attr(svg, "id").ends_with("-threads") {
            continue;
        }
        thread_axes += 1;
        let labels = texts(svg, "tick x");
        assert!(!labels.is_empty(), "{name}: no ticks on {svg}");
        for l in labels {
            assert!(
                l.parse::<u32>().is_ok(),
                "{name}: thread tick '{l}' in chart {}",
                attr(svg, "id")
            );
        }
    }
    // A rate sweep runs every step at one thread count: nothing to chart against it.
    if name != "run" && !name.starts_with("rate") {
        assert!(thread_axes >= 3, "{name}: {thread_axes} thread axes");
    }

    // A screenshot of the whole page.
    let height: u32 = attr(probe, "data-height").parse().unwrap();
    assert!(height > 1000, "{name}: a page {height}px high");
    let png = dir.path(&format!("{name}.png"));
    browse(
        dir,
        html,
        &[
            &format!("--screenshot={}", png.display()),
            &format!("--window-size={SHOT_WIDTH},{height}"),
        ],
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let dim = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(
        (dim(16), dim(20)),
        (SHOT_WIDTH, height),
        "{name}: whole page"
    );
    // A blank page this size compresses to a few KB; charts and tables take far more.
    assert!(
        bytes.len() > 50_000,
        "{name}: screenshot of {} bytes",
        bytes.len()
    );
    if let Some(keep) = std::env::var_os("FLEETBENCH_HTML_SHOTS") {
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).unwrap();
        std::fs::copy(&png, keep.join(format!("{name}.png"))).unwrap();
        std::fs::copy(html, keep.join(format!("{name}.html"))).unwrap();
    }
    check_width(dir, html, name);
}

/// Runs `fleetbench cpu ARGS` on two embedded agents (`--cpu-max-prime=2000`), its results
/// in `name`.json and `name`.html of `dir`; the JSON result, the page and its DOM in Chromium.
fn cpu_page(dir: &Scratch, name: &str, args: &[&str]) -> (Value, PathBuf, String) {
    let html = dir.path(&format!("{name}.html"));
    let html_opt = format!("--html={}", html.display());
    let fixed = ["cpu", "--local-agents=2", "--cpu-max-prime=2000", &html_opt];
    let (_, doc) = run_json(
        &[&fixed[..], args].concat(),
        &dir.path(&format!("{name}.json")),
    );
    let dom = browse(dir, &html, &["--dump-dom"]);
    (doc, html, dom)
}

/// Runs `fleetbench report JSON --html=HTML`.
fn report_html(json: &Path, html: &Path) {
    fleetbench_ok(&[
        "report",
        json.to_str().unwrap(),
        &format!("--html={}", html.display()),
    ]);
}

#[test]
fn sweep_html_opens_in_chromium_with_every_data_point() {
    let dir = Scratch::new("html-sweep");
    let (doc, html, dom) = cpu_page(&dir, "sweep", &["--threads=1,2", "--time=2"]);
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
    // The spectrum: one line per step, one point per spectrum percentile.
    let spectrum = chart(&dom, "spectrum");
    assert_eq!(texts(spectrum, "legend"), ["1 thread", "2 threads"]);
    let mut expected = 0;
    for s in steps {
        let spectrum = s["result"]["totals"]["latency_spectrum_ms"]
            .as_array()
            .unwrap();
        assert!(!spectrum.is_empty());
        expected += spectrum.len();
    }
    let all = points(&dom, "spectrum");
    assert_eq!(all.len(), expected);
    let first = &all[..expected / 2];
    assert!(first.windows(2).all(|w| w[0].1 <= w[1].1), "monotonic");
    // The configuration lists every step's thread count, not only the first one's.
    assert!(
        dom.contains("<th>threads (per step)</th><td>1, 2</td>"),
        "every step's threads"
    );
    assert!(
        dom.contains("<th>time_s</th><td>2</td>"),
        "one time for all"
    );
    check_toc(
        &dom,
        &["What ran", "Summary", "By thread count", "cpu over time"],
    );
    // Over time: a chart per figure with a line per step; each step's own charts behind
    // a picker, the first step's shown.
    assert_eq!(
        texts(chart(&dom, "s0-steps-throughput-time"), "legend"),
        ["1 thread", "2 threads"]
    );
    assert!(dom.contains("<div class=\"step\" id=\"s0-0\" data-group=\"s0\"><h3>"));
    assert!(dom.contains("<div class=\"step\" id=\"s0-1\" data-group=\"s0\" hidden=\"\"><h3>"));
    // A link to a step shows that step's charts instead of the first's.
    let linked = browse(
        &dir,
        Path::new(&format!("{}#s0-1", html.display())),
        &["--dump-dom"],
    );
    assert!(linked.contains("<div class=\"step\" id=\"s0-1\" data-group=\"s0\"><h3>"));
    assert!(linked.contains("<div class=\"step\" id=\"s0-0\" data-group=\"s0\" hidden=\"\"><h3>"));
    // Each step's run id.
    for s in steps {
        let id = s["result"]["meta"]["run_id"].as_str().unwrap();
        assert!(
            dom.contains(&format!("<p class=\"run\">run {id}, started ")),
            "{id}"
        );
    }
    check_page(&dir, &html, "sweep");
}

#[test]
fn rate_sweep_html_opens_in_chromium_with_its_throughput_latency_curve() {
    let dir = Scratch::new("html-rate-sweep");
    let (doc, html, dom) = cpu_page(
        &dir,
        "rates",
        &["--rate=200,400,800", "--threads=2", "--time=2"],
    );
    let steps = doc["steps"].as_array().unwrap();
    // Achieved against offered, and p50/p95/p99 against achieved: a point per step.
    let achieved = points(&dom, "achieved-rate");
    let curve = chart(&dom, "latency-rate");
    assert_eq!(texts(curve, "legend"), ["p50", "p95", "p99"]);
    let lat = points(&dom, "latency-rate");
    assert_eq!((achieved.len(), lat.len()), (3, 9));
    for (i, s) in steps.iter().enumerate() {
        let sum = &s["summary"];
        let tps = sum["tps"].as_f64().unwrap();
        assert_eq!(achieved[i].0, sum["rate"].as_f64().unwrap());
        assert!((achieved[i].1 - tps).abs() < 0.001);
        // Lines p50, p95, p99 in turn, each in the order of the offered rates.
        for (j, k) in ["p50", "p95", "p99"].iter().enumerate() {
            let p = lat[j * 3 + i];
            assert!((p.0 - tps).abs() < 0.001, "{p:?}");
            assert_eq!(p.1, sum["latency_ms"][*k].as_f64().unwrap());
        }
    }
    let spectrum = chart(&dom, "spectrum");
    assert_eq!(
        texts(spectrum, "legend"),
        ["offered 200/s", "offered 400/s", "offered 800/s"]
    );
    check_page(&dir, &html, "rate-sweep");
}

#[test]
fn report_turns_a_run_json_into_html_with_time_series_and_configuration() {
    let dir = Scratch::new("html-run");
    let json = dir.path("run.json");
    let html = dir.path("run.html");
    let (text, doc) = run_json(
        &words(
            "cpu --threads=2 --time=3 --local-agents=2 --cpu-max-prime=2000 --tag=purpose=html-test --tag=round=1",
        ),
        &json,
    );
    report_html(&json, &html);
    let dom = browse(&dir, &html, &["--dump-dom"]);
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
    // One interval row, saying what it is; lists as text, not JSON.
    assert!(!dom.contains("<th>interval_s</th>"), "one interval row");
    assert!(
        dom.contains("<th>report interval (s)</th><td>off (charts per 1 s)</td>"),
        "the report interval"
    );
    assert!(!dom.contains("[\"local:"), "agents as text, not JSON");

    // The header says what ran, as the JSON records it.
    let meta = &doc["meta"];
    let facts = {
        let at = dom.find("<table class=\"facts\"").expect("the header");
        &dom[at..at + dom[at..].find("</table>").unwrap()]
    };
    let fact = |k: &str| -> &str {
        let at = facts
            .find(&format!("<th>{k}</th><td>"))
            .unwrap_or_else(|| panic!("no {k} in {facts}"))
            + k.len()
            + 13;
        &facts[at..at + facts[at..].find("</td>").unwrap()]
    };
    assert_eq!(fact("test"), "cpu");
    assert_eq!(fact("run id"), meta["run_id"].as_str().unwrap());
    assert_eq!(fact("started"), meta["started_at"].as_str().unwrap());
    assert_eq!(fact("tags"), "purpose=html-test, round=1");
    let command = meta["command_line"].as_str().unwrap();
    assert!(command.contains("--tag=round=1"), "{command}");
    assert_eq!(fact("command line"), format!("<code>{command}</code>"));
    assert!(
        fact("duration").starts_with(&format!(
            "{} s measured; ended {}",
            (doc["totals"]["time_s"].as_f64().unwrap() * 10.0).round() / 10.0,
            meta["ended_at"].as_str().unwrap()
        )),
        "{}",
        fact("duration")
    );
    // Agents named as the text report and the tables name them (issue 60): two embedded
    // agents are embedded-1 and embedded-2, in the JSON, the text, the header, the
    // per-agent table and every legend, never by the host they share.
    let names: Vec<&str> = doc["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["embedded-1", "embedded-2"]);
    for n in &names {
        assert!(fact("agents").contains(&format!("<b>{n}</b>")), "{facts}");
        assert!(
            text.lines().any(|l| l.starts_with(&format!("    {n} "))),
            "{n}'s row in\n{text}"
        );
        assert!(
            dom.contains(&format!("<tr><td>{n}</td>")),
            "{n} in the per-agent table"
        );
    }
    assert!(!text.contains("127.0.0.1:"), "no loopback port in\n{text}");
    // The legends name the agents so, not by host or address.
    for id in ["agents-time", "hosts-cpu-time", "hosts-run-queue-time"] {
        assert_eq!(texts(chart(&dom, id), "legend"), names, "{id}");
    }
    // The client hosts' network: a chart when the hosts sent anything but over loopback,
    // else left out, and a line says so.
    let net_zero = doc["intervals"].as_array().unwrap().iter().all(|iv| {
        iv["agent_hosts"].as_array().unwrap().iter().all(|h| {
            h.is_null()
                || (h["net_rx_bytes_per_sec"].as_f64() == Some(0.0)
                    && h["net_tx_bytes_per_sec"].as_f64() == Some(0.0))
        })
    });
    assert_eq!(
        left_out(&dom).iter().any(|i| i == "hosts-net-time"),
        net_zero
    );
    assert_eq!(!dom.contains("id=\"hosts-net-time\""), net_zero);
    check_page(&dir, &html, "run");

    // Loopback only, for sure: the network chart is left out and a line says why.
    let mut quiet = doc.clone();
    for iv in quiet["intervals"].as_array_mut().unwrap() {
        for h in iv["agent_hosts"].as_array_mut().unwrap() {
            if h.is_object() {
                h["net_rx_bytes_per_sec"] = 0.0.into();
                h["net_tx_bytes_per_sec"] = 0.0.into();
            }
        }
    }
    let quiet_json = dir.path("quiet.json");
    let quiet_html = dir.path("quiet.html");
    std::fs::write(&quiet_json, serde_json::to_vec(&quiet).unwrap()).unwrap();
    report_html(&quiet_json, &quiet_html);
    let dom = browse(&dir, &quiet_html, &["--dump-dom"]);
    assert_eq!(attr(status(&dom), "data-ok"), "true");
    assert_eq!(left_out(&dom), ["hosts-net-time"]);
    assert!(!dom.contains("id=\"hosts-net-time\""));
    assert_eq!(
        left_out_note(&dom),
        "Left out, nothing to show: Client host network per agent over time (loopback excluded): every value is 0 (traffic over loopback is not counted)."
    );

    // A page whose script fails says so, visibly: the check is real.
    let broken = dir.path("broken.html");
    std::fs::write(
        &broken,
        std::fs::read_to_string(&html)
            .unwrap()
            .replacen("data-points=\"", "data-points=\"9", 1),
    )
    .unwrap();
    let dom = browse(&dir, &broken, &["--dump-dom"]);
    let st = status(&dom);
    assert!(st.contains("error: chart"), "{st}");
    assert!(!st.contains(" hidden"), "an error is shown: {st}");

    // A run without intervals: notes instead of empty charts.
    let mut bare = doc.clone();
    bare["intervals"] = Value::Array(Vec::new());
    let bare_json = dir.path("bare.json");
    let bare_html = dir.path("bare.html");
    std::fs::write(&bare_json, serde_json::to_vec(&bare).unwrap()).unwrap();
    report_html(&bare_json, &bare_html);
    let dom = browse(&dir, &bare_html, &["--dump-dom"]);
    assert_eq!(attr(status(&dom), "data-ok"), "true");
    // One line names the charts left out, and why.
    let note = left_out_note(&dom);
    assert!(
        note.contains("Events/s over time (merged): no data"),
        "{note}"
    );
    let ids = left_out(&dom);
    for id in ["throughput-time", "latency-time", "agents-time"] {
        assert!(ids.iter().any(|i| i == id), "{id} left out: {ids:?}");
    }
    assert!(!dom.contains("id=\"latency-time\" data-points=\"0\" xmlns"));
    assert_eq!(
        dom.matches("<svg class=\"chart\"").count(),
        1,
        "the spectrum"
    );
}

#[test]
fn scenario_html_has_a_line_per_scenario_and_a_spectrum_per_step() {
    let dir = Scratch::new("html-scenario");
    // cpu needs no database: the target is named because a scenario must name one.
    let file = dir.write(
        "scenarios.toml",
        r#"
test = "cpu"
threads = [1, 2]
time = 2
prepare = false
[options]
local-agents = 2
cpu-max-prime = 2000
[targets]
unused = "mysql://sbtest:pw@127.0.0.1:9/sbtest"
[[scenario]]
name = "small-primes-on-two-embedded-agents"
description = "the default work per event"
targets = ["unused"]
[[scenario]]
name = "larger-primes"
targets = ["unused"]
options = { cpu-max-prime = 4000 }
"#,
    );
    let html = dir.path("scenarios.html");
    let (_, doc) = scenario_json(
        &file,
        &[&format!("--html={}", html.display())],
        &dir.path("scenarios.json"),
    );
    let dom = browse(&dir, &html, &["--dump-dom"]);
    let scenarios = doc["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    // Against threads: a line per scenario, a point per step.
    let tps = chart(&dom, "tps-threads");
    assert_eq!(
        texts(tps, "legend"),
        ["small-primes-on-two-embedded-agents", "larger-primes"]
    );
    assert_eq!(points(&dom, "tps-threads").len(), 4);
    for (i, sc) in scenarios.iter().enumerate() {
        // A spectrum per scenario, a line per step.
        let spectrum = chart(&dom, &format!("s{i}-spectrum"));
        assert_eq!(texts(spectrum, "legend"), ["1 thread", "2 threads"]);
        let name = sc["name"].as_str().unwrap();
        let config = &dom[dom
            .find(&format!(">Configuration of {name}</h3>"))
            .expect("a configuration per scenario")..];
        let config = &config[..config.find("</table>").unwrap()];
        assert!(
            config.contains("<th>threads (per step)</th><td>1, 2</td>"),
            "{config}"
        );
        let prime = if i == 0 { 2000 } else { 4000 };
        assert!(
            config.contains(&format!("<th>cpu_max_prime</th><td>{prime}</td>")),
            "{config}"
        );
    }
    check_toc(
        &dom,
        &[
            "small-primes-on-two-embedded-agents over time",
            "larger-primes over time",
            "Configuration of larger-primes",
        ],
    );
    check_page(&dir, &html, "scenarios");
}

#[test]
fn an_oltp_sweep_has_tps_and_qps_on_their_own_axes() {
    // tests/fixtures/html-oltp-sweep.json: oltp_read_write, --threads=4,8,16 --time=3
    // with two embedded agents against a private MariaDB (2 tables of 1,000 rows).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("html-oltp-sweep.json");
    let dir = Scratch::new("html-oltp");
    let html = dir.path("oltp-sweep.html");
    report_html(&fixture, &html);
    let doc: Value = serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
    let dom = browse(&dir, &html, &["--dump-dom"]);
    let steps = doc["steps"].as_array().unwrap();
    let qps = points(&dom, "qps-threads");
    let tps = points(&dom, "tps-threads");
    assert_eq!((qps.len(), tps.len()), (3, 3));
    for (i, s) in steps.iter().enumerate() {
        let result = &s["result"];
        assert!((tps[i].1 - s["summary"]["tps"].as_f64().unwrap()).abs() < 0.001);
        assert!((qps[i].1 - s["summary"]["qps"].as_f64().unwrap()).abs() < 0.001);
        // Over time, TPS and QPS each on their own chart (and axis), a line each.
        let tps_time = chart(&dom, &format!("s0-{i}-throughput-time"));
        let qps_time = chart(&dom, &format!("s0-{i}-qps-time"));
        assert_eq!(texts(tps_time, "legend"), ["TPS"]);
        assert_eq!(texts(qps_time, "legend"), ["QPS"]);
        let intervals = result["intervals"].as_array().unwrap();
        let q = points(&dom, &format!("s0-{i}-qps-time"));
        assert_eq!(q.len(), intervals.len());
        for (iv, p) in intervals.iter().zip(&q) {
            let want = iv["sql"]["qps"].as_f64().unwrap();
            assert!((p.1 - want).abs() < 0.001, "{p:?} {want}");
        }
        // Each axis fits its own line: the top tick is at least half the largest value
        // (TPS on a QPS axis would sit near 0, under a top tick 20 times its size).
        for (svg, pts) in [
            (tps_time, points(&dom, &format!("s0-{i}-throughput-time"))),
            (qps_time, q),
        ] {
            let top: f64 = texts(svg, "tick y")
                .iter()
                .map(|t| t.parse::<f64>().unwrap())
                .fold(0.0, f64::max);
            let max = pts.iter().map(|p| p.1).fold(0.0, f64::max);
            assert!(
                top <= max * 1.05 && top * 2.0 >= max,
                "top tick {top}, max {max}"
            );
        }
    }
    // The spectrum has every step: the legend names each thread count in full.
    let spectrum = chart(&dom, "spectrum");
    assert_eq!(
        texts(spectrum, "legend"),
        ["4 threads", "8 threads", "16 threads"]
    );
    check_page(&dir, &html, "oltp-sweep");
}

#[test]
fn a_tpcc_sweep_shows_tpmc_each_types_percentiles_and_its_server() {
    let db = MariaDb::start();
    db.sql("CREATE DATABASE tpcc");
    let dir = Scratch::new("html-tpcc");
    let tpcc = |parts: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "tpcc",
            "-h127.0.0.1",
            &format!("-P{}", db.port()),
            "-dtpcc",
            "-usbtest",
            "-p",
            "sbtest-pw",
            "-w1",
            "--local-agents=2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(parts.iter().map(|s| s.to_string()));
        v
    };
    fleetbench_ok(&tpcc(&["prepare"]));
    let html = dir.path("tpcc.html");
    let (_, doc) = run_json(
        &tpcc(&[
            "--threads=1,2",
            "-l2",
            "--server-vars=innodb_buffer_pool_size,max_connections",
            &format!("--html={}", html.display()),
        ]),
        &dir.path("tpcc.json"),
    );
    let dom = browse(&dir, &html, &["--dump-dom"]);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    // The summary: TpmC beside TPS, as the JSON has it.
    let summary = {
        let at = dom.find("<table class=\"rows\">").unwrap();
        &dom[at..at + dom[at..].find("</table>").unwrap()]
    };
    assert!(
        summary.contains("<th>threads</th><th>TpmC</th><th>TPS</th>"),
        "{summary}"
    );
    for s in steps {
        let tpmc = s["summary"]["tpmc"].as_f64().unwrap();
        assert!(tpmc > 0.0);
        assert!(
            summary.contains(&format!(
                "<td>{}</td><td>{tpmc:.2}</td>",
                s["summary"]["threads"]
            )),
            "{tpmc} in {summary}"
        );
    }
    // Each transaction type's percentiles, per step.
    let table = {
        let at = dom
            .find("<table class=\"rows tpcc\">")
            .expect("the TPC-C table");
        &dom[at..at + dom[at..].find("</table>").unwrap()]
    };
    for name in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        assert!(table.contains(&format!(">{name}</th>")), "{name}");
    }
    for (i, s) in steps.iter().enumerate() {
        let t = &s["result"]["totals"]["tpcc"];
        let no = &t["transactions"]["new_order"];
        let row = format!(
            "<tr><td>{} thread{}</td><td>{:.2}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td>",
            i + 1,
            if i == 0 { "" } else { "s" },
            t["tpmc"].as_f64().unwrap(),
            no["count"],
            no["latency_ms"]["p95"].as_f64().unwrap(),
            no["latency_ms"]["p99"].as_f64().unwrap(),
            no["latency_ms"]["max"].as_f64().unwrap(),
        );
        assert!(table.contains(&row), "{row} in {table}");
    }
    assert!(points(&dom, "tpmc-threads").len() == 2);
    // Each step's Constraint Check, last in its row, as the JSON says it.
    for s in steps {
        let ok = s["result"]["totals"]["tpcc"]["constraints_ok"]
            .as_bool()
            .unwrap();
        let cell = format!(
            "<td class=\"check\">{}</td></tr>",
            if ok { "[OK]" } else { "[NG]" }
        );
        assert!(table.contains(&cell), "{cell} in {table}");
    }
    // A step's run alone: the page's Constraint Check says what `report FILE` prints in
    // tpcc-mysql's <Constraint Check> block, check for check.
    let step_json = dir.path("step.json");
    let run_html = dir.path("step.html");
    std::fs::write(&step_json, serde_json::to_vec(&steps[1]["result"]).unwrap()).unwrap();
    let text = fleetbench_ok(&["report", step_json.to_str().unwrap()]);
    let block = &text[text.find("<Constraint Check>").expect("the text's check")..];
    let block = &block[..block.find("<TpmC>").unwrap()];
    let said: Vec<&str> = block
        .lines()
        .filter_map(|l| l.trim_end().rsplit(' ').next())
        .filter(|v| *v == "[OK]" || *v == "[NG]")
        .collect();
    assert_eq!(said.len(), 9, "four mixes and five response times: {block}");
    report_html(&step_json, &run_html);
    let step_dom = browse(&dir, &run_html, &["--dump-dom"]);
    let rows = table_rows(&step_dom, "tpcc-check");
    assert_eq!(rows.len(), 5, "{rows:?}");
    // The mix of Payment, Order-Status, Delivery, Stock-Level, then the five response times.
    let shown: Vec<&str> = rows[1..]
        .iter()
        .map(|r| r[3].as_str())
        .chain(rows.iter().map(|r| r[5].as_str()))
        .collect();
    assert_eq!(shown, said, "{rows:?} vs {block}");
    let verdict = &step_dom[step_dom
        .find("id=\"tpcc-check-verdict\"")
        .expect("the verdict")..];
    let ok = said.iter().all(|v| *v == "[OK]");
    assert!(
        verdict.starts_with(&format!(
            "id=\"tpcc-check-verdict\">Constraint Check: {}",
            if ok {
                "every check passed [OK]"
            } else {
                "a check failed [NG]"
            }
        )),
        "{}",
        &verdict[..120]
    );
    // The header: the target with its server's version and the variables read.
    let conn = &steps[0]["result"]["totals"]["targets"][0]["connections"][0];
    let version = conn["server_version"].as_str().unwrap();
    assert!(version.contains("MariaDB"), "{conn}");
    let facts = {
        let at = dom.find("<table class=\"facts\"").unwrap();
        &dom[at..at + dom[at..].find("</table>").unwrap()]
    };
    assert!(
        facts.contains(&format!(
            "<th>target default</th><td>sbtest@127.0.0.1:{}, database tpcc",
            db.port()
        )),
        "{facts}"
    );
    assert!(
        facts.contains(&format!("; server <b>{version}</b>")),
        "{facts}"
    );
    let pool = conn["server_vars"]["innodb_buffer_pool_size"]
        .as_str()
        .unwrap();
    assert!(
        facts.contains(&format!(
            "server variables: innodb_buffer_pool_size={pool}, max_connections="
        )),
        "{facts}"
    );
    check_toc(
        &dom,
        &[
            "TPC-C response times by transaction type",
            "By thread count",
        ],
    );
    check_page(&dir, &html, "tpcc-sweep");
}

/// The client-saturation warning the text report and the JSON carry is on the page too
/// (issue 60): a cpu run that asks for it (`--warn-client-saturation`) shows it in Chromium
/// exactly when the JSON has saturated intervals, and the page of one that does not ask
/// shows none (cpu loads the client on purpose); `report FILE --html` writes the same.
#[test]
fn a_saturated_client_host_is_warned_of_on_the_page() {
    let dir = Scratch::new("html-saturated");
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = format!("--threads={}", 2 * cores);
    let common = [threads.as_str(), "--time=3", "--report-interval=1"];
    let asked = [&common[..], &["--warn-client-saturation"]].concat();
    let (doc, html, dom) = cpu_page(&dir, "asked", &asked);
    let saturated = doc["agents"].as_array().unwrap().iter().any(|a| {
        !a["host_load"]["saturated_intervals"]
            .as_array()
            .unwrap()
            .is_empty()
    });
    assert_eq!(
        doc["config"]["warn_client_saturation"], true,
        "{}",
        doc["config"]
    );
    assert_eq!(
        dom.contains("these figures may measure the client"),
        saturated,
        "the page warns exactly when the JSON has saturated intervals"
    );
    // The same page again from the JSON.
    let again = dir.path("again.html");
    report_html(&dir.path("asked.json"), &again);
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&html).unwrap()
    );
    let (_, _, quiet) = cpu_page(&dir, "quiet", &common);
    assert!(!quiet.contains("these figures may measure the client"));
}

#[test]
fn the_servers_figures_are_charted_on_the_runs_time_axis() {
    let db = MariaDb::start();
    let observer = fleetbench_tests::AgentProc::start();
    let dir = Scratch::new("html-servers");
    let data = ["oltp_read_only", "--tables=1", "--table-size=2000"];
    db.fleetbench_ok(&[&data, &["prepare"]]);
    let html = dir.path("run.html");
    let (_, doc) = db.run_json(
        &[
            &data,
            &[
                "--threads=2",
                "--time=4",
                "--report-interval=1",
                &format!("--observe=default={}", observer.addr),
                &format!("--html={}", html.display()),
            ],
        ],
        &dir.path("run.json"),
    );
    check_page(&dir, &html, "run");
    let dom = browse(&dir, &html, &["--dump-dom"]);
    // A point per interval with the server's figures, on the same time axis as TPS.
    let want: Vec<(f64, f64)> = doc["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|iv| {
            let rows = iv["servers"][0]["per_tx"]["rows_read"].as_f64()?;
            Some((iv["t_s"].as_f64()?, rows))
        })
        .collect();
    let got = points(&dom, "servers-rows-time");
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for ((gx, gy), (wx, wy)) in got.iter().zip(&want) {
        // The page keeps three decimals.
        assert!(
            (gx - wx).abs() < 0.001 && (gy - wy).abs() < 0.001,
            "{gx},{gy} vs {wx},{wy}"
        );
    }
    assert!(want.iter().all(|(_, rows)| *rows > 10.0), "{want:?}");
    let cpu = points(&dom, "servers-host-cpu-time");
    assert!(
        !cpu.is_empty() && cpu.iter().all(|(_, us)| *us > 0.0),
        "{cpu:?}"
    );
    let legend = texts(chart(&dom, "servers-host-cpu-time"), "legend");
    assert!(
        legend.iter().any(|l| l.contains(&observer.addr)),
        "{legend:?}"
    );
}

/// The rows of the table `id` in the dumped DOM, each as its cells' text.
fn table_rows(dom: &str, id: &str) -> Vec<Vec<String>> {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let table = &dom[at..at + dom[at..].find("</table>").unwrap()];
    table
        .split("<tr")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|c| c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()].to_string())
                .collect::<Vec<String>>()
        })
        .filter(|cells| !cells.is_empty())
        .collect()
}

/// The page says what the text says (issue 60): a run whose threads collide on 10 rows
/// lists its ignored errors by code as the text's line and the JSON count them; its
/// embedded agent is `embedded` in the header, the per-agent table and the legends, as in
/// the text; and the same run with a saturated client host (the JSON edited, as a real
/// saturation cannot be made to order) carries the text report's warning word for word.
#[test]
fn the_page_says_what_the_text_says() {
    let db = MariaDb::start();
    db.sql("SET GLOBAL innodb_lock_wait_timeout=1");
    let data = ["oltp_read_write", "--table-size=10", "--range-size=5"];
    db.fleetbench_ok(&[&data, &["prepare"]]);
    let dir = Scratch::new("html-says");
    let html = dir.path("run.html");
    let json = dir.path("run.json");
    let (text, doc) = db.run_json(
        &[
            &data,
            &[
                "--threads=32",
                "--time=4",
                &format!("--html={}", html.display()),
            ],
        ],
        &json,
    );
    let dom = browse(&dir, &html, &["--dump-dom"]);
    assert_eq!(attr(status(&dom), "data-ok"), "true");

    // Ignored errors: the same codes and counts as the JSON and the text's line.
    let codes = doc["totals"]["sql"]["errors_by_code"].as_object().unwrap();
    assert!(!codes.is_empty(), "32 threads on 10 rows must collide");
    let rows = table_rows(&dom, "ignored-errors");
    assert_eq!(rows.len(), codes.len(), "{rows:?} vs {codes:?}");
    let line = text
        .lines()
        .find(|l| l.starts_with("Ignored errors by code: "))
        .unwrap_or_else(|| panic!("no line of codes in\n{text}"));
    for (code, n) in codes {
        let row = rows
            .iter()
            .find(|r| r[0] == *code)
            .unwrap_or_else(|| panic!("{code} in {rows:?}"));
        assert_eq!(row[2], n.to_string(), "{row:?}");
        let named = if row[1] == "-" {
            format!("{code} x {n}")
        } else {
            format!("{code} ({}) x {n}", row[1])
        };
        assert!(line.contains(&named), "{named} in {line}");
    }
    // Commonest first, as the text lists them.
    let counts: Vec<u64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");

    // The agent: `embedded` everywhere the page names it, as the text does.
    assert_eq!(doc["agents"][0]["name"], "embedded");
    assert!(
        text.lines().any(|l| l.starts_with("    embedded ")),
        "{text}"
    );
    assert_eq!(texts(chart(&dom, "agents-time"), "legend"), ["embedded"]);
    assert!(dom.contains("<tr><td>embedded</td>"), "the per-agent table");
    assert!(dom.contains("<b>embedded</b> (host "), "the header");

    // A saturated client host: the text report's warning, on the page.
    let mut hot = doc.clone();
    let load = &mut hot["agents"][0]["host_load"];
    load["saturated_intervals"] = serde_json::json!([1, 2]);
    load["cpu_busy_pct_peak"] = 97.0.into();
    let (queue, cores) = (load["run_queue_peak"].clone(), load["cores"].clone());
    let hot_json = dir.path("hot.json");
    let hot_html = dir.path("hot.html");
    std::fs::write(&hot_json, serde_json::to_vec(&hot).unwrap()).unwrap();
    report_html(&hot_json, &hot_html);
    let dom = browse(&dir, &hot_html, &["--dump-dom"]);
    let host = doc["agents"][0]["host"].as_str().unwrap();
    let intervals = doc["intervals"].as_array().unwrap().len();
    let warning = format!(
        "<p class=\"warning\">WARNING: agent embedded: its host {host} was saturated (CPU busy 97 % at peak, run queue {queue} on {cores} cores) in 2 of {intervals} intervals (1-2): these figures may measure the client, not the server</p>"
    );
    assert!(dom.contains(&warning), "{warning} in the page");
    check_page(&dir, &html, "run");
}
