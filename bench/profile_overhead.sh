#!/usr/bin/env bash
# bench/profile_overhead: what does --profile (perf record -g on every CPU, 99 Hz) cost the
# throughput it profiles?
#
# On one managed PostgreSQL server (kept between runs), runs WORKLOAD with and without
# --profile in alternation (A B, B A, ...) and prints each pair's QPS and the median ratio
# with/without (target: at least 0.97; perf is a cost the report's figures then carry).
#
#   bench/profile_overhead.sh [SECONDS=30] [PAIRS=4] [THREADS=2] [WORKLOAD=oltp_read_only] [HZ=99]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}; pairs=${2:-4}; threads=${3:-2}; workload=${4:-oltp_read_only}; hz=${5:-99}
cargo build --release -q
bin=target/release/dbsweep
dir=$(mktemp -d /tmp/dbsweep-profile-XXXXXX)
chmod 755 "$dir" # the server runs as its own user and must reach its data
trap 'rm -rf "$dir"' EXIT
$bin prepare "$workload" --server postgres --server-datadir "$dir/pg" --keep --tables 4 --table-size 250000 --threads 4 >/dev/null 2>&1
qps() { # $1 = on|off
  $bin run "$workload" --server postgres --server-datadir "$dir/pg" --keep --tables 4 --table-size 250000 \
    --threads "$threads" --time "$secs" --report-interval 0 --profile "$1" --profile-hz "$hz" --output "$dir/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); p=r.get('profile'); assert (p is not None) == (sys.argv[2]=='on'), 'profile missing or unexpected'; print(r['qps'])" "$dir/r.json" "$1"
}
ratios=()
echo "$workload, $threads client(s), ${secs} s per run, perf at $hz Hz"
printf '%4s %12s %12s %7s\n' pair with without ratio
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then on=$(qps on); off=$(qps off); else off=$(qps off); on=$(qps on); fi
  r=$(python3 -c "print(f'{$on/$off:.4f}')")
  ratios+=("$r")
  printf '%4s %12.0f %12.0f %7s\n' "$i" "$on" "$off" "$r"
done
python3 -c "import statistics,sys; m=statistics.median(map(float,sys.argv[1:])); print(f'median ratio with/without --profile: {m:.4f} (target >= 0.97):', 'PASS' if m>=0.97 else 'FAIL')" "${ratios[@]}"
