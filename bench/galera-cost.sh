#!/usr/bin/env bash
# What a three-node MariaDB Galera cluster costs payonce beside one MariaDB, measured in one run on
# this machine: the packaged JVM app twice, one instance on the machine's MariaDB and one on a cluster
# of the run's own behind HAProxy (bench/chaos/galera.sh, the configuration the tests use), each
# driven by wrk with prepared first pays (bench/pay.lua) at the same concurrency, side by side and
# round by round, after a warm-up of each. For each measurement: pays per second, p99, and the CPU
# milliseconds per pay of payonce and of the database side (the machine's mariadbd; the cluster's
# three nodes and the proxy). The cluster's three nodes share the two cores with everything else:
# that is what it costs here, not on three machines. Writes bench/galera-cost.md.
#
#   bench/galera-cost.sh [clients]      16 clients by default; needs wrk, haproxy, mariadb-backup
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/galera-cost"
stores="$out/stores"
database=payonce_cost
clients=${1:-16}
seconds=10
rounds=3
warmup_seconds=40
single_port=${PAYONCE_DB_PORT:-3306}
http_single=18190
http_cluster=18290

log() { printf '%s galera-cost: %s\n' "$(date +%T)" "$*" >&2; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_of() { local total=0 pid; for pid in "$@"; do total=$((total + $(ticks "$pid"))); done; echo $total; }
# The server listening on a port, by pid: the machine's MariaDB is one mariadbd among the cluster's.
listener() { ss -Htlnp "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }

source "$root/bench/app-env.sh"
rm -rf "$out"
mkdir -p "$stores"
source "$root/bench/chaos/galera.sh"
cluster_port=$galera_proxy_port

[ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -B -q package -DskipTests -DskipNative
classpath=$(bench_classpath "$root")
bench() { java -Xmx1g -cp "$classpath" io.payonce.bench.PayBench "$@"; }

declare -A instance_pid
cleanup() {
    set +e
    for side in single cluster; do [ -n "${instance_pid[$side]:-}" ] && kill "${instance_pid[$side]}" 2>/dev/null; done
    galera_stop
}
trap cleanup EXIT

log "a Galera cluster of the run's own behind HAProxy on port $cluster_port"
galera_start
mariadb -h127.0.0.1 -P"$single_port" -uroot -e "DROP DATABASE IF EXISTS $database"

# The database user, the instance and the seeded accounts of one side ($1) on the server at port $2.
start_side() {
    local side=$1 db_port=$2 http_port=$3
    # Its own user and password on that server, exported for the instance and the seeding below.
    PAYONCE_DB_PORT=$db_port bench_database_user $database
    (payonce_env "$http_port" && PAYONCE_DB_PORT=$db_port PAYONCE_JWT_PUBLIC_KEY_LOCATION="$root/src/test/resources/jwt/publicKey.pem" \
        QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE=1 PAYONCE_EVENTS_EXCHANGE=payonce.cost.events \
        PAYONCE_COMMANDS_QUEUE=payonce.cost.commands.$side exec java -Xmx384m -jar target/quarkus-app/quarkus-run.jar) \
        >"$out/app-$side.log" 2>&1 &
    instance_pid[$side]=$!
    for _ in $(seq 1 240); do
        curl -sf "$(management_url "$http_port")/q/health/ready" >/dev/null 2>&1 && break
        kill -0 "${instance_pid[$side]}" 2>/dev/null || { log "the $side instance stopped; see $out/app-$side.log"; exit 1; }
        sleep 0.5
    done
    PAYONCE_DB_PORT=$db_port bench seed $database
    PAYONCE_DB_PORT=$db_port bench prepare $database 60000 "$out/pays-$side.txt"
    split -n l/$((rounds + 1)) -d "$out/pays-$side.txt" "$out/pays-$side-"
}

# One wrk run of side $1 on the pays of slice $2 for $3 seconds: its result line, with the CPU per pay
# appended: payonce's, the database side's, and on the cluster where the latter goes (the writer n1,
# the two nodes that apply its write sets, the proxy).
measure() {
    local side=$1 slice=$2 duration=$3 http_port writer others proxy app0 w0 o0 p0 app1 w1 o1 p1 line
    if [ "$side" = single ]; then
        http_port=$http_single; writer=$(listener "$single_port"); others=; proxy=
    else
        http_port=$http_cluster; writer=$(cat "$galera_dir/n1/pid")
        others="$(cat "$galera_dir/n2/pid") $(cat "$galera_dir/n3/pid")"; proxy=$(cat "$galera_dir/haproxy.pid")
    fi
    app0=$(ticks "${instance_pid[$side]}"); w0=$(ticks_of $writer); o0=$(ticks_of $others); p0=$(ticks_of $proxy)
    line=$(MODE=$side CLIENTS=$clients PAYS="$out/pays-$side-0$slice" THREADS=2 \
        wrk -t2 -c"$clients" -d"${duration}s" -s bench/pay.lua "http://127.0.0.1:$http_port" | tail -n 1)
    app1=$(ticks "${instance_pid[$side]}"); w1=$(ticks_of $writer); o1=$(ticks_of $others); p1=$(ticks_of $proxy)
    echo "$line" | awk -F'\t' -v app=$((app1 - app0)) -v w=$((w1 - w0)) -v o=$((o1 - o0)) -v p=$((p1 - p0)) \
        '{printf "%s\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\n", $1, $2, $5, $7, app * 10 / $3,
            (w + o + p) * 10 / $3, w * 10 / $3, o * 10 / $3, p * 10 / $3, $9}'
}

log "starting the instance on one MariaDB (port $single_port) and the one on the cluster"
start_side single "$single_port" $http_single
start_side cluster "$cluster_port" $http_cluster
log "warming up each for $warmup_seconds s at $clients clients"
measure single 0 $warmup_seconds >/dev/null
measure cluster 0 $warmup_seconds >/dev/null

: >"$out/rounds.tsv"
for round in $(seq 1 $rounds); do
    for side in single cluster; do
        log "round $round: $side"
        measure "$side" "$round" $seconds | sed "s/^/$round\t/" >>"$out/rounds.tsv"
    done
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
column_of() { awk -F'\t' -v side="$1" -v c="$2" '$2 == side {print $c}' "$out/rounds.tsv" | median; }
{
    echo "# What a three-node Galera cluster costs payonce here"
    echo
    echo "\`bench/galera-cost.sh $clients\`, $(date -u +%Y-%m-%d): the packaged JVM app, one instance on the machine's MariaDB and"
    echo "one on a three-node cluster of the run's own behind HAProxy, on the same two cores; first pays from the"
    echo "balance by wrk at $clients clients, $seconds s per measurement, the sides alternating, after $warmup_seconds s of warm-up each."
    echo "CPU per pay: payonce's process, and the database side's (the machine's mariadbd; the cluster's three"
    echo "mariadbd and haproxy). Every status is counted: non-2xx answers are in the last column."
    echo
    echo "| round | side | pays/s | p99 (ms) | payonce CPU ms/pay | database CPU ms/pay | of it: the writer | the other two nodes | the proxy | statuses |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $4, $5, $6, $7, $8, $9, $10, $11}' "$out/rounds.tsv"
    echo
    for side in single cluster; do
        printf '%s: median %s pays/s, payonce %s ms/pay, database %s ms/pay (writer %s, other nodes %s, proxy %s)\n\n' "$side" \
            "$(column_of $side 4)" "$(column_of $side 6)" "$(column_of $side 7)" "$(column_of $side 8)" "$(column_of $side 9)" "$(column_of $side 10)"
    done
    awk -v s="$(column_of single 4)" -v c="$(column_of cluster 4)" -v sd="$(column_of single 7)" -v cd="$(column_of cluster 7)" \
        -v sa="$(column_of single 6)" -v ca="$(column_of cluster 6)" 'BEGIN {
        printf "Cluster against one MariaDB: %.2f of the pays per second; payonce CPU per pay %.2f times; database CPU per pay %.2f times.\n", c / s, ca / sa, cd / sd }'
} >bench/galera-cost.md
cat bench/galera-cost.md
