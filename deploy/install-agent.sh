#!/usr/bin/env bash
# Installs a fleetbench agent as a systemd service on this host:
#   deploy/install-agent.sh [PATH/TO/fleetbench-agent]
# copies the binary to /usr/local/bin, the unit to /etc/systemd/system, creates
# /etc/fleetbench/token (mode 0600, a fresh random token; the unit passes it to the agent
# with LoadCredential=) and /etc/fleetbench/agent.env unless they exist, then enables and
# starts the service. Prints the token file to give the coordinator.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/fleetbench-agent}
[ "$(id -u)" -eq 0 ] || { echo "install-agent: run as root" >&2; exit 1; }
[ -x "$bin" ] || { echo "install-agent: $bin is missing: cargo build --release --bins" >&2; exit 1; }
command -v systemctl >/dev/null || { echo "install-agent: systemd (systemctl) is required" >&2; exit 1; }

install -m 0755 "$bin" /usr/local/bin/fleetbench-agent
install -m 0644 deploy/fleetbench-agent.service /etc/systemd/system/fleetbench-agent.service
install -d -m 0755 /etc/fleetbench
if [ ! -e /etc/fleetbench/token ]; then
  token=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
  (umask 077; printf '%s\n' "$token" > /etc/fleetbench/token)
  echo "install-agent: new token in /etc/fleetbench/token: copy it to the coordinator (--token-file)"
fi
[ -e /etc/fleetbench/agent.env ] || install -m 0600 deploy/agent.env /etc/fleetbench/agent.env
systemctl daemon-reload
systemctl enable --now fleetbench-agent
systemctl --no-pager status fleetbench-agent | head -5
