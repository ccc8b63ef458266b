#!/usr/bin/env bash
# Side-by-side OLTP benchmark: fleetbench against sysbench 1.0 (the reference) on the same
# private MariaDB server, which this script starts in a temporary directory on a free
# loopback port (never the system service on 3306) and removes again on exit.
#
#  1. prepare: times `sysbench oltp_read_write ... prepare` and fleetbench's prepare with the
#     same options (cleanup in between) and prints seconds side by side with the ratio.
#  2. run: prepares once, then for each script in SCRIPTS and thread count in THREADS runs
#     sysbench and fleetbench alternately (ROUNDS rounds of SECONDS seconds each) and prints
#     QPS (from the report's "queries: N (X per sec.)" line), the QPS ratio fb/sb, and the
#     client CPU seconds (user+sys of the client process) per 1000 queries, with a mean line
#     per (script, threads) built from the summed queries, time and CPU of its rounds.
#  3. TLS: client CPU per query over TLS against plain TCP, both tools.
#  4. rate: the open loop's scheduling overhead. For RATE_SCRIPT with RATE_THREADS, per
#     round: each tool's closed loop (its QPS is that tool's maximum), then each tool
#     with --rate at RATE_PCT % of its own maximum; prints client CPU per 1000 queries and
#     context switches per query (cs/q: where a waiting worker's sleep shows) of each, and
#     both tools' open/closed ratios (a round whose open loop ran below 98 % of its rate
#     is shown but left out of that tool's means: it was overloaded, not at RATE_PCT %),
#     and what a 20 µs sleep costs this machine in CPU
#     (each wait of an idle worker or thread costs about one). Per round, fleetbench also
#     runs with --rate at RATE_CEILING_PCT % of its closed loop's QPS: what it reaches,
#     as a share of the closed loop's QPS, is its open loop's ceiling (a RATE_PCT run
#     above it is overloaded, and left out). fleetbench's open loop runs
#     its OLTP workers as cooperative workers (FLEETBENCH_OPEN_LOOP_THREADS; set it to 0
#     in the environment to measure one thread per worker instead).
#  5. checks the targets: QPS ratio >= 1.0, fleetbench CPU/1k queries <= sysbench's,
#     fleetbench prepare no slower than sysbench's, TLS/plain <= 1.15, open/closed <= 1.1;
#     prints PASS/MISS for each.
#
# Usage: scripts/bench-oltp.sh
# Environment (defaults in brackets):
#   FLEETBENCH_BIN   directory holding the fleetbench binary [target/release; built with
#                    `cargo build --release --locked --bins -q` if the binary is absent]
#   TABLES [10]  TABLE_SIZE [100000]  PREPARE_THREADS [4]
#   SCRIPTS ["oltp_read_write oltp_point_select"]  THREADS ["4 64"]
#   ROUNDS [2]  SECONDS (or RUN_SECONDS) [10]  RAND_TYPE [special]
#   BENCH_DIR_PARENT [${TMPDIR:-/tmp}]  where the private server's directory is made
#   FB_ARGS []  extra options for fleetbench's runs, e.g. "--local-agents=2"
#   SECTIONS ["prepare run tls rate"]  which of sections 1 (prepare), 2 (run), 3 (tls)
#                    and 4 (rate) to run, e.g. SECTIONS=tls for the TLS figures alone
#   TLS_SCRIPT [oltp_point_select]  TLS_THREADS [4]  the TLS comparison's script and threads
#   RATE_SCRIPT [oltp_point_select]  RATE_THREADS [4]  RATE_PCT [80]  the open loop's script,
#                    threads and rate (% of the closed loop's QPS)
#   RATE_CEILING_PCT [150]  the rate of the ceiling run (% of the closed loop's QPS)
# Needs: sysbench (apt-get install sysbench), mariadb-server and mariadb-client.
# Exit status: 0 when every run worked (whether or not the targets are met), 1 when a run
# or a prepare failed (its command and error are printed), 2 for a setup problem.

BENCH_NAME=bench-oltp BENCH_SECONDS=10
# shellcheck source=bench-lib.sh
source "$(dirname "$0")/bench-lib.sh"

tables=${TABLES:-10}
table_size=${TABLE_SIZE:-100000}
prepare_threads=${PREPARE_THREADS:-4}
scripts=${SCRIPTS:-oltp_read_write oltp_point_select}
threads_list=${THREADS:-4 64}
rounds=${ROUNDS:-2}
rand_type=${RAND_TYPE:-special}
sections=" ${SECTIONS:-prepare run tls rate} "
password=sbtest-pw

