#!/usr/bin/env bash
# payonce on a core of its own beside the database's ceiling: the design bench/floors.md names for the
# throughput target that bench/run.sh finds short on two shared cores. In bench/run.sh payonce, MariaDB,
# Redis and the load generator share both cores, so every millisecond of CPU payonce spends on a pay is
# taken from the database; in a cluster payonce runs in pods of its own, away from the database's
# cores. Here the database's side (a MariaDB and a Redis of the run's own, and the load generators) is
# pinned to core 0 and payonce to core 1 (taskset), and at each concurrency the ceiling (bench/ceiling.lua
# through sysbench) and payonce's POST /orders/{id}/pay (wrk) alternate for the same time, as in
# bench/run.sh. The broker is the machine's own RabbitMQ, unpinned: it carries the outbox relay's
# events, and its CPU per pay is reported beside the others.
#
#   bench/pinned.sh [--no-build]   writes bench/pinned.md
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/bench-pinned"
stores="$out/stores"
database=payonce_pinned
port=18190
concurrencies=(1 8 16 32 64)
seconds=8
rounds=2
warmup_seconds=20
database_core=0
payonce_core=1
export PAYONCE_DB_PORT=13316 PAYONCE_REDIS_PORT=16389
export root out database

source "$root/bench/app-env.sh"
log() { printf '%s pinned: %s\n' "$(date +%T)" "$*" >&2; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

build=1
for arg in "$@"; do
    case "$arg" in
        --no-build) build=0 ;;
        *) echo "usage: $0 [--no-build]" >&2; exit 2 ;;
    esac
done

mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)
cleanup() {
    local pid
    for pid in ${app_pid:-} ${redis_pid:-} ${mariadb_pid:-}; do kill "$pid" 2>/dev/null || true; done
    [ -z "${mariadb_pid:-}" ] || while kill -0 "$mariadb_pid" 2>/dev/null; do sleep 0.2; done
}
trap cleanup EXIT

rm -rf "$out" && mkdir -p "$stores"
[ $build = 0 ] && [ -f target/quarkus-app/quarkus-run.jar ] || ./mvnw -B -q package -DskipTests -DskipNative
classpath=$(bench_classpath "$root")
bench() { java -Xmx1g -cp "$classpath" io.payonce.bench.PayBench "$@"; }

log "starting a MariaDB and a Redis of the run's own on core $database_core"
mariadb-install-db --no-defaults --datadir="$stores/mariadb" --auth-root-authentication-method=normal \
    --skip-test-db --user="$(id -un)" >"$stores/mariadb-install.log" 2>&1
# taskset runs the server in its own process, so that $! is the server's pid: what is measured and stopped.
taskset -c $database_core "$mariadbd" --no-defaults --datadir="$stores/mariadb" --port=$PAYONCE_DB_PORT --bind-address=127.0.0.1 \
    --socket="$stores/mariadb.sock" --pid-file="$stores/mariadb.pid" --log-error="$stores/mariadb.log" \
    --user="$(id -un)" --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --max-connections=300 &
mariadb_pid=$!
taskset -c $database_core redis-server --bind 127.0.0.1 --port $PAYONCE_REDIS_PORT --save "" --appendonly no >"$stores/redis.log" 2>&1 &
redis_pid=$!
until mariadb -h127.0.0.1 -P$PAYONCE_DB_PORT -uroot -e 'SELECT 1' >/dev/null 2>&1; do
    kill -0 "$mariadb_pid" 2>/dev/null || { log "MariaDB did not start; see $stores/mariadb.log"; exit 1; }
    sleep 0.2
done
until redis-cli -p $PAYONCE_REDIS_PORT ping >/dev/null 2>&1; do sleep 0.1; done
bench_database_user $database

log "starting payonce (the JVM) on core $payonce_core"
(payonce_env $port && PAYONCE_JWT_PUBLIC_KEY_LOCATION="$root/src/test/resources/jwt/publicKey.pem" \
    PAYONCE_DB_POOL_SIZE=20 QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE=1 PAYONCE_EVENTS_EXCHANGE=payonce.bench.events \
    PAYONCE_COMMANDS_QUEUE=payonce.bench.pinned.commands PAYONCE_COMMANDS_IN_FLIGHT=1 \
    exec taskset -c $payonce_core java -jar target/quarkus-app/quarkus-run.jar) >"$out/app.log" 2>&1 &
app_pid=$!
until curl -sf "$(management_url $port)/q/health/ready" >/dev/null 2>&1; do
    kill -0 "$app_pid" 2>/dev/null || { log "payonce did not start; see $out/app.log"; exit 1; }
    sleep 0.1
