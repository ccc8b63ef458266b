#!/usr/bin/env bash
# Installs a fleetbench agent as a systemd service on this host:
#   deploy/install-agent.sh [--token-file FILE] [--no-start] [PATH/TO/fleetbench-agent]
# copies the binary to /usr/local/bin, the unit to /etc/systemd/system and
# /etc/fleetbench/agent.env (unless there), and the token to /etc/fleetbench/token (mode
# 0600; the unit passes it to the agent with LoadCredential=), then enables and starts the
# service. The token: FILE's with --token-file (one token for a whole fleet: make it once,
# copy it to every host and give the same file to the coordinator), else the one already
# installed, else a fresh random one. Ends with the line saying which token the coordinator
# needs. --no-start leaves systemd alone (an image being built); FLEETBENCH_INSTALL_ROOT=DIR
# installs under DIR instead of / (and implies --no-start).
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "install-agent: $*" >&2; exit 1; }

token_file="" start=yes bin=""
while [ $# -gt 0 ]; do
  case $1 in
    --token-file) [ $# -ge 2 ] || die "--token-file needs a file"; token_file=$2; shift 2 ;;
    --token-file=*) token_file=${1#*=}; shift ;;
    --no-start) start=no; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (--token-file FILE, --no-start)" ;;
    *) [ -z "$bin" ] || die "one agent binary at most"; bin=$1; shift ;;
  esac
done
bin=${bin:-target/release/fleetbench-agent}
root=${FLEETBENCH_INSTALL_ROOT:-}
[ -z "$root" ] || start=no
[ -n "$root" ] || [ "$(id -u)" -eq 0 ] || die "run as root"
[ -x "$bin" ] || die "$bin is missing: cargo build --release --bins"
[ "$start" = no ] || command -v systemctl >/dev/null || die "systemd (systemctl) is required (or --no-start)"

# The fleet's token, checked before anything is installed: its first line, printable
# characters without spaces, as the agent and the coordinator read it.
token=""
if [ -n "$token_file" ]; then
  [ -f "$token_file" ] && [ -r "$token_file" ] || die "--token-file $token_file: not a readable file"
  [ "$(stat -c %s "$token_file")" -le 4097 ] || die "--token-file $token_file: larger than a token (4 KiB)"
  token=$(head -n 1 "$token_file" | tr -d '\r')
  [[ -n $token && $token =~ ^[[:graph:]]+$ ]] ||
    die "--token-file $token_file: a token is one line of printable characters without spaces"
  [ ${#token} -ge 16 ] || echo "install-agent: warning: the token in $token_file is short (${#token} characters): anyone who guesses it can load your databases" >&2
fi

install -d -m 0755 "$root/usr/local/bin" "$root/etc/systemd/system" "$root/etc/fleetbench"
install -m 0755 "$bin" "$root/usr/local/bin/fleetbench-agent"
install -m 0644 deploy/fleetbench-agent.service "$root/etc/systemd/system/fleetbench-agent.service"
dest=$root/etc/fleetbench/token
if [ -n "$token" ]; then
  if [ -e "$dest" ] && [ "$(head -n 1 "$dest")" != "$token" ]; then
    echo "install-agent: replacing the token in $dest with $token_file's" >&2
  fi
  (umask 077; printf '%s\n' "$token" > "$dest.new" && mv "$dest.new" "$dest")
  said="the coordinator needs the fleet's token: --token-file $token_file (installed as $dest)"
elif [ -e "$dest" ]; then
  said="the coordinator needs this host's token: --token-file with a copy of $dest (kept as it was)"
else
  (umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$dest")
  said="the coordinator needs this host's new token: copy $dest to it (--token-file); for several hosts, make one token and install each with --token-file"
fi
[ -e "$root/etc/fleetbench/agent.env" ] || install -m 0600 deploy/agent.env "$root/etc/fleetbench/agent.env"
if [ "$start" = yes ]; then
  systemctl daemon-reload
  # A new token or binary takes effect on a restart.
  systemctl enable fleetbench-agent
  systemctl restart fleetbench-agent
  systemctl --no-pager status fleetbench-agent | head -5
fi
echo "install-agent: $said"
