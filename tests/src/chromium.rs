//! Headless Chromium for the tests that open an HTML page (Debian's `chromium`, which
//! `scripts/test.sh` installs): the page's DOM after its scripts ran. A missing Chromium
//! fails the test with what to install; it never skips.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser's command name, or a panic saying how to install it.
pub fn binary() -> String {
    for name in ["chromium", "chromium-browser"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if found {
            return name.to_string();
        }
    }
    panic!(
        "chromium is not installed: the HTML tests need it (scripts/test.sh installs it; or apt-get install chromium)"
    );
}

/// The DOM of `page` (a file) once loaded, with a profile directory of its own in
/// `scratch`; at most 60 s.
pub fn dump_dom(scratch: &Path, page: &Path) -> String {
    let mut child = Command::new(binary())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join("chromium-profile").display()
        ))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    // Read while the browser writes: a page larger than the pipe would block it otherwise.
    let mut stdout = child.stdout.take().expect("chromium's stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
        out
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "chromium did not finish with {} within 60 s",
                page.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = reader.join().expect("the reader");
    assert!(status.success(), "chromium failed: {status}");
    String::from_utf8_lossy(&out).into_owned()
}
