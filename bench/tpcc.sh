#!/usr/bin/env bash
# bench/tpcc: TPC-C on managed PostgreSQL and MariaDB.
#
# For each server, a sweep of one cell per client count (a fresh server each): loads
# WAREHOUSES warehouses (rows/s, and the CPU the client and the server used meanwhile: the
# loader must keep the server busy, target client <= 1/3 of the server), then runs the mix for
# SECONDS (NOPM, tpm, client CPU microseconds per transaction, New-Order p90).
#
#   bench/tpcc.sh [WAREHOUSES=10] [SECONDS=60] [CLIENTS=2,4] [SERVERS="postgres mariadb"]
set -euo pipefail
cd "$(dirname "$0")/.."
wh=${1:-10}; secs=${2:-60}; clients=${3:-2,4}; servers=${4:-postgres mariadb}
cargo build --release -q
bin=$PWD/target/release/dbsweep
dir=$(mktemp -d /tmp/dbsweep-tpcc-XXXXXX)
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
cat >"$dir/plan.toml" <<PLAN
name = "tpcc-bench"
clients = [$clients]
write_time = $secs
options = { warehouses = $wh }

# Cached: about 100 MB per warehouse fits in memory.
[configs.cached]
settings = { shared_buffers = "2GB", max_wal_size = "4GB", checkpoint_timeout = "30min" }

[[steps]]
load = "tpcc"

[[steps]]
workload = "tpcc"
class = "write"
PLAN
sed 's/shared_buffers = "2GB", max_wal_size = "4GB", checkpoint_timeout = "30min"/innodb_buffer_pool_size = "2G", innodb_log_file_size = "1G"/' \
  "$dir/plan.toml" >"$dir/plan-mariadb.toml"
for server in $servers; do
  plan="$dir/plan.toml"; [ "$server" = mariadb ] && plan="$dir/plan-mariadb.toml"
  "$bin" sweep "$plan" --server "$server" --output "$dir/$server" >/dev/null 2>"$dir/$server.log" \
    || { tail -20 "$dir/$server.log"; exit 1; }
done
python3 - "$dir" $servers <<'PY'
import glob, json, os, sys
root, servers = sys.argv[1], sys.argv[2:]
print(f"{'server':<9}{'clients':>8}{'load rows/s':>13}{'client CPU%':>13}{'server CPU%':>13}{'client/server':>15}"
      f"{'NOPM':>9}{'tpm':>9}{'client us/txn':>15}{'NO p90 ms':>11}")
for server in servers:
    for cell in sorted(glob.glob(f"{root}/{server}/steps/*")):
        load = json.load(open(f"{cell}/01-load.json"))
        run = json.load(open(f"{cell}/02-tpcc.json"))["results"]
        cpu = load["load_hw"]["cpu_pct"]
        client = cpu["client_user"] + cpu["client_system"]
        srv = (cpu["server_user"] or 0) + (cpu["server_system"] or 0)
        t = run["tpcc"]
        print(f"{server:<9}{run['threads']:>8}{load['load']['rows_per_s']:>13.0f}{client:>13.1f}{srv:>13.1f}"
              f"{client / srv if srv else float('nan'):>15.2f}{t['nopm']:>9.0f}{t['tpm']:>9.0f}"
              f"{run['hw']['cpu_us_per_op']['client']:>15.1f}{t['transactions'][0]['latency_ms']['p90']:>11.2f}")
print("target: client/server CPU during the load <= 0.33")
PY
