#!/usr/bin/env bash
# A database host and two client hosts on one machine, made of network namespaces on a bridge
# (root): PostgreSQL and node_exporter on the database host; a sweep whose plan lists both
# client hosts (client_hosts, with `ip netns exec` standing in for ssh) runs each step on both
# at one instant and merges them; then its report, with the server host's figures and the
# network in the queueing bounds. The README's three-host recipe, on one machine.
#
#   bench/remote_hosts.sh [WORKLOAD] [SECONDS] [CLIENTS_PER_HOST...]
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
ip -n "$srv" link add br0 type bridge
ip -n "$srv" addr add 10.99.0.1/24 dev br0
ip -n "$srv" link set br0 up
for c in 0 1; do
  ns=${tag}c$c
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add "veth$c" netns "$ns" type veth peer name "to$c" netns "$srv"
  ip -n "$ns" addr add "10.99.0.$((c + 2))/24" dev "veth$c"
  ip -n "$srv" link set "to$c" master br0
  ip -n "$ns" link set "veth$c" up
  ip -n "$srv" link set "to$c" up
done

# The database host: PostgreSQL on every address, trusting the client hosts' network.
chown postgres "$work"
runuser -u postgres -- "$pgbin/initdb" -D "$work/data" -A trust -U postgres >/dev/null
echo "host all all 10.99.0.0/24 trust" >> "$work/data/pg_hba.conf"
ip netns exec "$srv" runuser -u postgres -- "$pgbin/pg_ctl" -D "$work/data" -l "$work/pg.log" -w \
  -o "-c listen_addresses='*' -c unix_socket_directories='$work' -c max_connections=100" start >/dev/null
ip netns exec "$srv" runuser -u postgres -- "$pgbin/psql" -h "$work" -qc "CREATE ROLE sbtest LOGIN" -c "CREATE DATABASE sbtest OWNER sbtest"
ip netns exec "$srv" prometheus-node-exporter --web.listen-address=:9100 --collector.disable-defaults \
  --collector.cpu --collector.stat --collector.diskstats --collector.netdev --collector.netclass >/dev/null 2>&1 &
exporter=$!
for _ in $(seq 50); do
  ip netns exec "${tag}c0" bash -c 'exec 3<>/dev/tcp/10.99.0.1/9100' 2>/dev/null && break
  sleep 0.1
done

# ssh's stand-in for namespaces: the host part of user@host names the namespace.
cat > "$work/ssh" <<'EOF2'
#!/bin/sh
while [ "$1" != "--" ]; do dest=$1; shift; done; shift
exec ip netns exec "${dest#*@}" sh -c "$*"
EOF2
chmod +x "$work/ssh"
clients=""
for t in "${threads[@]}"; do clients="$clients${clients:+, }$((2 * t))"; done
cat > "$work/plan.toml" <<EOF2
name = "two-client-hosts"
description = "$workload from two client hosts, PostgreSQL on a third"
clients = [$clients]
tables = 2
table_size = 100000
read_time = $seconds
write_time = $seconds
warmup_time = 2
client_hosts = ["ssh://bench@${tag}c0", "ssh://bench@${tag}c1"]
client_dbsweep = "$bin"

[[targets]]
name = "pg"
url = "postgres://sbtest@10.99.0.1:5432/sbtest"
metrics = "http://10.99.0.1:9100/metrics"

[[steps]]
name = "load"
load = true

[[steps]]
name = "$workload"
workload = "$workload"
class = "read"
EOF2
# The sweep runs on the first client host (it loads the tables there).
DBSWEEP_SSH=$work/ssh ip netns exec "${tag}c0" "$bin" sweep "$work/plan.toml" --output "$out/sweep" --force
"$bin" report "$out/sweep"
echo "files in $out"
trap - EXIT
cleanup
