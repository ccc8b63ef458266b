//! Pages in a real browser: headless Chromium (Debian's `chromium`, which scripts/test.sh
//! installs) loads a file and dumps its DOM after the page's scripts ran, optionally with a
//! probe script injected into a copy of the page; and the values of the dumped elements'
//! attributes. A missing Chromium fails the test; it never skips.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Chromium binary on PATH.
pub fn chromium() -> String {
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
        "chromium is not installed: this test needs it (scripts/test.sh installs it; or apt-get install chromium)"
    );
}

/// The DOM of `page` once loaded, as headless Chromium dumps it (with a profile directory
/// of its own in `dir`); at most 60 s.
pub fn dump_dom(dir: &Path, page: &Path) -> String {
    let profile = dir.join("chromium-profile");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1400,2000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
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

/// The DOM of a copy of `page` (written beside it as `NAME.probed.html`) with `probe`, a
/// `<script>` element, added at the end of its body.
pub fn dump_probed(dir: &Path, page: &Path, probe: &str) -> String {
    let text = std::fs::read_to_string(page).expect("read the page");
    let probed: PathBuf = page.with_extension("probed.html");
    std::fs::write(
        &probed,
        text.replacen("</body>", &format!("{probe}</body>"), 1),
    )
    .expect("write the probed page");
    dump_dom(dir, &probed)
}

/// The value of attribute `name` in the start tag at the beginning of `tag` (text from
/// `<` on).
pub fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let tag = &tag[..tag.find('>').expect("end of tag")];
    let at = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + name.len()
        + 3;
    &tag[at..at + tag[at..].find('"').unwrap()]
}

/// The start tag (and what follows) of the element with id `id` in a dumped DOM.
pub fn element<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let at = dom.find(&format!(" id=\"{id}\""))?;
    let start = dom[..at].rfind('<')?;
    Some(&dom[start..])
}

/// Measures every chart's texts in the browser: each SVG text inside its chart's box and
/// overlapping no other text of the chart. Its findings are the text of `<pre id="probe">`
/// (empty when all is well), with the count of texts measured in `data-texts`.
pub const TEXT_PROBE: &str = r#"<script>(function () {
  var found = [], count = 0, charts = document.querySelectorAll('svg.chart');
  for (var i = 0; i < charts.length; i++) {
    var svg = charts[i], o = svg.getBoundingClientRect(), seen = [];
    var list = svg.querySelectorAll('text');
    for (var j = 0; j < list.length; j++) {
      var t = list[j], r = t.getBoundingClientRect(), name = svg.id + ': "' + t.textContent + '"';
      count++;
      if (r.width === 0 || r.height === 0) { found.push(name + ' has no size'); continue; }
      if (r.left < o.left - 0.5 || r.right > o.right + 0.5 || r.top < o.top - 0.5 || r.bottom > o.bottom + 0.5) {
        found.push(name + ' overflows its chart');
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
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.setAttribute('data-texts', String(count));
  pre.textContent = found.join('\n');
  document.body.appendChild(pre);
})();</script>"#;