done
bench seed $database
bench prepare $database $(( ${#concurrencies[@]} * 30000 )) "$out/warmup.txt"
split -n l/${#concurrencies[@]} -d "$out/warmup.txt" "$out/warmup-"
for i in "${!concurrencies[@]}"; do
    c=${concurrencies[$i]}
    log "warming up at $c clients"
    MODE=warmup CLIENTS=$c PAYS="$out/warmup-0$i" THREADS=$(( c < 2 ? 1 : 2 )) \
        taskset -c $database_core wrk -t$(( c < 2 ? 1 : 2 )) -c"$c" -d${warmup_seconds}s -s bench/pay.lua "http://127.0.0.1:$port" >/dev/null
done

# One measurement: the rate, and the CPU per pay of payonce, of the database's core (MariaDB, Redis and
# the generator) and of the broker, as a line "mode clients rate payonce_ms database_side_ms broker_ms".
measure() {
    local mode=$1 clients=$2 app0 db0 redis0 mq0 app1 db1 redis1 mq1 gen count
    app0=$(ticks "$app_pid"); db0=$(ticks "$mariadb_pid"); redis0=$(ticks "$redis_pid"); mq0=$(ticks "$(pgrep -x beam.smp | head -n 1)")
    shift 2
    /usr/bin/time -f "%U %S" -o "$out/time.txt" "$@" >"$out/last.txt"
    app1=$(ticks "$app_pid"); db1=$(ticks "$mariadb_pid"); redis1=$(ticks "$redis_pid"); mq1=$(ticks "$(pgrep -x beam.smp | head -n 1)")
    gen=$(awk '{printf "%d", ($1 + $2) * 100}' "$out/time.txt")
    if [ "$mode" = ceiling ]; then
        count=$(awk '/transactions:/ {print $2}' "$out/last.txt")
    else
        count=$(tail -n 1 "$out/last.txt" | cut -f3)
    fi
    awk -v mode="$mode" -v c="$clients" -v n="$count" -v s=$seconds -v app=$((app1 - app0)) \
        -v side=$((db1 - db0 + redis1 - redis0 + gen)) -v mq=$((mq1 - mq0)) \
        'BEGIN {printf "%s\t%d\t%.1f\t%.2f\t%.2f\t%.2f\n", mode, c, n / s, (mode == "ceiling" ? 0 : app * 10 / n), side * 10 / n, mq * 10 / n}'
}

: >"$out/results.tsv"
for c in "${concurrencies[@]}"; do
    threads=$(( c < 2 ? 1 : 2 ))
    for round in $(seq 1 $rounds); do
        log "$c clients, round $round: ceiling, then payonce"
        read -r first step < <(bench seed-orders $database 60000 | tail -n 1)
        : "${step:?PayBench seed-orders printed no step: the bench classes are older than this script; rebuild them}"
        measure ceiling "$c" taskset -c $database_core sysbench "$root/bench/ceiling.lua" --db-driver=mysql --mysql-host=127.0.0.1 \
            --mysql-port=$PAYONCE_DB_PORT --mysql-user="$PAYONCE_DB_USER" --mysql-password="$PAYONCE_DB_PASSWORD" \
            --mysql-db=$database --threads="$c" --time=$seconds --first_order="$first" --order_step="$step" --orders=60000 run >>"$out/results.tsv"
        bench prepare $database 30000 "$out/pays-$c.txt"
        measure payonce "$c" env MODE=pay CLIENTS="$c" PAYS="$out/pays-$c.txt" THREADS=$threads \
            taskset -c $database_core wrk -t$threads -c"$c" -d${seconds}s -s bench/pay.lua "http://127.0.0.1:$port" >>"$out/results.tsv"
    done
done

{
    echo "# payonce on a core of its own"
    echo
    echo "Command: \`bench/pinned.sh\` ($(date -u +%Y-%m-%d)). Machine: $(nproc) cores. A MariaDB $(mariadb -h127.0.0.1 -P$PAYONCE_DB_PORT -uroot -N -e 'SELECT VERSION()')"
    echo "and a Redis of the run's own and the load generators (sysbench, wrk) pinned to core $database_core; payonce (the JVM, one"
    echo "event loop, warmed up by ${warmup_seconds} s of pays at each concurrency) pinned to core $payonce_core. At each concurrency the ceiling"
    echo "(bench/ceiling.lua, the minimal correct pay SQL) and payonce's POST /orders/{id}/pay alternate, ${seconds} s each, $rounds rounds;"
    echo "the table gives their means. The database's core is the same for both, so the ratio says how close payonce comes"
    echo "to the database's ceiling when its own CPU is not taken from the database (bench/floors.md)."
    echo
    echo "| clients | ceiling /s | payonce /s | payonce / ceiling | target | payonce ms per pay | database core ms per pay, ceiling | database core ms per pay, payonce | broker ms per pay |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v rounds=$rounds '{rate[$2][$1] += $3 / rounds; side[$2][$1] += $5 / rounds; if ($1 == "payonce") {app[$2] += $4 / rounds; mq[$2] += $6 / rounds}}
        END {n = split("'"${concurrencies[*]}"'", cs, " ")
             for (i = 1; i <= n; i++) {c = cs[i]; ratio = rate[c]["payonce"] / rate[c]["ceiling"]; target = c == 1 ? 0.6 : 0.8
                 printf "| %d | %.0f | %.0f | %.2f | %s | %.2f | %.2f | %.2f | %.2f |\n", c, rate[c]["ceiling"], rate[c]["payonce"], ratio,
                     (ratio >= target ? "met" : "short") " (" target ")", app[c], side[c]["ceiling"], side[c]["payonce"], mq[c]}}' "$out/results.tsv"
    echo
    echo "Raw results (mode, clients, per second, payonce ms per pay, database core ms per pay, broker ms per pay):"
    echo
    echo '```'
    cat "$out/results.tsv"
    echo '```'
} >bench/pinned.md
log "report: bench/pinned.md"
