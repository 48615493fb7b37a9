#!/usr/bin/env bash
# bench/terminals: what a TPC-C terminal with keying and think times costs the client.
#
# Starts one managed PostgreSQL (kept between runs, max_connections raised to a connection per
# terminal), loads WAREHOUSES warehouses, then runs `tpcc run --wait` (the specification's
# keying and think times, unscaled) with:
#   workers  terminals multiplexed on a few worker threads, a connection each: 100 and 1,000
#   socket   the same 1,000 over the server's Unix socket (--server-socket) rather than
#            loopback TCP: most of a paced terminal's client CPU is the kernel's part of its
#            statements' round trips (about 38 a transaction, each a send, a receive and a
#            wake-up from idle), which the socket makes cheaper
#   pooled   10,000 terminals sharing 64 connections
#   threads  a thread per terminal (--workers = terminals), as before: 100 and 1,000 (10,000
#            would need some 33 GB)
# and prints for each: transactions/s, the client's peak RSS over the step in all and per
# terminal (its own high-water mark from the results file: /usr/bin/time's would be the
# managed server's, a child of dbsweep, when that is larger), the client's CPU per transaction
# (user + system of the dbsweep process over the measured part, from its own sampler, on as by
# default, and the wait sampler on as by default), the terminals that fell behind their
# schedule and the 99th percentile of the queue time; then the 1,000-terminal figures as
# ratios to their targets (at most 1.00 meets them).
# Targets: at 1,000 terminals at most 150 KB of client RSS per terminal and at most 700 us of
# client CPU per transaction; 10,000 terminals over 64 connections in at most 1 GB.
#
#   bench/terminals.sh [SECONDS=60] [WAREHOUSES=10]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}; warehouses=${2:-10}
cargo build --release -q
bin=$PWD/target/release/dbsweep
dir=$(mktemp -d /tmp/dbsweep-terminals-XXXXXX)
chmod 755 "$dir" # the server runs as its own user and must reach its data
trap 'rm -rf "$dir"' EXIT
server=(--server postgres --server-datadir "$dir/pg" --keep --server-set max_connections=1100)
$bin tpcc prepare "${server[@]}" --warehouses "$warehouses" --threads 2 >/dev/null 2>&1
run() { # $1 = label, $2 = terminals, rest: options
  local label=$1 n=$2; shift 2
  $bin tpcc run "${server[@]}" --warehouses "$warehouses" \
    --wait --threads "$n" --warmup 25 --time "$secs" --report-interval 0 "$@" \
    --output "$dir/r.json" >/dev/null 2>"$dir/err" || { echo "$label $n: failed"; tail -3 "$dir/err"; return; }
  python3 - "$label" "$n" "$dir/r.json" <<'EOF'
import json, sys
label, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = json.load(open(path))
rss_kb = r["hw"]["client_peak_rss_kb"]
sv = r.get("serving") or {}
cpu = (r.get("hw") or {}).get("cpu_us_per_op", {}).get("client")
conns = sv.get("connections") or n
print(f"{label:<8}{n:>7}{conns:>7}{sv.get('workers', n):>8}{r['tps']:>9.1f}{rss_kb/1024:>10.0f}"
      f"{rss_kb/n:>10.1f}{cpu if cpu is None else round(cpu):>10}"
      f"{sv.get('clients_behind', '-'):>8}{sv.get('queue_ms', {}).get('p99', float('nan')):>10.1f}")
if label in ("workers", "socket") and n == 1000:
    print(f"  -> 1,000 terminals ({'loopback TCP' if label == 'workers' else 'Unix socket'}): "
          f"CPU {cpu / 700:.2f} of the 700 us/tx target, "
          f"RSS {rss_kb / n / 150:.2f} of the 150 KB/terminal target", file=sys.stderr)
EOF
}
printf '%-8s%7s%7s%8s%9s%10s%10s%10s%8s%10s\n' mode terms conns workers tx/s 'RSS MB' KB/term 'us/tx' behind 'queue99'
run workers 100
run workers 1000
run socket 1000 --server-socket
run pooled 10000 --connections 64
run threads 100 --workers 100
run threads 1000 --workers 1000
echo "targets: 1,000 terminals <= 150 KB/terminal and <= 700 us/tx; 10,000 over 64 connections <= 1024 MB"
