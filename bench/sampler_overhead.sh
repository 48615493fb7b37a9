#!/usr/bin/env bash
# bench/sampler_overhead: does the /proc sampler disturb what it measures?
#
# On one managed PostgreSQL server (kept between runs), runs oltp_point_select with and
# without the hardware sampler in alternation (A B, B A, ...) and prints each pair's QPS and
# the median ratio with/without (target: at least 0.98).
#
#   bench/sampler_overhead.sh [SECONDS=60] [PAIRS=4] [THREADS=2]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}; pairs=${2:-4}; threads=${3:-2}
cargo build --release -q
bin=target/release/dbsweep
dir=$(mktemp -d /tmp/dbsweep-sampler-XXXXXX)
chmod 755 "$dir" # the server runs as its own user and must reach its data
trap 'rm -rf "$dir"' EXIT
$bin prepare oltp_point_select --server postgres --server-datadir "$dir/pg" --keep --tables 4 --table-size 250000 --threads 4 >/dev/null 2>&1
qps() { # $1 = on|off
  $bin run oltp_point_select --server postgres --server-datadir "$dir/pg" --keep --tables 4 --table-size 250000 \
    --threads "$threads" --time "$secs" --report-interval 0 --hw-sample "$1" --output "$dir/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['qps'])" "$dir/r.json"
}
ratios=()
printf '%4s %12s %12s %7s\n' pair with without ratio
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then on=$(qps on); off=$(qps off); else off=$(qps off); on=$(qps on); fi
  r=$(python3 -c "print(f'{$on/$off:.4f}')")
  ratios+=("$r")
  printf '%4s %12.0f %12.0f %7s\n' "$i" "$on" "$off" "$r"
done
python3 -c "import statistics,sys; m=statistics.median(map(float,sys.argv[1:])); print(f'median ratio with/without sampler: {m:.4f} (target >= 0.98):', 'PASS' if m>=0.98 else 'FAIL')" "${ratios[@]}"
