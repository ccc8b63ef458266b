#!/usr/bin/env bash
# fleetbench's test entry point (the README's test command; .ci/run calls exactly this).
# Checks formatting and lints, builds the binaries the end-to-end tests start as real
# processes, then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "test.sh: cargo is missing: install Rust (https://rustup.rs)" >&2; exit 1; }
command -v cc >/dev/null || { echo "test.sh: a C compiler (gcc) is needed to build dependencies: apt-get install gcc" >&2; exit 1; }

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo build --workspace --bins --locked
cargo test --workspace --locked