for tool in sysbench mariadb mariadb-install-db mariadb-admin /usr/sbin/mariadbd awk; do
  command -v "$tool" >/dev/null || die "$tool is missing (apt-get install sysbench mariadb-server)"
done

# --- fleetbench binary -------------------------------------------------------------------
find_fleetbench

# --- private MariaDB server ----------------------------------------------------------------
dir=$(mktemp -d "${BENCH_DIR_PARENT:-${TMPDIR:-/tmp}}/fb-oltp.XXXXXX")
sock=$dir/sock
server_pid=

# shellcheck disable=SC2317  # called by the EXIT trap
stop_server() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    mariadb-admin --no-defaults -S "$sock" -uroot shutdown >/dev/null 2>&1 || kill "$server_pid"
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

# A free port: let the kernel pick one (python3), else probe from a random start.
free_port() {
  if command -v python3 >/dev/null &&
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null; then
    return
  fi
  local p=$((20000 + RANDOM % 30000))
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}
port=$(free_port)

mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
  --skip-test-db --user=root >"$dir/install.log" 2>&1 ||
  { cat "$dir/install.log" >&2; die "mariadb-install-db failed"; }
# TLS offered (not required) when openssl can make a certificate, for section 3.
tls_opts=()
if command -v openssl >/dev/null &&
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$dir/server.key" -out "$dir/server.pem" >/dev/null 2>&1; then
  # The certificate is its own CA: sysbench presents it as its client certificate too.
  tls_opts=(--ssl-cert="$dir/server.pem" --ssl-key="$dir/server.key" --ssl-ca="$dir/server.pem")
fi
/usr/sbin/mariadbd --no-defaults --datadir="$dir/data" --socket="$sock" --port="$port" "${tls_opts[@]}" \
  --bind-address=127.0.0.1 --tmpdir="$dir" --skip-log-bin --innodb-buffer-pool-size=512M \
  --max-connections=1000 --user=root --log-error="$dir/server.err" >/dev/null 2>&1 &
server_pid=$!

sql() { mariadb --no-defaults -S "$sock" -uroot "$@"; }
for i in $(seq 300); do
  sql -e 'select 1' >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$dir/server.err" >&2; die "mariadbd exited"; }
  [[ $i -lt 300 ]] || { cat "$dir/server.err" >&2; die "mariadbd did not answer in 30 s"; }
  sleep 0.1
done
sql <<SQL
CREATE DATABASE sbtest;
CREATE USER 'sbtest'@'%' IDENTIFIED BY '$password';
CREATE USER 'sbtest'@'localhost' IDENTIFIED BY '$password';
GRANT ALL PRIVILEGES ON *.* TO 'sbtest'@'%';
GRANT ALL PRIVILEGES ON *.* TO 'sbtest'@'localhost';
SQL

# --- helpers ---------------------------------------------------------------------------------
conn=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=sbtest
  --mysql-password="$password" --mysql-db=sbtest)
cleanup_tables() { sysbench oltp_read_write --tables="$tables" "${conn[@]}" cleanup >/dev/null; }

echo "fleetbench: $fleetbench ($("$fleetbench" --version))  sysbench: $(sysbench --version)"
echo "server: $(/usr/sbin/mariadbd --version | awk '{print $3}') on 127.0.0.1:$port, data in $dir"
echo "machine: $(nproc) cores; CPU busy before start: $(cpu_busy) (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo

# --- 1. prepare ------------------------------------------------------------------------------
prep=(--tables="$tables" --table-size="$table_size" --threads="$prepare_threads" "${conn[@]}")
sb_prep='' fb_prep=''
if section prepare; then
echo "== prepare: $tables tables x $table_size rows, $prepare_threads threads"
if measure "$dir/prep-sb" sysbench oltp_read_write "${prep[@]}" prepare; then sb_prep=$(wall "$dir/prep-sb"); fi
cleanup_tables
if measure "$dir/prep-fb" "$fleetbench" oltp_read_write "${prep[@]}" prepare; then fb_prep=$(wall "$dir/prep-fb"); fi
printf '%-12s %12s %12s %10s\n' "" sysbench fleetbench "ratio fb/sb"
printf '%-12s %12s %12s %10s\n' "wall s" "${sb_prep:-ERR}" "${fb_prep:-ERR}" \
  "$([[ -n $sb_prep && -n $fb_prep ]] && calc "$fb_prep / $sb_prep" || echo -)"
