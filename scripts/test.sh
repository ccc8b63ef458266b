#!/usr/bin/env bash
# fleetbench's test entry point (the README's test command; .ci/run calls exactly this).
# Checks formatting, lints and the source tree's shape, builds the binaries the end-to-end tests start as real
# processes, then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "test.sh: cargo is missing: install Rust (https://rustup.rs)" >&2; exit 1; }
command -v cc >/dev/null || { echo "test.sh: a C compiler (gcc) is needed to build dependencies: apt-get install gcc" >&2; exit 1; }

# make builds LuaJIT (the embedded Lua of scripts).
# The end-to-end tests start private MariaDB and PostgreSQL servers (never the system
# services), so the server binaries must be installed (postgresql-contrib brings
# pg_stat_statements, which the tests count statements with; pgbench comes with postgresql);
# the system services are left alone (not started here).
# sysbench 1.0 is the compatibility reference some tests compare against, side by side;
# systemd-analyze checks the agent's unit file; headless Chromium opens the HTML report;
# HAProxy is the proxy host of the lab (deploy/lab.sh) that tests/tests/lab.rs runs through;
# Python (with venv) runs HdrHistogram's own reader on --hlog's logs (tests/tests/hlog.rs);
# Prometheus, its promtool and the Pushgateway take --metrics-listen's and --metrics-push's
# figures (tests/tests/prometheus.rs; the tests start their own on free ports).
have_mariadbd() { command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]; }
have_postgres() { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && { command -v pgbench >/dev/null || compgen -G '/usr/lib/postgresql/*/bin/pgbench' >/dev/null; }; }
have_venv() { command -v python3 >/dev/null && python3 -c 'import ensurepip, venv' 2>/dev/null; }
have_all() { command -v make >/dev/null && have_mariadbd && have_postgres && command -v sysbench >/dev/null && command -v systemd-analyze >/dev/null && command -v chromium >/dev/null && { command -v haproxy >/dev/null || [ -x /usr/sbin/haproxy ]; } && have_venv && [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ] && [ -x /usr/bin/prometheus-pushgateway ]; }
if ! have_all; then
    echo "test.sh: make, mariadbd, PostgreSQL (initdb, pgbench), sysbench, systemd-analyze, chromium, haproxy, python3-venv or prometheus is missing: installing make, mariadb-server, postgresql, postgresql-contrib, sysbench, systemd, chromium, haproxy, python3-venv, prometheus and prometheus-pushgateway" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
    # policy-rc.d answering 101 keeps the packages from starting the system services.
    policy_rc=""
    if [ ! -e /usr/sbin/policy-rc.d ] && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
        policy_rc=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy_rc" >/dev/null && $sudo chmod +x "$policy_rc" || policy_rc=""
    fi
    { $sudo apt-get update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends make mariadb-server postgresql postgresql-contrib sysbench systemd chromium haproxy python3-venv prometheus prometheus-pushgateway; } >&2 || true
    if [ -n "$policy_rc" ]; then $sudo rm -f "$policy_rc"; fi
    have_all || { echo "test.sh: make, mariadbd, PostgreSQL (initdb, pgbench), sysbench, systemd-analyze, chromium, haproxy, python3-venv or prometheus is missing and could not be installed: apt-get install make mariadb-server postgresql postgresql-contrib sysbench systemd chromium haproxy python3-venv prometheus prometheus-pushgateway" >&2; exit 1; }
fi

# HdrHistogram's Python library (PyPI's hdrhistogram) in a venv of its own under target/.
pyenv=target/pyenv
if ! "$pyenv/bin/python3" -c 'import hdrh.log' 2>/dev/null; then
    echo "test.sh: installing Python's hdrhistogram into $pyenv" >&2
    rm -rf "$pyenv"
    python3 -m venv "$pyenv"
    # The system's CA bundle, so that a registry behind a local CA is reached too.
    cert=()
    if [ -z "${PIP_CERT:-}" ] && [ -f /etc/ssl/certs/ca-certificates.crt ]; then cert=(--cert /etc/ssl/certs/ca-certificates.crt); fi
    "$pyenv/bin/pip" install -q "${cert[@]}" hdrhistogram >&2 || { echo "test.sh: could not install Python's hdrhistogram (pip install hdrhistogram)" >&2; exit 1; }
fi
export FLEETBENCH_HDR_PYTHON="$PWD/$pyenv/bin/python3"
# Every run is recorded in the catalog under XDG_DATA_HOME (docs/catalog.md): the tests'
# runs go to a throwaway one, not to the user's.
export XDG_DATA_HOME="$PWD/target/test-data"
rm -rf "$XDG_DATA_HOME"
unset FLEETBENCH_CATALOG

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# The tree's shape (docs/architecture.md): functions within 120 lines, files within 1,000,
# the agent's runner free of workload modules. First, so that it fails fast.
cargo test --locked -p fleetbench-tests --test shape
cargo build --workspace --bins --locked
cargo test --workspace --locked
