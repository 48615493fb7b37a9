#!/bin/bash
# A report over a long series of builds: its time and peak memory at N and 2N builds (three
# runs a build, a 10% change half way), and the ratios 2N / N (linear: about 2). The results
# files are the mock target's, written once and copied with each build's version.
#   bench/report_series.sh [BUILDS=500] [RUNS=3] [ROUNDS=3]
set -euo pipefail
BUILDS=${1:-500}
RUNS=${2:-3}
ROUNDS=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
(cd "$root" && cargo build --release --quiet)
bin=$target/release/dbsweep
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" run oltp_point_select --target "mock://?service_us=50" --time 2 --output "$dir/base.json" \
    >/dev/null 2>&1
python3 - "$dir" "$BUILDS" "$RUNS" <<'PY'
import json, os, random, sys
d, builds, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = json.load(open(f"{d}/base.json"))
random.seed(1)
for n in (builds, 2 * builds):
    os.makedirs(f"{d}/s{n}")
    for i in range(n):
        for k in range(runs):
            r = json.loads(json.dumps(base))
            r["target"]["version"] = f"mock 1.{i}.0"
            f = (1 + random.random() * 0.02) * (1.1 if i > n // 2 else 1)
            r["tps"] *= f
            r["qps"] *= f
            json.dump(r, open(f"{d}/s{n}/r{i:05d}-{k}.json", "w"))
PY
measure() { # builds -> "seconds kilobytes" (the least of the rounds)
    local best=""
    for _ in $(seq "$ROUNDS"); do
        /usr/bin/time -f "%e %M" -o "$dir/time" "$bin" report "$dir/s$1"/*.json >/dev/null
        local t
        t=$(cat "$dir/time")
        if [ -z "$best" ] || awk -v a="${t% *}" -v b="${best% *}" 'BEGIN{exit !(a<b)}'; then
            best=$t
        fi
    done
    echo "$best"
}
one=$(measure "$BUILDS")
two=$(measure $((2 * BUILDS)))
printf '%-8s %10s %10s\n' builds seconds "peak MB"
printf '%-8s %10s %10.0f\n' "$BUILDS" "${one% *}" "$(awk -v k="${one#* }" 'BEGIN{print k/1024}')"
printf '%-8s %10s %10.0f\n' $((2 * BUILDS)) "${two% *}" "$(awk -v k="${two#* }" 'BEGIN{print k/1024}')"
awk -v a="${one% *}" -v b="${two% *}" -v ka="${one#* }" -v kb="${two#* }" \
    'BEGIN{printf "ratio %d/%d builds: time %.2f, memory %.2f (linear: 2.00; target <= 2.5)\n", 2, 1, b/a, kb/ka}'
