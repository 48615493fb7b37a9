#!/usr/bin/env bash
# bench/sqlite_writers: how SQLite's writers scale from 1 to 2 clients under each way of
# waiting for its write lock, in one run.
#
# Runs the quick plan's write steps (read-write, update-index, insert) on embedded SQLite,
# 1 client then 2, for each `lock_wait` of the target URL:
#   writer   fifo's turns, and the writers of this process write on one connection handed over
#            with the turn (the default)
#   fifo     writers of this process take turns, handed to the next writer at every commit,
#            each on its own connection
#   batch    turns the holder may take again until a waiter has waited a few turns' length
#   poll     no turns: the busy handler retries every 20 us (200 times), then every ms
#   timeout  no turns: SQLite's own busy timeout (sleeps of up to 100 ms)
# and prints for each step and way: events/s at 1 and 2 clients, client CPU us per event
# (the run's own sampler), and the ratios 2 clients / 1 client of both, with the busy waits
# and their time at 2 clients. Rounds rotate the ways' order; the ratios are medians.
# Targets (issue 41): at 2 clients >= 0.9x the throughput of 1, <= 1.3x its CPU per event.
#
#   bench/sqlite_writers.sh [SECONDS=8] [ROUNDS=2] [WAYS="writer fifo batch poll timeout"]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-8}; rounds=${2:-2}; ways=${3:-writer fifo batch poll timeout}
cargo build --release -q
bin=$PWD/target/release/dbsweep
dir=$(mktemp -d /tmp/dbsweep-writers-XXXXXX)
trap 'rm -rf "$dir"' EXIT
$bin prepare oltp_read_write --target "sqlite://$dir/base.db" --tables 1 --table-size 100000 >/dev/null
steps=(oltp_read_write oltp_update_index oltp_insert)
for round in $(seq 1 "$rounds"); do
  # Rotate the order of the ways from round to round, so that no way always runs first.
  set -- $ways
  for _ in $(seq 2 "$round"); do set -- "${@:2}" "$1"; done
  for way in "$@"; do
    for step in "${steps[@]}"; do
      for clients in 1 2; do
        # Each run on a fresh copy: inserts grow the table.
        cp "$dir/base.db" "$dir/run.db"
        $bin run "$step" --target "sqlite://$dir/run.db?lock_wait=$way" --threads "$clients" \
          --tables 1 --table-size 100000 \
          --time "$secs" --report-interval 0 --output "$dir/$way-$step-$clients-$round.json" \
          >/dev/null 2>"$dir/err" || { echo "$way $step $clients: failed"; tail -3 "$dir/err"; }
        rm -f "$dir/run.db" "$dir/run.db-wal" "$dir/run.db-shm"
      done
    done
  done
done
python3 - "$dir" "$rounds" $ways <<'EOF'
import json, statistics, sys
d, rounds, ways = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
steps = ["oltp_read_write", "oltp_update_index", "oltp_insert"]
def get(way, step, c, r):
    try:
        x = json.load(open(f"{d}/{way}-{step}-{c}-{r}.json"))
    except OSError:
        return None
    eps = x["tps"]
    cpu = (x.get("hw") or {}).get("cpu_us_per_op", {}).get("client")
    w = x.get("waits") or {}
    pages = (x.get("server_stats") or {}).get("pages_read_per_op")
    return eps, cpu, w.get("busy_waits"), w.get("busy_ms"), pages
print(f"{'step':<18} {'way':<8} {'ev/s c1':>9} {'ev/s c2':>9} {'c2/c1':>6} {'cpu c1':>7} {'cpu c2':>7} {'c2/c1':>6} {'waits c2':>9} {'wait ms c2':>10} {'pages/ev c1':>11} {'c2':>6}")
for step in steps:
    for way in ways:
        t, c, rows = [], [], []
        for r in range(1, rounds + 1):
            a, b = get(way, step, 1, r), get(way, step, 2, r)
            if not a or not b:
                continue
            rows.append((a, b))
            t.append(b[0] / a[0])
            if a[1] and b[1]:
                c.append(b[1] / a[1])
        if not rows:
            print(f"{step:<18} {way:<8} failed")
            continue
        a, b = rows[-1]
        med = lambda v: f"{statistics.median(v):6.2f}" if v else "     -"
        print(f"{step:<18} {way:<8} {a[0]:9.0f} {b[0]:9.0f} {med(t)} {a[1] or 0:7.1f} {b[1] or 0:7.1f} {med(c)} {b[2] or 0:9} {b[3] or 0:10.1f} {a[4] or 0:11.1f} {b[4] or 0:6.1f}")
EOF
