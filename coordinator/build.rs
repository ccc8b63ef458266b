//! Records the git commit fleetbench is built from (FLEETBENCH_COMMIT, shown in every
//! result's meta); nothing when the source is not a git checkout or git is missing.

use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let git = root.join(".git");
    // A commit moves the branch's ref (or packed-refs); a checkout moves HEAD.
    let mut watched = false;
    for p in ["HEAD", "refs/heads", "packed-refs"] {
        let path = git.join(p);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
            watched = true;
        }
    }
    if !watched {
        println!("cargo:rerun-if-changed=build.rs");
    }
    let commit = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit()));
    if let Some(c) = commit {
        println!("cargo:rustc-env=FLEETBENCH_COMMIT={c}");
    }
}
