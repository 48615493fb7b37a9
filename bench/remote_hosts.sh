#!/usr/bin/env bash
# A database host and two client hosts on one machine, made of network namespaces (root):
# PostgreSQL and node_exporter on the database host, dbsweep on each client host started at one
# instant (--start-at) for each client count, the parts merged, and a report of the merged
# runs with the server host's figures and the network in the queueing bounds. The same steps
# as the README's three-host recipe, with `ip netns exec` in place of ssh.
#
#   bench/remote_hosts.sh [WORKLOAD] [SECONDS] [THREADS_PER_HOST...]
#   bench/remote_hosts.sh oltp_read_only 10 1 2
set -euo pipefail
cd "$(dirname "$0")/.."
workload=${1:-oltp_read_only}
seconds=${2:-10}
shift 2 2>/dev/null || shift $#
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
[ "$(id -u)" -eq 0 ] || { echo "remote_hosts.sh: network namespaces need root" >&2; exit 1; }
command -v prometheus-node-exporter >/dev/null || { echo "apt-get install prometheus-node-exporter" >&2; exit 1; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

cargo build --release -q
bin=$PWD/target/release/dbsweep
tag=rh$$
srv=${tag}s
work=$(mktemp -d /tmp/dbsweep-remote.XXXXXX)
chmod 755 "$work"
out=$work/out
mkdir -p "$out"

cleanup() {
  [ -n "${exporter:-}" ] && kill "$exporter" 2>/dev/null || true
  [ -d "$work/data" ] && runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  for ns in "$srv" "${tag}c0" "${tag}c1"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT

ip netns add "$srv"
ip -n "$srv" link set lo up
for c in 0 1; do
  ns=${tag}c$c
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add "veth$c" netns "$ns" type veth peer name "to$c" netns "$srv"
  ip -n "$ns" addr add "10.99.$((c + 1)).2/24" dev "veth$c"
  ip -n "$srv" addr add "10.99.$((c + 1)).1/24" dev "to$c"
  ip -n "$ns" link set "veth$c" up
  ip -n "$srv" link set "to$c" up
done

# The database host: PostgreSQL on every address, trusting the client hosts' network.
chown postgres "$work"
runuser -u postgres -- "$pgbin/initdb" -D "$work/data" -A trust -U postgres >/dev/null
echo "host all all 10.99.0.0/16 trust" >> "$work/data/pg_hba.conf"
ip netns exec "$srv" runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/data" -l "$work/pg.log" -w \
  -o "-c listen_addresses='*' -c unix_socket_directories='$work' -c max_connections=100" start >/dev/null
ip netns exec "$srv" runuser -u postgres -- "$pgbin/psql" -h "$work" -qc "CREATE ROLE sbtest LOGIN" -c "CREATE DATABASE sbtest OWNER sbtest"
ip netns exec "$srv" prometheus-node-exporter --web.listen-address=:9100 --collector.disable-defaults \
  --collector.cpu --collector.stat --collector.diskstats --collector.netdev --collector.netclass >/dev/null 2>&1 &
exporter=$!
for _ in $(seq 50); do
  ip netns exec "${tag}c0" bash -c 'exec 3<>/dev/tcp/10.99.1.1/9100' 2>/dev/null && break
  sleep 0.1
done

# Each client host reaches the database host at the address of its own link.
url() { echo "postgres://sbtest@10.99.$(($1 + 1)).1:5432/sbtest"; }
metrics() { echo "http://10.99.$(($1 + 1)).1:9100/metrics"; }
ip netns exec "${tag}c0" "$bin" prepare "$workload" --target "$(url 0)" --tables 2 --table-size 100000 --threads 2

merged=()
for t in "${threads[@]}"; do
  start=$(( $(date +%s) + 5 ))
  pids=()
  for c in 0 1; do
    ip netns exec "${tag}c$c" "$bin" run "$workload" --target "$(url "$c")" --tables 2 --table-size 100000 \
      --threads "$t" --time "$seconds" --warmup 1 --start-at "$start" --client-id "h$c" \
      --server-metrics "$(metrics "$c")" --report-interval 0 --output "$out/t$t-h$c.json" >"$out/t$t-h$c.txt" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  "$bin" merge "$out/t$t-h0.json" "$out/t$t-h1.json" --output "$out/merged-$((2 * t)).json"
  merged+=("$out/merged-$((2 * t)).json")
done
echo "== the last client host's summary (t=${threads[-1]}) =="
tail -20 "$out/t${threads[-1]}-h1.txt"
"$bin" report "${merged[@]}"
echo "files in $out"
trap - EXIT
cleanup
