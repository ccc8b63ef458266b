//! The source tree's shape (see `fleetbench_tests::shape`): every production function within
//! 120 lines, every production file within 1,000, and the agent's runner and event loop
//! free of workload modules. Run alone: `cargo test -p fleetbench-tests --test shape`.

use std::path::{Path, PathBuf};

#[test]
fn the_tree_keeps_its_shape() {
    // Another checkout's tree with FLEETBENCH_SHAPE_ROOT (to see what an old commit broke).
    let root = std::env::var_os("FLEETBENCH_SHAPE_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    let files = fleetbench_tests::shape::production_files(&root);
    // The walk found the tree, not an empty folder: the check cannot pass by reading nothing.
    assert!(
        files.iter().any(|f| f.ends_with("agent/src/lib.rs")) && files.len() > 100,
        "the workspace's sources were not found under {}",
        root.display()
    );
    let findings = fleetbench_tests::shape::check_tree(&root);
    assert!(
        findings.is_empty(),
        "the shape is not kept:\n{}",
        findings
            .iter()
            .map(|f| f.0.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
