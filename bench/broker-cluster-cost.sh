#!/usr/bin/env bash
# What a three-node RabbitMQ cluster with the commands on quorum queues costs payonce beside one node
# with classic queues, measured in one run on this machine: the packaged JVM app twice, on the
# machine's MariaDB, one instance on a RabbitMQ node of the run's own and one on a cluster of the
# run's own (bench/chaos/rabbitmq-cluster.sh, the configuration the tests and the chaos run use). At
# each number in flight and round, each side is measured twice, one after the other: the broker alone
# (persistent publishes of a command's size to a new durable queue of the side's type, each waiting
# for its confirm: the latency a sender or the outbox relay meets) and payonce (pay commands in a
# closed loop by bench/java/io/payonce/bench/CommandBench.java, latency from publish to reply), the
# sides alternating, after a warm-up of each instance. For each: operations per second, p50 and p99,
# and the CPU milliseconds per operation of payonce and of the broker's nodes. The three nodes share
# the two cores with everything else: what it costs here, not on three machines. Writes
# bench/broker-cluster-cost.md. Build first (./mvnw package -DskipTests -DskipNative) after a change.
#
#   bench/broker-cluster-cost.sh [in-flight...]   1 and 16 by default
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/broker-cluster-cost"
stores="$out/stores"
database=payonce_broker_cost
in_flight=("$@")
[ $# -gt 0 ] || in_flight=(1 16)
seconds=8
rounds=2
warmup_seconds=20
sides=(single cluster)
commands=payonce.cost.commands
declare -A http_port instance_pid

log() { printf '%s broker-cluster-cost: %s\n' "$(date +%T)" "$*" >&2; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_of() { local total=0 pid; for pid in "$@"; do total=$((total + $(ticks "$pid"))); done; echo $total; }

source "$root/bench/app-env.sh"
rm -rf "$out"
mkdir -p "$stores"
source "$root/bench/chaos/rabbitmq-cluster.sh"
# Node 0 stands alone: the single side's broker, launched as the cluster's nodes are, never joined.
rabbit_port[0]=$(free_port)
rabbit_dist[0]=$(free_port)
for side in "${sides[@]}"; do http_port[$side]=$(free_port); done

[ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -B -q package -DskipTests -DskipNative
classpath=$(bench_classpath "$root")
command_bench=(java -Xmx256m -XX:TieredStopAtLevel=1 -cp "$classpath" io.payonce.bench.CommandBench)

# The broker settings of side $1, exported into the (sub)shell that calls it.
side_broker() {
    if [ "$1" = single ]; then
        unset PAYONCE_RABBITMQ_ADDRESSES PAYONCE_COMMANDS_QUEUE_TYPE
        export PAYONCE_RABBITMQ_PORT=${rabbit_port[0]}
    else
        export PAYONCE_RABBITMQ_ADDRESSES=$rabbit_addresses PAYONCE_COMMANDS_QUEUE_TYPE=quorum PAYONCE_RABBITMQ_PORT=${rabbit_port[1]}
    fi
}

queue_type() { [ "$1" = single ] && echo classic || echo quorum; }
broker_pids() { if [ "$1" = single ]; then rabbit_pid 0; else echo "$(rabbit_pid 1) $(rabbit_pid 2) $(rabbit_pid 3)"; fi; }

cleanup() {
    set +e
    for side in "${sides[@]}"; do [ -n "${instance_pid[$side]:-}" ] && kill "${instance_pid[$side]}" 2>/dev/null; done
    kill -9 "$(rabbit_pid 0)" 2>/dev/null
    rabbit_cluster_stop
    rm -f "$free_ports_taken"
}
trap cleanup EXIT

start_side() {
    local side=$1
    (payonce_env "${http_port[$side]}" && side_broker "$side" \
        && export PAYONCE_JWT_PUBLIC_KEY_LOCATION="$root/src/test/resources/jwt/publicKey.pem" \
            PAYONCE_EVENTS_EXCHANGE=payonce.cost.events PAYONCE_COMMANDS_QUEUE=$commands \
            PAYONCE_COMMANDS_IN_FLIGHT=${in_flight[-1]} PAYONCE_COMMANDS_PAY_SENDERS=guest \
        && exec java -Xmx384m -jar target/quarkus-app/quarkus-run.jar) >"$out/app-$side.log" 2>&1 &
    instance_pid[$side]=$!
    for _ in $(seq 1 240); do
        curl -sf "$(management_url "${http_port[$side]}")/q/health/ready" >/dev/null 2>&1 && return
        kill -0 "${instance_pid[$side]}" 2>/dev/null || { log "the $side instance stopped; see $out/app-$side.log"; exit 1; }
        sleep 0.5
    done
    log "the $side instance was not ready; see $out/app-$side.log"; exit 1
}

# One measurement of $2 (confirm or payonce) on side $1 at $3 in flight for $4 seconds: its result line
# in PayBench's format, with payonce's and the broker's CPU milliseconds per operation appended.
measure() {
    local side=$1 what=$2 c=$3 duration=$4 app0 b0 app1 b1 line
    if [ "$what" = payonce ]; then
        "${command_bench[@]}" prepare $database $((duration * 1500)) "$out/orders.txt"
    fi
    app0=$(ticks "${instance_pid[$side]}"); b0=$(ticks_of $(broker_pids "$side"))
    if [ "$what" = confirm ]; then
        line=$( (side_broker "$side" && "${command_bench[@]}" confirms "$(queue_type "$side")" "$c" "$duration") | tail -n 1)
    else
        line=$( (side_broker "$side" && "${command_bench[@]}" commands "$out/orders.txt" $commands "$c" "$duration") | tail -n 1)
    fi
    app1=$(ticks "${instance_pid[$side]}"); b1=$(ticks_of $(broker_pids "$side"))
    [ "$what" = payonce ] || app1=$app0
    echo "$line" | awk -F'\t' -v side="$side" -v what="$what" -v app=$((app1 - app0)) -v broker=$((b1 - b0)) '{
        printf "%s\t%s\t%s\t%d\t%.0f\t%.1f\t%.1f\t%.2f\t%.2f\t%s\n", $2, side, what, $3, $5, $6, $7, app * 10 / $3, broker * 10 / $3, $9}'
}

log "one RabbitMQ node (port ${rabbit_port[0]}) and a three-node cluster ($rabbit_addresses) of the run's own"
rabbit_launch 0
rabbit_cluster_launch
rabbit_await 0
rabbit_cluster_join
PAYONCE_DB_PORT=${PAYONCE_DB_PORT:-3306} bench_database_user $database
mariadb -h127.0.0.1 -P"$PAYONCE_DB_PORT" -uroot -e "DROP DATABASE IF EXISTS $database; CREATE DATABASE $database"
for side in "${sides[@]}"; do start_side "$side"; done
# The accounts every pay draws on (the orders are seeded before each measurement).
java -Xmx256m -cp "$classpath" io.payonce.bench.PayBench seed $database
log "warming up each instance: $warmup_seconds s at 16 in flight, then $seconds s at each number measured"
for side in "${sides[@]}"; do
    measure "$side" payonce 16 $warmup_seconds >/dev/null
    for c in "${in_flight[@]}"; do measure "$side" confirm "$c" $seconds >/dev/null; done
done

: >"$out/rounds.tsv"
for c in "${in_flight[@]}"; do
    for round in $(seq 1 $rounds); do
        for side in "${sides[@]}"; do
            log "$c in flight, round $round: $side, the broker alone then payonce"
            for what in confirm payonce; do
                measure "$side" $what "$c" $seconds | sed "s/^/$round\t/" >>"$out/rounds.tsv"
            done
        done
    done
done

{
    echo "# What a three-node RabbitMQ cluster with quorum queues costs payonce here"
    echo
    echo "\`bench/broker-cluster-cost.sh ${in_flight[*]}\`, $(date -u +%Y-%m-%d): the packaged JVM app twice on the machine's"
    echo "MariaDB, one instance on one RabbitMQ node with the commands on a classic queue, one on a three-node cluster"
    echo "(bench/chaos/rabbitmq-cluster.sh) with PAYONCE_RABBITMQ_ADDRESSES and the commands on quorum queues, on the"
    echo "same two cores. At each number in flight and round, each side twice, for $seconds s each, the sides alternating"
    echo "after a warm-up: the broker alone (persistent publishes of a command's size to a new durable queue of the"
    echo "side's type, each publisher waiting for each confirm: what a sender and the outbox relay wait for), then"
    echo "payonce (pay commands from the balance in a closed loop, bench/java/io/payonce/bench/CommandBench.java:"
    echo "latency from publish to reply). CPU per operation: payonce's process, and the broker's node or three nodes."
    echo
    echo "## Side by side (means of $rounds rounds)"
    echo
    echo "| in flight | confirms/s, one node | cluster | cluster / one | confirm p50 / p99 ms, one node | cluster | commands/s, one node | cluster | cluster / one | command p50 / p99 ms, one node | cluster | broker CPU ms per command, one / cluster | payonce CPU ms per command, one / cluster |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v rounds=$rounds '
        { key = $2 SUBSEP $3 SUBSEP $4; rate[key] += $6 / rounds; p50[key] += $7 / rounds; p99[key] += $8 / rounds
          app[key] += $9 / rounds; broker[key] += $10 / rounds; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
        END {
            for (i = 1; i <= n; i++) {
                c = order[i]
                cs = c SUBSEP "single" SUBSEP "confirm"; cc = c SUBSEP "cluster" SUBSEP "confirm"
                ps = c SUBSEP "single" SUBSEP "payonce"; pc = c SUBSEP "cluster" SUBSEP "payonce"
                printf "| %d | %.0f | %.0f | %.2f | %.1f / %.1f | %.1f / %.1f | %.0f | %.0f | %.2f | %.1f / %.1f | %.1f / %.1f | %.2f / %.2f | %.2f / %.2f |\n",
                    c, rate[cs], rate[cc], rate[cc] / rate[cs], p50[cs], p99[cs], p50[cc], p99[cc],
                    rate[ps], rate[pc], rate[pc] / rate[ps], p50[ps], p99[ps], p50[pc], p99[pc], broker[ps], broker[pc], app[ps], app[pc]
            }
        }' "$out/rounds.tsv"
    echo
    echo "## Every measurement"
    echo
    echo "| round | in flight | side | measured | operations | per second | p50 (ms) | p99 (ms) | payonce CPU ms/op | broker CPU ms/op | statuses |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$out/rounds.tsv"
} >bench/broker-cluster-cost.md
log "written: bench/broker-cluster-cost.md"