printf '%-12s %12s %12s\n' "client CPU s" "$([[ -n $sb_prep ]] && cpu "$dir/prep-sb" || echo -)" \
  "$([[ -n $fb_prep ]] && cpu "$dir/prep-fb" || echo -)"
echo
fi

# --- 2. runs ---------------------------------------------------------------------------------
# The run uses one set of tables prepared by sysbench, whatever happened above.
cleanup_tables
sysbench oltp_read_write --tables="$tables" --table-size="$table_size" \
  --threads="$prepare_threads" "${conn[@]}" prepare >/dev/null

verdicts=()
if section run; then
echo "== run: ${run_secs} s per run, $rounds rounds, --rand-type=$rand_type; CPU = client user+sys s per 1000 queries"
row() { printf '%-18s %7s %5s %12s %12s %9s %11s %11s\n' "$@"; }
row script threads round "sb QPS" "fb QPS" "QPS fb/sb" "sb CPU/1kq" "fb CPU/1kq"
for script in $scripts; do
  for threads in $threads_list; do
    # sums over the rounds that worked for both: queries, seconds, CPU seconds
    sq=0 st=0 sc=0 fq=0 ft=0 fc=0 ok=0
    for r in $(seq "$rounds"); do
      opts=(--threads="$threads" --time="$run_secs" --tables="$tables" --table-size="$table_size"
        --rand-type="$rand_type" "${conn[@]}")
      s=$dir/run-sb-$script-$threads-$r f=$dir/run-fb-$script-$threads-$r
      s_ok=0 f_ok=0
      sysbench_run "$s" sysbench "$script" "${opts[@]}" run && s_ok=1
      # shellcheck disable=SC2086 # FB_ARGS is a list of extra options on purpose
      sysbench_run "$f" "$fleetbench" "$script" "${opts[@]}" ${FB_ARGS:-} run && f_ok=1
      sb_qps=ERR fb_qps=ERR ratio=- sb_cpu=- fb_cpu=-
      if [[ $s_ok == 1 ]]; then sb_qps=$(qps "$s"); sb_cpu=$(cpu_per_k "$(cpu "$s")" "$(queries "$s")"); fi
      if [[ $f_ok == 1 ]]; then fb_qps=$(qps "$f"); fb_cpu=$(cpu_per_k "$(cpu "$f")" "$(queries "$f")"); fi
      if [[ $s_ok == 1 && $f_ok == 1 ]]; then
        ratio=$(calc "$fb_qps / $sb_qps")
        ok=$((ok + 1))
        sq=$(calc "$sq + $(queries "$s")" 0) st=$(calc "$st + $(total_time "$s")" 4)
        sc=$(calc "$sc + $(cpu "$s")" 2)
        fq=$(calc "$fq + $(queries "$f")" 0) ft=$(calc "$ft + $(total_time "$f")" 4)
        fc=$(calc "$fc + $(cpu "$f")" 2)
      fi
      row "$script" "$threads" "$r" "$sb_qps" "$fb_qps" "$ratio" "$sb_cpu" "$fb_cpu"
    done
    if [[ $ok -gt 0 ]]; then
      m_sb=$(calc "$sq / $st" 2) m_fb=$(calc "$fq / $ft" 2)
      m_ratio=$(calc "$m_fb / $m_sb") m_sc=$(cpu_per_k "$sc" "$sq") m_fc=$(cpu_per_k "$fc" "$fq")
      row "$script" "$threads" mean "$m_sb" "$m_fb" "$m_ratio" "$m_sc" "$m_fc"
      v_qps=MISS v_cpu=MISS
      [[ $(calc "$m_ratio >= 1.0" 0) == 1 ]] && v_qps=PASS
      [[ $(calc "$m_fc <= $m_sc" 0) == 1 ]] && v_cpu=PASS
      verdicts+=("$(printf '%-18s %3s thr: QPS ratio %s >= 1.0: %s; fb CPU/1kq %s <= sb %s: %s' \
        "$script" "$threads" "$m_ratio" "$v_qps" "$m_fc" "$m_sc" "$v_cpu")")
    else
      row "$script" "$threads" mean - - - - -
      verdicts+=("$(printf '%-18s %3s thr: no round where both worked' "$script" "$threads")")
    fi
  done
done
fi
# --- 3. TLS --------------------------------------------------------------------------------
# Client CPU per query over TLS against plain TCP, same script and threads, both tools.
tls_verdict=""
if ! section tls; then
  :
