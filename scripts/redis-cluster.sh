#!/usr/bin/env bash
# Starts a throw-away 3-master Redis Cluster on 127.0.0.1 (ports BASE, BASE+1, BASE+2; BASE
# defaults to 7301) for the Redis Cluster test, and prints its nodes as REDIS_CLUSTER_NODES wants
# them. Idempotent: a cluster already answering on those ports is reused.
#   scripts/redis-cluster.sh [start|stop]
set -euo pipefail

base=${REDIS_CLUSTER_BASE_PORT:-7301}
ports=("$base" "$((base + 1))" "$((base + 2))")
dir=${REDIS_CLUSTER_DIR:-${TMPDIR:-/tmp}/ratatoskr-redis-cluster-$base}
nodes=$(printf '127.0.0.1:%s,' "${ports[@]}")
nodes=${nodes%,}

# grep without -q reads to the end, so pipefail never sees redis-cli killed by SIGPIPE.
cluster_ok() { redis-cli -p "${ports[0]}" cluster info 2>/dev/null | grep 'cluster_state:ok' >/dev/null; }

case "${1:-start}" in
  stop)
    for port in "${ports[@]}"; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
    exit 0
    ;;
  start) ;;
  *) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac

if ! cluster_ok; then
  mkdir -p "$dir"
  for port in "${ports[@]}"; do
    if ! redis-cli -p "$port" ping >/dev/null 2>&1; then
      rm -f "$dir/nodes-$port.conf"
      redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --cluster-enabled yes \
        --cluster-config-file "$dir/nodes-$port.conf" --dir "$dir" --save "" --appendonly no \
        --logfile "$dir/redis-$port.log" --pidfile "$dir/redis-$port.pid"
    fi
  done
  for port in "${ports[@]}"; do
    deadline=$((SECONDS + 20))
    until redis-cli -p "$port" ping >/dev/null 2>&1; do
      ((SECONDS < deadline)) || { echo "redis on $port did not start (see $dir/redis-$port.log)" >&2; exit 1; }
      sleep 0.2
    done
  done
  redis-cli --cluster create "${ports[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >/dev/null
  deadline=$((SECONDS + 30))
  until cluster_ok; do
    ((SECONDS < deadline)) || { echo "redis cluster on $nodes did not become ok" >&2; exit 1; }
    sleep 0.2
  done
fi
echo "$nodes"
