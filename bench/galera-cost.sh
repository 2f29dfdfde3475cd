#!/usr/bin/env bash
# What a three-node MariaDB Galera cluster costs payonce beside one MariaDB, measured in one run on
# this machine (bench/run.sh --galera runs it): the packaged JVM app twice, one instance on the
# machine's MariaDB and one on a cluster of the run's own behind HAProxy (bench/chaos/galera.sh, the
# configuration the tests use). At each concurrency and round, each side is measured twice, one after
# the other: the database's own ceiling (bench/ceiling.lua by sysbench, the minimal correct pay
# transaction, through the same port the instance uses) and payonce (prepared first pays by wrk,
# bench/pay.lua), the sides alternating, after a warm-up of each instance. For each measurement: pays
# per second, p99, and the CPU milliseconds per pay of payonce, of the load generator and of the
# database side (the machine's mariadbd; the cluster's three nodes and the proxy). The cluster's three
# nodes share the two cores with everything else: that is what it costs here, not on three machines.
# Writes bench/galera-cost.md. It reuses the packaged app in target/quarkus-app and the bench classes
# when they are there: build first (./mvnw package -DskipTests -DskipNative) after changing either.
#
#   bench/galera-cost.sh [clients...]   1, 16 and 64 clients by default; needs wrk, sysbench, haproxy, mariadb-backup
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/galera-cost"
stores="$out/stores"
database=payonce_cost
concurrencies=("$@")
[ $# -gt 0 ] || concurrencies=(1 16 64)
seconds=8
rounds=2
warmup_seconds=30
sides=(single cluster)
declare -A db_port=([single]=${PAYONCE_DB_PORT:-3306}) http_port=([single]=18190 [cluster]=18290) password instance_pid

log() { printf '%s galera-cost: %s\n' "$(date +%T)" "$*" >&2; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_of() { local total=0 pid; for pid in "$@"; do total=$((total + $(ticks "$pid"))); done; echo $total; }
# The server listening on a port, by pid: the machine's MariaDB is one mariadbd among the cluster's.
listener() { ss -Htlnp "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }

source "$root/bench/app-env.sh"
source "$root/bench/ceiling.sh"
rm -rf "$out"
mkdir -p "$stores"
source "$root/bench/chaos/galera.sh"
db_port[cluster]=$galera_proxy_port

[ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -B -q package -DskipTests -DskipNative
classpath=$(bench_classpath "$root")
bench() { java -Xmx1g -cp "$classpath" io.payonce.bench.PayBench "$@"; }
# Runs the command that follows against side $1's database, as its user.
on_side() { local side=$1; shift; PAYONCE_DB_PORT=${db_port[$side]} PAYONCE_DB_PASSWORD=${password[$side]} "$@"; }

cleanup() {
    set +e
    for side in "${sides[@]}"; do [ -n "${instance_pid[$side]:-}" ] && kill "${instance_pid[$side]}" 2>/dev/null; done
    galera_stop
}
trap cleanup EXIT

log "a Galera cluster of the run's own behind HAProxy on port ${db_port[cluster]}"
galera_start
mariadb -h127.0.0.1 -P"${db_port[single]}" -uroot -e "DROP DATABASE IF EXISTS $database"

# The database user and the instance of side $1, and the accounts every pay draws on.
start_side() {
    local side=$1
    # Its own user and password on that server, kept for the seeding and the ceiling later.
    PAYONCE_DB_PORT=${db_port[$side]} bench_database_user $database
    password[$side]=$PAYONCE_DB_PASSWORD
    (payonce_env "${http_port[$side]}" && PAYONCE_DB_PORT=${db_port[$side]} \
        PAYONCE_JWT_PUBLIC_KEY_LOCATION="$root/src/test/resources/jwt/publicKey.pem" \
        QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE=1 PAYONCE_EVENTS_EXCHANGE=payonce.cost.events \
        PAYONCE_COMMANDS_QUEUE=payonce.cost.commands.$side exec java -Xmx384m -jar target/quarkus-app/quarkus-run.jar) \
        >"$out/app-$side.log" 2>&1 &
    instance_pid[$side]=$!
    for _ in $(seq 1 240); do
        curl -sf "$(management_url "${http_port[$side]}")/q/health/ready" >/dev/null 2>&1 && break
        kill -0 "${instance_pid[$side]}" 2>/dev/null || { log "the $side instance stopped; see $out/app-$side.log"; exit 1; }
        sleep 0.5
    done
    on_side "$side" bench seed $database
}

# The database side's processes of side $1: the writer (or the one MariaDB), the two nodes that apply
# the writer's write sets, and the proxy; the last two empty for one MariaDB.
database_processes() {
    if [ "$1" = single ]; then
        writer=$(listener "${db_port[single]}") others= proxy=
    else
        writer=$(cat "$galera_dir/n1/pid") others="$(cat "$galera_dir/n2/pid") $(cat "$galera_dir/n3/pid")"
        proxy=$(cat "$galera_dir/haproxy.pid")
    fi
}

# One measurement of $2 (ceiling or payonce) on side $1 at $3 clients for $4 seconds, on data seeded
# before it: its result line in PayBench's format, with the CPU per pay appended (payonce's, the load
# generator's, the database side's, and of the latter the writer's, the other nodes' and the proxy's).
measure() {
    local side=$1 what=$2 clients=$3 duration=$4 threads=$(( $3 < 2 ? 1 : 2 )) writer others proxy seeded app0 w0 o0 p0 app1 w1 o1 p1 line
    database_processes "$side"
    if [ "$what" = ceiling ]; then
        seeded=$(on_side "$side" bench seed-orders $database $((duration * 4000)) | tail -n 1)
    else
        # Twice the fastest rate seen: pay.lua starts over on keys it has sent once it runs out, replays.
        on_side "$side" bench prepare $database $((duration * 3000)) "$out/pays.txt"
    fi
    app0=$(ticks "${instance_pid[$side]}"); w0=$(ticks_of $writer); o0=$(ticks_of $others); p0=$(ticks_of $proxy)
    if [ "$what" = ceiling ]; then
        line=$(on_side "$side" /usr/bin/time -f "%U %S" -o "$out/time.txt" \
            bash -c 'ceiling "$@"' ceiling ceiling "$clients" "$duration" "$seeded" $((duration * 4000)) | tail -n 1)
    else
        line=$(MODE=pay CLIENTS=$clients PAYS="$out/pays.txt" THREADS=$threads /usr/bin/time -f "%U %S" -o "$out/time.txt" \
            wrk -t$threads -c"$clients" -d"${duration}s" -s bench/pay.lua "http://127.0.0.1:${http_port[$side]}" | tail -n 1)
    fi
    app1=$(ticks "${instance_pid[$side]}"); w1=$(ticks_of $writer); o1=$(ticks_of $others); p1=$(ticks_of $proxy)
    [ "$what" = payonce ] || app1=$app0
    echo "$line" | awk -F'\t' -v what="$what" -v side="$side" -v app=$((app1 - app0)) -v w=$((w1 - w0)) -v o=$((o1 - o0)) -v p=$((p1 - p0)) \
        -v generator="$(cat "$out/time.txt")" '{
            split(generator, g, " ")
            printf "%s\t%s\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\n", $2, side, what, $5, $7, app * 10 / $3,
                (g[1] + g[2]) * 1000 / $3, (w + o + p) * 10 / $3, w * 10 / $3, o * 10 / $3, p * 10 / $3, $9}'
}
export -f ceiling
export root out database

log "starting the instance on one MariaDB (port ${db_port[single]}) and the one on the cluster"
for side in "${sides[@]}"; do start_side "$side"; done
log "warming up each instance: $warmup_seconds s at 16 clients, then $seconds s at each concurrency measured"
for side in "${sides[@]}"; do
    measure "$side" payonce 16 $warmup_seconds >/dev/null
    for c in "${concurrencies[@]}"; do measure "$side" payonce "$c" $seconds >/dev/null; done
done

: >"$out/rounds.tsv"
for c in "${concurrencies[@]}"; do
    for round in $(seq 1 $rounds); do
        for side in "${sides[@]}"; do
            log "$c clients, round $round: $side, the ceiling then payonce"
            for what in ceiling payonce; do
                measure "$side" $what "$c" $seconds | sed "s/^/$round\t/" >>"$out/rounds.tsv"
            done
        done
    done
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# The median of column $4 over the rounds of side $2's measurements of $3 at $1 clients.
column_of() { awk -F'\t' -v c="$1" -v side="$2" -v what="$3" -v col="$4" '$2 == c && $3 == side && $4 == what {print $col}' "$out/rounds.tsv" | median; }
{
    echo "# What a three-node Galera cluster costs payonce here"
    echo
    echo "\`bench/run.sh --galera\` (\`bench/galera-cost.sh ${concurrencies[*]}\`), $(date -u +%Y-%m-%d): the packaged JVM app, one instance on the"
    echo "machine's MariaDB and one on a three-node cluster of the run's own behind HAProxy, on the same two cores."
    echo "At each concurrency and round, each side's ceiling (bench/ceiling.lua by sysbench: the minimal correct pay"
    echo "transaction, through the port the instance uses) and then payonce (first pays from the balance by wrk), $seconds s"
    echo "each, the sides alternating, after a warm-up of each instance. CPU per pay: payonce's process, the load"
    echo "generator's, and the database side's (the machine's mariadbd; the cluster's three mariadbd and haproxy)."
    echo "Every status is counted: errors and non-2xx answers are in the last column."
    echo
    echo "## Side by side (medians of $rounds rounds)"
    echo
    echo "| clients | ceiling, one MariaDB | ceiling, cluster | cluster / one | payonce, one MariaDB | payonce, cluster | cluster / one | payonce / ceiling, one | payonce / ceiling, cluster | database CPU ms per payonce pay, one / cluster | payonce CPU ms/pay, one / cluster |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for c in "${concurrencies[@]}"; do
        awk -v c="$c" -v cs="$(column_of "$c" single ceiling 5)" -v cc="$(column_of "$c" cluster ceiling 5)" \
            -v ps="$(column_of "$c" single payonce 5)" -v pc="$(column_of "$c" cluster payonce 5)" \
            -v ds="$(column_of "$c" single payonce 9)" -v dc="$(column_of "$c" cluster payonce 9)" \
            -v as="$(column_of "$c" single payonce 7)" -v ac="$(column_of "$c" cluster payonce 7)" 'BEGIN {
            printf "| %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f / %.2f | %.2f / %.2f |\n",
                c, cs, cc, cc / cs, ps, pc, pc / ps, ps / cs, pc / cc, ds, dc, as, ac }'
    done
    echo
    echo "## Every measurement"
    echo
    echo "| round | clients | side | measured | pays/s | p99 (ms) | payonce CPU ms/pay | generator CPU ms/pay | database CPU ms/pay | of it: the writer | the other two nodes | the proxy | statuses |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13}' "$out/rounds.tsv"
} >bench/galera-cost.md
cat bench/galera-cost.md