elif [[ ${#tls_opts[@]} -gt 0 ]]; then
  tls_script=${TLS_SCRIPT:-oltp_point_select} tls_threads=${TLS_THREADS:-4}
  echo "== TLS: $tls_script, $tls_threads threads, ${run_secs} s per run, $rounds rounds; CPU = client user+sys s per 1000 queries"
  trow() { printf '%-12s %-6s %12s %11s\n' "$@"; }
  trow tool conn QPS "CPU/1kq"
  # sysbench 1.0 takes its TLS files from its working directory (cacert.pem,
  # client-cert.pem, client-key.pem); the server asks for no client certificate.
  mkdir -p "$dir/sbtls"
  cp "$dir/server.pem" "$dir/sbtls/cacert.pem"
  cp "$dir/server.pem" "$dir/sbtls/client-cert.pem"
  cp "$dir/server.key" "$dir/sbtls/client-key.pem"
  declare -A tq=() tc=()
  for r in $(seq "$rounds"); do
    for tool in sysbench fleetbench; do
      declare -A rk=()
      for mode in plain tls; do
        bin=(env -C "$dir/sbtls" sysbench); [[ $tool == fleetbench ]] && bin=("$fleetbench")
        extra=(); [[ $mode == tls ]] && extra=(--mysql-ssl=on)
        o=$dir/tls-$tool-$mode-$r
        if sysbench_run "$o" "${bin[@]}" "$tls_script" --threads="$tls_threads" --time="$run_secs" \
          --tables="$tables" --table-size="$table_size" --rand-type="$rand_type" "${conn[@]}" "${extra[@]}" run; then
          tq[$tool-$mode]=$(calc "${tq[$tool-$mode]:-0} + $(queries "$o")" 0)
          tc[$tool-$mode]=$(calc "${tc[$tool-$mode]:-0} + $(cpu "$o")" 2)
          rk[$mode]=$(cpu_per_k "$(cpu "$o")" "$(queries "$o")")
          trow "$tool" "$mode" "$(qps "$o")" "${rk[$mode]}"
        fi
      done
      # this round's TLS/plain ratio (the mean line below sums the rounds instead)
      if [[ -n ${rk[plain]:-} && -n ${rk[tls]:-} ]]; then
        trow "$tool" ratio "" "$(calc "${rk[tls]} / ${rk[plain]}")"
      fi
      unset rk
    done
  done
  for tool in sysbench fleetbench; do
    if [[ -n ${tq[$tool-plain]:-} && -n ${tq[$tool-tls]:-} ]]; then
      p=$(cpu_per_k "${tc[$tool-plain]}" "${tq[$tool-plain]}") t=$(cpu_per_k "${tc[$tool-tls]}" "${tq[$tool-tls]}")
      ratio=$(calc "$t / $p")
      trow "$tool" mean "" "plain $p, TLS $t: TLS/plain $ratio"
      if [[ $tool == fleetbench ]]; then
        v=MISS; [[ $(calc "$ratio <= 1.15" 0) == 1 ]] && v=PASS
        tls_verdict="TLS: fleetbench CPU/1kq TLS/plain $ratio <= 1.15: $v"
      fi
    fi
  done
else
  echo "== TLS: skipped (openssl is missing, no certificate for the server)"
fi
# --- 4. rate -------------------------------------------------------------------------------
# Client CPU per query of the open loop (--rate at RATE_PCT % of the closed loop's QPS)
# against the closed loop; sysbench's open loop at the same rate for reference.
rate_verdict=""
if section rate; then
  rate_script=${RATE_SCRIPT:-oltp_point_select} rate_threads=${RATE_THREADS:-4} rate_pct=${RATE_PCT:-80}
  echo "== rate: $rate_script, $rate_threads threads, --rate at $rate_pct % of the closed loop's QPS, ${run_secs} s per run, $rounds rounds"
  # What an idle CPU does decides what a wake-up from it costs, and so the open loop's
  # figure at partial load; print it so that runs on different machines compare.
  idle_policy=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo unknown)
  [[ -r /sys/module/haltpoll/parameters/guest_halt_poll_ns ]] &&
    idle_policy="$idle_policy, guest_halt_poll_ns $(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns)"
  echo "cpuidle driver: $idle_policy"
  rrow() { printf '%-26s %5s %12s %11s %8s\n' "$@"; }
  rrow run round QPS "CPU/1kq" "cs/q"
  declare -A rq=() rc=() rs=()
  # one row: rate_row LABEL OUT
  rate_row() {
    local n w
    n=$(queries "$2") w=$(switches "$2")
    rrow "$1" "$r" "$(qps "$2")" "$(cpu_per_k "$(cpu "$2")" "$n")" "$([[ -n $w ]] && calc "$w / $n" 2 || echo -)"
  }
  # adds a run to the sums of queries, CPU and context switches of KIND: rate_add KIND OUT
  rate_add() {
    local w
    w=$(switches "$2")
    rq[$1]=$(calc "${rq[$1]:-0} + $(queries "$2")" 0) rc[$1]=$(calc "${rc[$1]:-0} + $(cpu "$2")" 2)
    rs[$1]=$(calc "${rs[$1]:-0} + ${w:-0}" 0)
  }
  left_out=0 ceil_q=0 ceil_c=0 ceiling_pct=${RATE_CEILING_PCT:-150}
  # mean CPU per 1000 queries and context switches per query of KIND
  rate_means() {
    local cs=-
    [[ ${rs[$1]} != 0 ]] && cs=$(calc "${rs[$1]} / ${rq[$1]}" 2)
    echo "CPU/1kq $(cpu_per_k "${rc[$1]}" "${rq[$1]}"), cs/q $cs"
  }
  for r in $(seq "$rounds"); do
    declare -A closed_out=()
    ropts=(--threads="$rate_threads" --time="$run_secs" --tables="$tables" --table-size="$table_size"
      --rand-type="$rand_type" "${conn[@]}")
    o=$dir/rate-closed-$r
    sysbench_run "$o" "$fleetbench" "$rate_script" "${ropts[@]}" run || continue
    # One query per event for point selects; the rate is in events (transactions).
    tps=$(awk '/^ *transactions:/ {gsub(/[(]/, "", $3); print $3}' "$o.out")
    [[ -n $tps ]] || tps=$(qps "$o")
    rate=$(calc "$tps * $rate_pct / 100" 0)
    rate_row "fleetbench closed loop" "$o"
    closed_out[fleetbench]=$o
    # sysbench's closed loop too: its own open/closed ratio shows what the lighter load
    # costs any client (the kernel's wake-ups of idle CPUs), apart from the scheduling.
    o=$dir/rate-sbclosed-$r
    sbrate=$rate
    if sysbench_run "$o" sysbench "$rate_script" "${ropts[@]}" run; then
      # sysbench's open loop at the same share of its own maximum: a rate above what it
      # can reach fills its event queue, and it gives up.
      sbtps=$(awk '/^ *transactions:/ {gsub(/[(]/, "", $3); print $3}' "$o.out")
      [[ -n $sbtps ]] && sbrate=$(calc "$sbtps * $rate_pct / 100" 0)
      rate_row "sysbench closed loop" "$o"
      closed_out[sysbench]=$o
    fi
    for tool in fleetbench sysbench; do
      bin=("$fleetbench") trate=$rate; [[ $tool == sysbench ]] && bin=(sysbench) trate=$sbrate
      o=$dir/rate-$tool-$r
      if sysbench_run "$o" "${bin[@]}" "$rate_script" "${ropts[@]}" --rate="$trate" run; then
        rate_row "$tool --rate=$trate" "$o"
        # A round whose rate the open loop could not keep (the machine slowed down after
        # the closed loop ran) measured an overloaded client, not one at RATE_PCT % of its
        # maximum: it is shown, and left out of both of that tool's means.
        if [[ $(calc "$(qps "$o") >= 0.98 * $trate" 0) == 1 ]]; then
          rate_add "$tool" "$o"
          ckind=closed; [[ $tool == sysbench ]] && ckind=sbclosed
          [[ -n ${closed_out[$tool]:-} ]] && rate_add "$ckind" "${closed_out[$tool]}"
        else
          echo "  (round $r: $tool ran $(qps "$o") of the $trate/s asked for: left out of its means)"
          left_out=$((left_out + 1))
        fi
      fi
    done
    # The open loop's ceiling: asked for more than the closed loop ran, it runs flat out,
    # and what it reaches against the closed loop says whether RATE_PCT % is in its reach.
    # fleetbench only: sysbench stops with "event queue is full" above its maximum.
    crate=$(calc "$tps * $ceiling_pct / 100" 0)
    o=$dir/rate-ceiling-$r
    if sysbench_run "$o" "$fleetbench" "$rate_script" "${ropts[@]}" --rate="$crate" run; then
      rate_row "ceiling: fb --rate=$crate" "$o"
      ceil_q=$(calc "$ceil_q + $(qps "$o")" 2) ceil_c=$(calc "$ceil_c + $(qps "${closed_out[fleetbench]}")" 2)
    fi
  done
  if [[ $ceil_c != 0 ]]; then
    echo "open-loop ceiling (--rate at $ceiling_pct % of the closed loop's QPS): fleetbench ran $(calc "$ceil_q / $ceil_c") of its closed loop's QPS (mean over the rounds)"
  fi
  if [[ -n ${rq[closed]:-} && -n ${rq[fleetbench]:-} ]]; then
    c=$(cpu_per_k "${rc[closed]}" "${rq[closed]}") op=$(cpu_per_k "${rc[fleetbench]}" "${rq[fleetbench]}")
    ratio=$(calc "$op / $c")
    echo "fleetbench closed: $(rate_means closed); open: $(rate_means fleetbench); CPU open/closed $ratio"
    if [[ -n ${rq[sysbench]:-} && -n ${rq[sbclosed]:-} ]]; then
      sc=$(cpu_per_k "${rc[sbclosed]}" "${rq[sbclosed]}") so=$(cpu_per_k "${rc[sysbench]}" "${rq[sysbench]}")
      echo "sysbench   closed: $(rate_means sbclosed); open: $(rate_means sysbench); CPU open/closed $(calc "$so / $sc")"
    fi
    # The open loop's own addition is one sleep per wait for an arrival (its extra context
    # switches). What a short sleep costs this machine in CPU, times those switches, is
    # the part of the difference the kernel and hypervisor charge for waiting.
    # Switch counts mean /usr/bin/time is there; this is not one of the runs, so its failure
    # leaves the exit status alone.
    if [[ ${rs[closed]} != 0 && ${rs[fleetbench]} != 0 ]] && perl -MTime::HiRes -e 1 2>/dev/null &&
      /usr/bin/time -f '%e %U %S %w %c' -o "$dir/sleeps.time" \
        perl -MTime::HiRes=nanosleep -e 'nanosleep(20000) for 1..50000'; then
      per_sleep=$(calc "$(cpu "$dir/sleeps") * 1000000 / 50000" 1)
      extra_cs=$(calc "${rs[fleetbench]} / ${rq[fleetbench]} - ${rs[closed]} / ${rq[closed]}" 3)
      echo "a 20 µs sleep costs $per_sleep µs of CPU here; measured difference open - closed $(calc "($op - $c) * 1000" 2) µs per query"
      if [[ $(calc "$extra_cs > 0" 0) == 1 ]]; then
        # A worker thread sleeps only when it takes an arrival that has not come yet; each
        # such wake costs about one short sleep.
        echo "open loop's extra switches $extra_cs per query x $per_sleep µs = $(calc "$extra_cs * $per_sleep" 2) µs per query"
      else
        # Cooperative workers: one thread waits for arrivals and replies together, so it
        # switches less than a closed loop's thread per connection; what is left is what
        # each of its waits costs on a CPU left idle at partial load.
        echo "open loop switches $(calc "0 - $extra_cs" 3) per query less than the closed loop (cooperative workers)"
      fi
    fi
    v=MISS; [[ $(calc "$ratio <= 1.1" 0) == 1 ]] && v=PASS
    rate_verdict="rate: fleetbench CPU/1kq open/closed $ratio <= 1.1: $v"
  else
    rate_verdict="rate: not measured (no round in which fleetbench's open loop kept its rate)"
  fi
  [[ $left_out == 0 ]] || echo "($left_out open-loop runs left out of the means: rate not kept)"
fi
cleanup_tables
echo

# --- 5. targets -------------------------------------------------------------------------------
echo "== targets"
if ! section prepare; then
  :
elif [[ -n $sb_prep && -n $fb_prep ]]; then
  v=MISS; [[ $(calc "$fb_prep <= $sb_prep" 0) == 1 ]] && v=PASS
  echo "prepare: fleetbench ${fb_prep} s <= sysbench ${sb_prep} s: $v"
else
  echo "prepare: not compared (a prepare failed)"
fi
[[ ${#verdicts[@]} -gt 0 ]] && printf '%s\n' "${verdicts[@]}"
[[ -n $tls_verdict ]] && echo "$tls_verdict"
[[ -n $rate_verdict ]] && echo "$rate_verdict"
echo "CPU busy after the runs: $(cpu_busy); load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "($(nproc) cores; client and server share them: a busy machine lowers every figure above)"
exit "$failed"
