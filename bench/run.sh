#!/usr/bin/env bash
# Benchmarks payonce against the database's own ceiling, in one run, on the same MariaDB and Redis:
# at each concurrency the minimal correct pay transaction driven by sysbench (bench/ceiling.lua, a
# warm generator in C), payonce's own statements and Redis calls from the same script (the design
# reference) and POST /orders/{id}/pay on the packaged JVM app driven by wrk, for the same duration
# one after the other, then the same pays as commands through RabbitMQ at the same number in flight,
# then replays; redis-benchmark SET NX PX, a duplicate storm, latency at fixed rates, startup time and
# memory. Loopback only; bounded. Needs wrk, sysbench, gnuplot and the RabbitMQ on 127.0.0.1:5672.
#
#   bench/run.sh [--no-build]            payonce on the JVM: bench/report.md and bench/throughput.png
#   bench/run.sh --native [--no-build]   the native executable (built with the toolchain .ci/run sets up,
#                                        ~/.cache/payonce-native): bench/report-native.md, bench/throughput-native.png
#   bench/run.sh --galera                one MariaDB beside a three-node Galera cluster, each against its own
#                                        ceiling, on the JVM: bench/galera-cost.md (bench/galera-cost.sh, which
#                                        reuses the packaged app and bench classes when they are there)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/bench"
database=payonce_bench
port=18090
url="http://127.0.0.1:$port"
concurrencies=(1 8 16 32 64)
wrk_seconds=8
rounds=2
# Warm-up per concurrency measured, before the first measurement.
warmup_seconds=20
# payonce shares the two cores with MariaDB, Redis and the load generator: one event loop, so that a
# pay's statements and its HTTP answer never cross threads (Quarkus's default is two per core).
event_loops=${QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE:-1}
# The broker path: the run's own command queue and events exchange, pay commands heard from the broker's
# loopback user, and as many commands in flight as the most clients measured, so that the load
# generator, not the setting, decides how many are in flight (as wrk's connections do over HTTP).
commands=payonce.bench.commands
commands_in_flight=${concurrencies[-1]}

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
broker_pid() { pgrep -x beam.smp | head -n 1; }
questions() { mariadb -h127.0.0.1 -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'; }
bytes_sent() { mariadb -h127.0.0.1 -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Bytes_sent'" | awk '{print $2}'; }

# The Redis the instance uses: the server listening on its port.
redis_pid() { pgrep -f "redis-server 127.0.0.1:${PAYONCE_REDIS_PORT:-6379}" | head -n 1; }
# From one scrape of the instance's metrics: the pays that went on without the Redis lock so far
# (payonce_lock_degraded_total), and the pipelined pay transactions, committed and in all
# (payonce_pipelined_transactions_total).
counters() {
    curl -sf "$(management_url $port)/q/metrics" | awk '
        /^payonce_lock_degraded_total/ {unlocked += $2}
        /^payonce_pipelined_transactions_total/ {all += $2; if (/outcome="committed"/) committed += $2}
        END {printf "%d %d %d", unlocked, committed, all}'
}

# Runs one measurement (a command that prints one result line whose third field is the number of
# payments) and records the CPU milliseconds per payment spent by payonce, MariaDB, Redis, the load
# generator and RabbitMQ, the statements per payment and the bytes MariaDB sent for them, and the pays
# that went without the lock, and the pipelined pay transactions that committed, of all attempted
# (a pay whose pipelined attempt did not commit runs its statements again one at a time): where the
# time goes when the cores are shared. The instance measured is the one at $app_pid and $port.
with_cpu() {
    local label=$1 app0 db0 redis0 q0 mq0 b0 counted0 app1 db1 redis1 q1 mq1 b1 counted1 line payments; shift
    # The scrapes lie outside the ticks counted: payonce's CPU is the measurement's alone.
    counted0=($(counters))
    app0=$(ticks "$app_pid"); db0=$(ticks "$(pgrep -x mariadbd)"); redis0=$(ticks "$(redis_pid)"); q0=$(questions)
    mq0=$(ticks "$(broker_pid)"); b0=$(bytes_sent)
    line=$(/usr/bin/time -f "%U %S" -o "$out/time.txt" "$@" | tail -n 1)
    app1=$(ticks "$app_pid"); db1=$(ticks "$(pgrep -x mariadbd)"); redis1=$(ticks "$(redis_pid)"); q1=$(questions)
    mq1=$(ticks "$(broker_pid)"); b1=$(bytes_sent)
    counted1=($(counters))
    payments=$(echo "$line" | cut -f3)
    awk -v label="$label" -v app=$((app1 - app0)) -v db=$((db1 - db0)) -v redis=$((redis1 - redis0)) -v q=$((q1 - q0)) \
        -v unlocked=$((counted1[0] - counted0[0])) -v mq=$((mq1 - mq0)) -v bytes=$((b1 - b0)) -v n="$payments" \
        -v committed=$((counted1[1] - counted0[1])) -v attempted=$((counted1[2] - counted0[2])) \
        '{printf "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%d\t%.2f\t%.0f\t%d of %d\n", label, app * 10 / n, db * 10 / n, redis * 10 / n,
            ($1 + $2) * 1000 / n, q / n, unlocked, mq * 10 / n, bytes / n, committed, attempted}' \
        "$out/time.txt" >>"$out/cpu.tsv"
    echo "$line"
}

source "$root/bench/app-env.sh"
log() { printf '%s bench: %s\n' "$(date +%T)" "$*" >&2; }
bench() { java -Xmx1g -cp "$classpath" io.payonce.bench.PayBench "$@"; }

source "$root/bench/ceiling.sh"
# with_cpu runs the ceiling under time(1), which needs a program: bash, with the function and what it reads.
export -f ceiling
export root out database

cleanup() {
    local pid
    for pid in ${app_pid:-} ${tracing_pids[@]:-} ${sink_pid:-}; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

native=0 build=1
optimized_stamp=target/native-optimized.stamp
for arg in "$@"; do
    case "$arg" in
        --native) native=1 ;;
        --no-build) build=0 ;;
        --galera) [ $# = 1 ] || { echo "usage: $0 --galera (alone)" >&2; exit 2; }; exec bash "$root/bench/galera-cost.sh" ;;
        *) echo "usage: $0 [--native] [--no-build] | --galera" >&2; exit 2 ;;
    esac
done
if [ $native = 1 ]; then
    suffix=-native kind="a native executable"
    app=(target/payonce-1.0.0-SNAPSHOT-runner)
    # -Dnative optimises as a release does; the executable ./mvnw verify leaves behind is a quick build
    # for the tests, so it is reused only when the stamp this script writes is newer. The executable
    # keeps its local symbols (a release's drops them), so that perf names the methods it samples: without
    # them the profile below saw one symbol for all of payonce's code.
    [ $build = 1 ] || [ ! -x "${app[0]}" ] || [ ! "$optimized_stamp" -nt "${app[0]}" ] \
        && build_command=(env JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 ./mvnw -B -q package -DskipTests -Dnative
            -Dquarkus.native.additional-build-args=-H:-DeleteLocalSymbols)
else
    suffix= kind="the JVM"
    app=(java -jar target/quarkus-app/quarkus-run.jar)
    [ $build = 1 ] || [ ! -f target/quarkus-app/quarkus-run.jar ] && build_command=(./mvnw -B -q package -DskipTests -DskipNative)
fi
report="bench/report$suffix.md"
plot="throughput$suffix.png"

rm -rf "$out" && mkdir -p "$out"
if [ -n "${build_command:-}" ]; then
    log "building the packaged application ($kind)"
    "${build_command[@]}"
    [ $native = 0 ] || touch "$optimized_stamp"
fi
classpath=$(bench_classpath "$root")
# The broker's load generator: a small heap and the client compiler alone, so that it starts and warms
# cheaply beside payonce on the shared cores.
command_bench=(java -Xmx256m -XX:TieredStopAtLevel=1 -cp "$classpath" io.payonce.bench.CommandBench)
mariadb -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $database"
bench_database_user $database

# Starts an instance of the build measured, with HTTP on port $1 (management on $1 + 1000), its
# output in $2 and the settings that follow (NAME=value) beside the run's own, and waits until it is
# ready; its pid is left in $instance_pid. A port already taken (an instance a failed run left behind)
# stops the run: its readiness would be taken for the new instance's.
start_instance() {
    local http_port=$1 output=$2 deadline=$((SECONDS + 120)); shift 2
    if [ -n "$(ss -Htln "( sport = :$http_port or sport = :$((http_port + 1000)) )")" ]; then
        log "port $http_port or $((http_port + 1000)) is taken; stop what listens there"; exit 1
    fi
    (payonce_env "$http_port" && PAYONCE_JWT_PUBLIC_KEY_LOCATION="$root/src/test/resources/jwt/publicKey.pem" \
        PAYONCE_DB_POOL_SIZE=${PAYONCE_DB_POOL_SIZE:-20} QUARKUS_VERTX_EVENT_LOOPS_POOL_SIZE=$event_loops \
        PAYONCE_EVENTS_EXCHANGE=payonce.bench.events PAYONCE_COMMANDS_PAY_SENDERS=guest exec env "$@" "${app[@]}") >"$output" 2>&1 &
    instance_pid=$!
    until curl -sf "$(management_url "$http_port")/q/health/ready" >/dev/null 2>&1; do
        kill -0 "$instance_pid" 2>/dev/null || { log "the instance on port $http_port stopped; see $output"; exit 1; }
        [ $SECONDS -lt $deadline ] || { log "the instance on port $http_port was not ready in 120 s; see $output"; exit 1; }
        sleep 0.02
    done
}

log "starting payonce ($kind)"
start_ms=$(date +%s%3N)
start_instance $port "$out/app.log" PAYONCE_COMMANDS_QUEUE=$commands PAYONCE_COMMANDS_IN_FLIGHT=$commands_in_flight
app_pid=$instance_pid
startup_ms=$(( $(date +%s%3N) - start_ms ))
bench seed $database
bench pay $database "$url" 8 1000 >"$out/first-1000.tsv"
rss_kb=$(awk '/VmRSS/ {print $2}' /proc/$app_pid/status)
log "startup ${startup_ms} ms, RSS after 1,000 pays ${rss_kb} kB; warming up"
# Pays at every concurrency before anything is measured: on the JVM, C2 was still compiling the pay path
# after 15 s and took a third of payonce's CPU in the first measured run; and a warm-up at 32 clients alone
# left the event loop's idle-and-wake path (one client) to be compiled during the 1-client run, which then
# charged payonce twice the CPU per pay it costs warm. The references need no warm-up.
# Each concurrency warms up on pays of its own, so that none is a replay of another's.
bench prepare $database $(( ${#concurrencies[@]} * 30000 )) "$out/warmup.txt"
split -n l/${#concurrencies[@]} -d "$out/warmup.txt" "$out/warmup-"
for i in "${!concurrencies[@]}"; do
    c=${concurrencies[$i]}
    MODE=warmup CLIENTS=$c PAYS="$out/warmup-0$i" THREADS=$(( c < 2 ? 1 : 2 )) \
        wrk -t$(( c < 2 ? 1 : 2 )) -c"$c" -d${warmup_seconds}s -s bench/pay.lua "$url" >/dev/null
done
# The broker path warms up the same way: the consumer's own code, the replies' publishing and the client's.
for c in "${concurrencies[@]}"; do
    "${command_bench[@]}" prepare $database 30000 "$out/command-warmup.txt"
    "${command_bench[@]}" commands "$out/command-warmup.txt" $commands "$c" $((warmup_seconds / 2)) >/dev/null
done

results="$out/results.tsv"
: >"$results"
: >"$out/cpu.tsv"
for c in "${concurrencies[@]}"; do
    threads=$(( c < 2 ? 1 : 2 ))
    # Ceiling, design reference and payonce alternate, so that what disturbs the machine disturbs
    # them alike; each measured on data seeded before it, so that seeding is not timed.
    for round in $(seq 1 $rounds); do
        log "concurrency $c, round $round: ceiling, design reference, payonce over HTTP and by command"
        seeded=$(bench seed-orders $database 60000 | tail -n 1)
        with_cpu "$c clients: ceiling, the minimal pay SQL (sysbench), round $round" \
            bash -c 'ceiling "$@"' ceiling ceiling "$c" $wrk_seconds "$seeded" 60000 >>"$results"
        seeded=$(bench seed-orders $database 60000 | tail -n 1)
        with_cpu "$c clients: design reference, payonce's statements and Redis calls (sysbench), round $round" \
            bash -c 'ceiling "$@"' ceiling design "$c" $wrk_seconds "$seeded" 60000 >>"$results"
        bench prepare $database 30000 "$out/pays-$c.txt"
        with_cpu "$c clients: payonce, POST /orders/{id}/pay, round $round" \
            env MODE=pay CLIENTS="$c" PAYS="$out/pays-$c.txt" THREADS=$threads \
            wrk -t$threads -c"$c" -d${wrk_seconds}s -s bench/pay.lua "$url" >>"$results"
        "${command_bench[@]}" prepare $database 30000 "$out/commands-$c.txt"
        with_cpu "$c in flight: payonce, pay commands through RabbitMQ, round $round" \
            "${command_bench[@]}" commands "$out/commands-$c.txt" $commands "$c" $wrk_seconds >>"$results"
    done
    log "concurrency $c: replays"
    # Replays: exactly the pays of the last round, again and again with their keys.
    head -n "$(tail -n 1 "$results" | cut -f3)" "$out/pays-$c.txt" >"$out/replays-$c.txt"
    with_cpu "$c clients: payonce, replays" env MODE=replay CLIENTS="$c" PAYS="$out/replays-$c.txt" THREADS=$threads \
        wrk -t$threads -c"$c" -d${wrk_seconds}s -s bench/pay.lua "$url" >>"$results"
done
# Where payonce's CPU goes: one more run of HTTP pays at 16 clients, not counted above, sampled by perf
# (self time, 499 Hz). On the JVM, the JIT's symbols come from a perf map the JVM writes on request.
# Then the same for pay commands at 16 in flight, so that the broker path's profile reads beside HTTP's.
log "profile at 16 clients (perf), then 16 commands in flight"
bench prepare $database 30000 "$out/pays-profile.txt"
perf record -q -F 499 -o "$out/perf.data" -p "$app_pid" -- sleep "$wrk_seconds" 2>/dev/null &
perf_pid=$!
MODE=profile CLIENTS=16 PAYS="$out/pays-profile.txt" THREADS=2 wrk -t2 -c16 -d${wrk_seconds}s -s bench/pay.lua "$url" >/dev/null
wait $perf_pid
"${command_bench[@]}" prepare $database 30000 "$out/commands-profile.txt"
perf record -q -F 499 -o "$out/perf-commands.data" -p "$app_pid" -- sleep "$wrk_seconds" 2>/dev/null &
perf_pid=$!
"${command_bench[@]}" commands "$out/commands-profile.txt" $commands 16 $wrk_seconds >/dev/null
wait $perf_pid
# The native executable's symbols carry no package: the classes it was built from say which component each is.
classes=
if [ $native = 1 ]; then
    sources=target/payonce-1.0.0-SNAPSHOT-native-image-source-jar classes="$out/classes.tsv"
    bench/class-index.sh "$sources"/*.jar "$sources"/lib/*.jar >"$classes"
else
    jcmd "$app_pid" Compiler.perfmap >/dev/null
fi
for path in http commands; do
    data=$([ $path = http ] && echo perf.data || echo perf-commands.data)
    perf report -i "$out/$data" --no-children --sort dso,sym --stdio 2>/dev/null >"$out/perf-$path.txt"
    awk -v classes="$classes" -f bench/cpu-by-component.awk "$out/perf-$path.txt" \
        | sort -t$'\t' -k2,2nr >"$out/components-$path.tsv"
    awk '!/^#/ && NF && shown++ < 25' "$out/perf-$path.txt" >"$out/top-symbols-$path.txt"
done

# What tracing costs per pay: five more instances of the same build side by side, each on ports of
# its own, warmed up alike and measured in turn at 16 clients, one for each way tracing can run: not
# at all (the OpenTelemetry SDK disabled, so no trace id reaches logs and problems: the reference),
# export off (the default), export off with a span opened around each SQL statement and Redis command
# as Quarkus does by default (what io.payonce.tracing.StatementSpans saves), and export on keeping 10 %
# of the traces payonce starts or all of them (PAYONCE_TRACES_SAMPLED, whose default is 1). wrk sends no traceparent, so payonce starts every trace.
# Spans go over OTLP/HTTP to nginx on loopback, which takes each export, logs its size and answers an
# empty 200: a collector that costs little, whose CPU is counted beside payonce's.
tracing_modes=(none off off-statement-spans sampled-10 sampled-100)
tracing_settings() {
    local exported=(PAYONCE_TRACING_EXPORTER=otlp QUARKUS_OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf
        QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:$sink_port)
    case $1 in
        none) echo QUARKUS_OTEL_SDK_DISABLED=true ;;
        off) echo PAYONCE_TRACING_EXPORTER=none ;;
        off-statement-spans) echo QUARKUS_OTEL_INSTRUMENT_VERTX_SQL_CLIENT=true QUARKUS_OTEL_INSTRUMENT_VERTX_REDIS_CLIENT=true ;;
        sampled-10) echo "${exported[*]} PAYONCE_TRACES_SAMPLED=0.1" ;;
        sampled-100) echo "${exported[*]} PAYONCE_TRACES_SAMPLED=1" ;;
    esac
}
sink_port=14318
mkdir -p "$out/sink"
cat >"$out/sink/nginx.conf" <<SINK
daemon off;
worker_processes 1;
pid $out/sink/nginx.pid;
error_log $out/sink/error.log;
events {}
http {
    client_body_temp_path $out/sink/body;
    proxy_temp_path $out/sink/proxy;
    fastcgi_temp_path $out/sink/fastcgi;
    uwsgi_temp_path $out/sink/uwsgi;
    scgi_temp_path $out/sink/scgi;
    client_max_body_size 64m;
    log_format size "\$status \$http_content_length";
    server {
        listen 127.0.0.1:$sink_port;
        access_log $out/sink/exports.log size;
        location / { default_type application/x-protobuf; return 200 ""; }
    }
}
SINK
nginx -c "$out/sink/nginx.conf" -e "$out/sink/error.log" &
sink_pid=$!
until curl -sf -o /dev/null -X POST "http://127.0.0.1:$sink_port/v1/traces"; do
    kill -0 "$sink_pid" 2>/dev/null || { log "nginx, the collector, did not start; see $out/sink/error.log"; exit 1; }
    sleep 0.1
done
sink_ticks() { local total=0 pid; for pid in $sink_pid $(pgrep -P "$sink_pid"); do total=$((total + $(ticks "$pid"))); done; echo $total; }
# The bytes of the exports the collector accepted so far.
exported_bytes() { awk '$1 == 200 {n += $2} END {printf "%d", n}' "$out/sink/exports.log"; }
# A JVM warmed up for 20 s at one concurrency still paid twice the main instance's CPU per pay (C2 at
# work), more than the differences measured here: on the JVM each instance warms up three times as long.
tracing_warmup=$(( native == 1 ? warmup_seconds : 3 * warmup_seconds ))
declare -A tracing_pid tracing_port
tracing_pids=()
for i in "${!tracing_modes[@]}"; do
    mode=${tracing_modes[$i]}
    tracing_port[$mode]=$((port + 1 + i))
    log "tracing: starting an instance with $mode"
    # shellcheck disable=SC2046 # the settings are words NAME=value
    start_instance "${tracing_port[$mode]}" "$out/app-tracing-$mode.log" PAYONCE_COMMANDS_QUEUE=payonce.bench.tracing-$mode \
        PAYONCE_COMMANDS_IN_FLIGHT=1 $(tracing_settings "$mode")
    tracing_pid[$mode]=$instance_pid
    tracing_pids+=("$instance_pid")
    bench prepare $database 30000 "$out/tracing-warmup-$mode.txt"
    MODE=warmup CLIENTS=16 PAYS="$out/tracing-warmup-$mode.txt" THREADS=2 \
        wrk -t2 -c16 -d${tracing_warmup}s -s bench/pay.lua "http://127.0.0.1:${tracing_port[$mode]}" >/dev/null
done
# The exports of the warm-ups reach the collector before anything is measured.
sleep 6
: >"$out/tracing.tsv"
for round in $(seq 1 $rounds); do
    for mode in "${tracing_modes[@]}"; do
        log "tracing: $mode, round $round"
        bench prepare $database 30000 "$out/tracing-$mode.txt"
        sink0=$(sink_ticks); bytes0=$(exported_bytes)
        line=$(app_pid=${tracing_pid[$mode]} port=${tracing_port[$mode]} with_cpu "16 clients: tracing $mode in round $round" \
            env MODE="tracing-$mode" CLIENTS=16 PAYS="$out/tracing-$mode.txt" THREADS=2 \
            wrk -t2 -c16 -d${wrk_seconds}s -s bench/pay.lua "http://127.0.0.1:${tracing_port[$mode]}")
        echo "$line" >>"$results"
        # The batch processor sends what it holds within 5 s (its schedule delay): wait for the last
        # export before reading what the collector received.
        case $mode in sampled-*) sleep 6 ;; esac
        printf '%s\t%s\t%d\t%d\n' "$mode" "$(echo "$line" | cut -f3)" $(( $(sink_ticks) - sink0 )) $(( $(exported_bytes) - bytes0 )) >>"$out/tracing.tsv"
    done
done
kill "${tracing_pids[@]}" "$sink_pid" 2>/dev/null || true
wait "${tracing_pids[@]}" "$sink_pid" 2>/dev/null || true
tracing_pids=() sink_pid=

# The outbox relay at the highest pay rate measured: the clients that reached it pay for twice as long
# as a round while the age of the oldest unsent event is sampled.
busiest=$(awk -F'\t' '$1 == "pay" {r[$2] += $5} END {for (c in r) if (r[c] > max) {max = r[c]; best = c}; print best}' "$results")
log "outbox relay at $busiest clients"
bench prepare $database 40000 "$out/pays-outbox.txt"
bench outbox-lag $database $((2 * wrk_seconds)) >"$out/outbox-lag.tsv" &
lag_pid=$!
MODE=outbox CLIENTS="$busiest" PAYS="$out/pays-outbox.txt" THREADS=2 wrk -t2 -c"$busiest" -d$((2 * wrk_seconds))s -s bench/pay.lua "$url" >>"$results"
wait $lag_pid
log "redis-benchmark SET NX PX"
redis_set=$(redis-benchmark -h 127.0.0.1 -q -n 200000 -c 32 -r 10000000 SET payonce:bench:__rand_int__ owner NX PX 5000 \
    | tr '\r' '\n' | awk '/requests per second/ {print $(NF-5)}' | tail -n 1)
log "duplicate storm"
bench storm $database "$url" 1000 >>"$results"
peak=$(awk -F'\t' '$1 == "pay" && $5 > max {max = $5} END {printf "%d", max}' "$results")
for share in 25 50 75; do
    rate=$(( peak * share / 100 ))
    log "fixed rate $rate/s ($share% of peak $peak/s)"
    bench rate $database "$url" "$rate" 10 >>"$results"
done

# The report: tables from results.tsv, ratios side by side, and a plot.
awk -F'\t' -v OFS='\t' '$1 == "ceiling" || $1 == "design" || $1 == "pay" || $1 == "replay" || $1 == "command" {print $2, $1, $5}' "$results" \
    | awk -F'\t' '{v[$1][$2] += $3; k[$1][$2]++}
        END {for (c in v) print c "\t" v[c]["ceiling"] / k[c]["ceiling"] "\t" v[c]["design"] / k[c]["design"] "\t" v[c]["pay"] / k[c]["pay"] "\t" v[c]["replay"] / k[c]["replay"] "\t" v[c]["command"] / k[c]["command"]}' \
    | sort -n >"$out/throughput.tsv"
# First pays on the left axis, replays (several times faster) on the right one, so that the ceiling,
# the design reference and payonce are not squeezed flat under the replays; the key below the plot.
cat >"$out/throughput.gp" <<PLOT
set terminal pngcairo size 900,560
set output '$root/bench/$plot'
set title 'pay throughput by concurrency (same MariaDB, same run)'
set xlabel 'concurrent clients'
set ylabel 'first pays per second'
set y2label 'replays per second'
set logscale x 2
set yrange [0:*]
set y2range [0:*]
set ytics nomirror
set y2tics
set key outside below
plot '$out/throughput.tsv' using 1:2 with linespoints lw 2 title 'ceiling: the minimal pay SQL (sysbench)', \
     '' using 1:3 with linespoints lw 2 title 'design reference: payonce statements and Redis calls (sysbench)', \
     '' using 1:4 with linespoints lw 2 title 'payonce: POST /orders/{id}/pay', \
     '' using 1:6 with linespoints lw 2 title 'payonce: pay commands through RabbitMQ (same number in flight)', \
     '' using 1:5 axes x1y2 with linespoints lw 2 dt 2 title 'payonce: replays (right axis)'
PLOT
gnuplot "$out/throughput.gp"
{
    echo "# payonce benchmarks"
    echo
    echo "Command: \`bench/run.sh\` ($(date -u +%Y-%m-%d)). Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo),"
    echo "$(mariadb -h127.0.0.1 -uroot -N -e 'SELECT VERSION()') and Redis $(redis-server --version | awk '{print $3}' | cut -d= -f2) on loopback,"
    echo "$(java -version 2>&1 | head -n 1), payonce as $kind with a reactive pool of ${PAYONCE_DB_POOL_SIZE:-20} connections and"
    echo "$event_loops event loop(s), warmed up by ${warmup_seconds} s of pays at each concurrency before the first measurement."
    echo "Load generator, database and service share the machine's cores, so every figure includes their contention."
    echo
    echo "## Throughput: payonce beside the database's ceiling"
    echo
    echo "The ceiling is the minimal correct pay transaction with payonce's guarantees (BEGIN; claim INSERT; CAS UPDATE;"
    echo "pay_record INSERT; conditional debit UPDATE; ledger INSERT; outbox INSERT; answer UPDATE; COMMIT), driven by"
    echo "sysbench (bench/ceiling.lua: server-side prepared statements, one connection per client). The design reference"
    echo "is payonce's own pay without payonce: its statements as it sends them (the order read, which brings the key's"
    echo "stored answer in the same statement, before the lock, then the transaction) and its two Redis calls (SET NX PX, the owner-only release script),"
    echo "from the same sysbench script (--design=on). Ceiling over design reference is the cost of payonce's design;"
    echo "design reference over payonce is the cost of its implementation (HTTP, JWT, JSON, the reactive clients)."
    echo "Each runs for the same ${wrk_seconds} s as payonce, the three alternating ($rounds rounds at each concurrency; the table"
    echo "gives their means, the raw results each round). payonce pays fresh orders with fresh keys, as a user's"
    echo "client would with its bearer token; replays send the last round's pays again."
    echo
    echo "Target: payonce at 0.8 of the ceiling or more from 8 to 64 clients, 0.6 or more at 1 client; replays at 3"
    echo "times first pays or more; no pay without the lock."
    echo
    echo "| clients | ceiling /s | design reference /s | payonce /s | payonce / ceiling | target | payonce / design | replays /s | replay / first | payonce p50 / p99 / p99.9 ms |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for c in "${concurrencies[@]}"; do
        awk -F'\t' -v c="$c" -v rounds="$rounds" '$2 == c {r[$1] += $5 / ($1 == "replay" ? 1 : rounds); if ($1 == "pay") lat = $6 " / " $7 " / " $8}
            END {ratio = r["pay"] / r["ceiling"]; target = c == 1 ? 0.6 : 0.8
                 printf "| %d | %.0f | %.0f | %.0f | %.2f | %s | %.2f | %.0f | %.2f | %s |\n", c, r["ceiling"], r["design"], r["pay"], ratio,
                 (ratio >= target ? "met" : "short") " (" target ")", r["pay"] / r["design"], r["replay"], r["replay"] / r["pay"], lat}' "$results"
    done
    echo
    echo "Where a target is short, [floors.md](floors.md) gives the floor measured, its profile and the design that would"
    echo "pass it, for this section and the next."
    echo
    echo "Redis \`SET key owner NX PX 5000\` (redis-benchmark, 32 clients): $redis_set per second."
    echo
    echo "![throughput by concurrency]($plot)"
    echo
    echo "## The broker path beside HTTP"
    echo
    echo "The same pays sent as pay commands to payonce's queue (bench/java/io/payonce/bench/CommandBench.java: persistent,"
    echo "signed by the broker's loopback user, keyed by message-id, each replied to a reply queue of the generator's own),"
    echo "in a closed loop that keeps as many commands in flight as wrk keeps connections, for the same ${wrk_seconds} s, alternating"
    echo "with the HTTP pays in every round. payonce runs with PAYONCE_COMMANDS_IN_FLIGHT=$commands_in_flight, so that the generator"
    echo "decides how many are in flight. A command counts when its reply has come: after its transaction committed, its"
    echo "reply was confirmed by the broker and the command acked. CPU per pay is payonce's, after the warm-up, from the CPU"
    echo "table below; the broker's own CPU is beside it there. The generator is a Java program (the RabbitMQ client), not"
    echo "a C one like wrk: its CPU per command, in the load generator column, is taken from the same two cores."
    echo
    echo "Targets: commands per second at least 0.8 of HTTP pays per second, and payonce's CPU per command at most 1.2 of"
    echo "its CPU per HTTP pay, at each number in flight."
    echo
    echo "| in flight | HTTP pays /s | commands /s | commands / HTTP | target | payonce ms per HTTP pay | per command | command / HTTP | target | command p50 / p99 / p99.9 ms |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' -v rounds="$rounds" '
        FNR == NR {split($1, words, " "); c = words[1]
                   if ($1 ~ /payonce, POST/) {http[c] += $2 / rounds}
                   if ($1 ~ /pay commands/) {cmd[c] += $2 / rounds}
                   next}
        $1 == "pay" {pays[$2] += $5 / rounds}
        $1 == "command" {commands[$2] += $5 / rounds; lat[$2] = $6 " / " $7 " / " $8}
        END {n = split("'"${concurrencies[*]}"'", cs, " ")
             for (i = 1; i <= n; i++) {c = cs[i]; rate = commands[c] / pays[c]; cpu = cmd[c] / http[c]
                 printf "| %d | %.0f | %.0f | %.2f | %s | %.2f | %.2f | %.2f | %s | %s |\n", c, pays[c], commands[c], rate,
                     (rate >= 0.8 ? "met" : "short") " (0.8)", http[c], cmd[c], cpu, (cpu <= 1.2 ? "met" : "short") " (1.2)", lat[c]}}' \
        "$out/cpu.tsv" "$results"
    echo
    echo "## Where the CPU goes"
    echo
    echo "payonce is driven by wrk and the references by sysbench, both C load generators (bench/pay.lua, bench/ceiling.lua),"
    echo "so that the generators take little of the two shared cores; the orders are seeded before each run is timed."
    echo
    echo "CPU milliseconds per payment, from /proc for payonce, mariadbd and redis-server and from time(1) for the load"
    echo "generator; the statements MariaDB executed per payment (its Questions counter); and the pays that went on"
    echo "without the Redis lock (payonce_lock_degraded_total), which must be 0:"
    echo
    echo "| run | payonce ms | MariaDB ms | Redis ms | load generator ms | RabbitMQ ms | statements | bytes MariaDB sent | pays without the lock | pipelined transactions committed |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F'\t' '{s = $1 ~ /sysbench/; c = $1 ~ /ceiling/
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, (s ? "-" : $2), $3, (c ? "-" : $4), $5, $8, $6, $9, (s ? "-" : $7), (s ? "-" : $10)}' "$out/cpu.tsv"
    echo
    echo "The bytes MariaDB sent per pay: payonce's are its reactive client's, the design reference's are sysbench's (libmariadb)"
    echo "for the same statements. The difference is the result set's column definitions, which MariaDB sends again with"
    echo "every execute of a prepared statement unless the client asked it to cache them (MariaDB's extended capability"
    echo "MARIADB_CLIENT_CACHE_METADATA, 10.6 and later): libmariadb asks, and the Vert.x MySQL client payonce runs on has no"
    echo "MariaDB extended capabilities at all (its CapabilitiesFlag class ends at CLIENT_OPTIONAL_RESULTSET_METADATA). Read from"
    echo "the clients' code and the byte counts, not captured on the wire. Only a read returns columns: the joined read"
    echo "before the lock is the one a pay sends; a client that caches metadata, or fewer columns in that read, would close it."
    echo
    echo "How to read it: the two cores are shared by the database, Redis, payonce and the generator, so throughput is"
    echo "about 2 cores divided by the CPU one payment costs. The ceiling pays for MariaDB and sysbench. The design"
    echo "reference adds what payonce's design asks of the stores: the order read that checks the owner before the lock"
    echo "and brings the stored answer that lets a repeat skip the lock and the transaction, and the two Redis round trips of"
    echo "the lock. payonce adds its own work per request: HTTP, the bearer token (its signature is checked once per"
    echo "token and remembered, see io.payonce.auth.VerifiedTokens), JSON, metrics, the fault-tolerance guards and the"
    echo "reactive clients; where the ratio falls short, the payonce column against the generator column of the design"
    echo "reference says how much of a core that work takes."
    echo
    # Each concurrency short of the target, with what bound it: how busy payonce's event loop was (pays per
    # second times payonce's CPU per pay, as a share of one core per loop), how busy the machine's cores
    # were (the same for every process of the run), and the CPU a pay cost in all beside the ceiling's.
    awk -F'\t' -v loops="$event_loops" -v rounds="$rounds" -v cores="$(nproc)" '
        FNR == NR {split($1, words, " "); c = words[1]
                   if ($1 ~ /payonce, POST/) {app[c] += $2; db[c] += $3; redis[c] += $4; gen[c] += $5; n[c]++}
                   if ($1 ~ /ceiling, the minimal/) {cdb[c] += $3; cgen[c] += $5; cn[c]++}
                   next}
        $1 == "ceiling" || $1 == "pay" {r[$2][$1] += $5}
        END {for (c in r) if (r[c]["pay"] / r[c]["ceiling"] < (c == 1 ? 0.6 : 0.8)) {
            rate = r[c]["pay"] / rounds; total = (app[c] + db[c] + redis[c] + gen[c]) / n[c]
            printf "%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.3f\n", c, rate * app[c] / n[c] / 1000 / loops,
                rate * total / 1000 / cores, total, app[c] / n[c], db[c] / n[c], redis[c] / n[c], gen[c] / n[c],
                (cdb[c] + cgen[c]) / cn[c], r[c]["pay"] / r[c]["ceiling"]}}' "$out/cpu.tsv" "$results" \
        | sort -n | while IFS=$'\t' read -r c loop machine total app db redis gen ceiling ratio; do
        percent() { awk -v b="$1" 'BEGIN {printf "%.0f", b * 100}'; }
        echo "Short of the target at $c clients ($ratio): payonce's event loop was $(percent "$loop")% busy ($event_loops loop(s)), the"
        echo "machine's $(nproc) cores $(percent "$machine")%. A pay cost $total ms of CPU in all (payonce $app, MariaDB $db, Redis $redis, wrk $gen)"
        echo "against the ceiling's $ceiling ms (MariaDB and sysbench)."
        if awk -v b="$machine" 'BEGIN {exit !(b >= 0.8)}'; then
            echo "The cores are the limit here: every process of the run shares them, so throughput follows the CPU a pay costs"
            echo "in all, and the ratio can rise only with less of it, in payonce (its CPU per request) or in MariaDB (fewer"
            echo "statements)."
        elif awk -v b="$loop" 'BEGIN {exit !(b >= 0.75)}'; then
            echo "payonce is bound by the CPU of its event loop here: only less work per request (the payonce column of the"
            echo "CPU table) closes the gap."
        else
            echo "payonce is bound by latency here, not by CPU: each client waits for a pay's 6 round trips (the read, two"
            echo "pipelined flights and COMMIT, 2 Redis calls), each also waiting its turn on the event loop, while the ceiling's"
            echo "9 statements go straight from sysbench's threads; only fewer round trips or less work per step close the gap."
        fi
        echo
    done
    echo "## Where payonce's CPU goes ($kind, 16 clients)"
    echo
    echo "perf's samples of payonce's process (self time, 499 Hz) during one more ${wrk_seconds} s of HTTP pays at 16 clients after"
    echo "the rounds above, summed by the part of the stack each symbol belongs to (bench/cpu-by-component.awk); the run"
    echo "for the other kind of build has the same table, so that the two read side by side. The native executable's"
    echo "symbols name a class without its package: each is looked up in an index of the classes it was built from"
    echo "(bench/class-index.sh: the JDK's, the native-image runtime's, the application's and its libraries'); \"ambiguous\""
    echo "is a simple name found in more than one component, \"outside the class index\" a class the builder generated."
    echo
    echo "The same for 16 pay commands in flight through RabbitMQ, right after. The milliseconds are each share of payonce's"
    echo "mean CPU per pay at 16 (HTTP) or per command at 16 in flight, from the CPU table above: where a command costs"
    echo "more than an HTTP pay."
    echo
    echo "| component | share of payonce's CPU, HTTP | ms per HTTP pay | share, commands | ms per command |"
    echo "|---|---|---|---|---|"
    awk -F'\t' '
        FILENAME ~ /cpu.tsv$/ {if ($1 ~ /^16 clients: payonce, POST/) {http += $2; nh++}; if ($1 ~ /^16 in flight: payonce, pay commands/) {cmd += $2; nc++}; next}
        FILENAME ~ /components-http.tsv$/ {h[$1] = $2; order[++n] = $1; next}
        {c[$1] = $2; if (!($1 in h)) order[++n] = $1}
        END {for (i = 1; i <= n; i++) {k = order[i]
            printf "| %s | %.1f%% | %.3f | %.1f%% | %.3f |\n", k, h[k], h[k] * http / nh / 100, c[k], c[k] * cmd / nc / 100}}' \
        "$out/cpu.tsv" "$out/components-http.tsv" "$out/components-commands.tsv"
    echo
    echo "The 25 hottest symbols over HTTP:"
    echo
    echo '```'
    cat "$out/top-symbols-http.txt"
    echo '```'
    echo
    echo "The 25 hottest symbols with commands:"
    echo
    echo '```'
    cat "$out/top-symbols-commands.txt"
    echo '```'
    echo
    echo "## What tracing, metrics and context propagation cost ($kind, 16 clients)"
    echo
    echo "Five more instances of the same build, each warmed up by ${tracing_warmup} s of pays at 16 clients, then measured in turn"
    echo "for ${wrk_seconds} s each, $rounds rounds: tracing not at all (none: the OpenTelemetry SDK disabled, no trace id in logs or"
    echo "problems, the reference), export off (off, the default: the request's span keeps only its ids, no span per SQL"
    echo "statement or Redis command), export off with those spans opened as Quarkus does by default (off-statement-spans:"
    echo "what io.payonce.tracing.StatementSpans saves), and export on keeping 10 % or all (PAYONCE_TRACES_SAMPLED's default)"
    echo "of the traces payonce starts. Export is OTLP over HTTP to nginx on loopback, which answers every export with an empty 200; its CPU is"
    echo "the collector's column. All the instances share the run's database, so the outbox relay's work (one instance at a"
    echo "time relays every instance's events) is spread over them alike."
    echo
    echo "| tracing | pays /s | against none | payonce ms per pay | against none | collector ms per pay | bytes exported per pay |"
    echo "|---|---|---|---|---|---|---|"
    awk -F'\t' -v rounds="$rounds" '
        FILENAME ~ /tracing.tsv$/ {pays[$1] += $2; sink[$1] += $3; bytes[$1] += $4; next}
        FILENAME ~ /cpu.tsv$/ {if ($1 ~ /: tracing /) {split($1, words, " "); cpu[words[4]] += $2 / rounds}; next}
        $1 ~ /^tracing-/ {mode = substr($1, 9); rate[mode] += $5 / rounds}
        END {n = split("'"${tracing_modes[*]}"'", modes, " ")
             for (i = 1; i <= n; i++) {m = modes[i]
                 printf "| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.0f |\n", m, rate[m], rate[m] / rate["none"], cpu[m],
                     cpu[m] / cpu["none"], sink[m] * 10 / pays[m], bytes[m] / pays[m]}}' "$out/tracing.tsv" "$out/cpu.tsv" "$results"
    echo
    echo "Metrics and context propagation cannot be switched off at run time (both are built in), so their cost is the"
    echo "share of payonce's CPU the profile above finds in them: metrics (Micrometer)"
    echo "$(awk -F'\t' '$1 ~ /^metrics/ {printf "%.1f %%", $2}' "$out/components-http.tsv"), context propagation and CDI"
    echo "$(awk -F'\t' '$1 ~ /^context propagation/ {printf "%.1f %%", $2}' "$out/components-http.tsv"), and tracing with export off"
    echo "$(awk -F'\t' '$1 ~ /^tracing/ {printf "%.1f %%", $2}' "$out/components-http.tsv")."
    echo
    echo "## The outbox relay at the highest pay rate"
    echo
    awk -F'\t' -v relay="$(cat "$out/outbox-lag.tsv")" '$1 == "outbox" {
        split(relay, lag, "\t")
        printf "%d clients paid %.0f times a second for %.0f s (the concurrency that reached the highest rate above). The age\n", $2, $5, $4
        printf "of the oldest unsent event, sampled every 100 ms by the database clock (%d samples): median %d ms, p99 %d ms,\n", lag[2], lag[3], lag[4]
        printf "maximum %d ms; %d events were unsent at the end. Target: under 2,000 ms throughout (%s).\n", lag[5], lag[6], (lag[5] < 2000 ? "met" : "short")
    }' "$results"
    echo "The relay runs every second (payonce.outbox.relay-every) and publishes to the run's own exchange, payonce.bench.events,"
    echo "with no queue bound to it: the broker confirms each event without storing it, so a bound queue's cost is not here."
    echo
    echo "## Duplicate storm: 1,000 identical pays at once"
    echo
    awk -F'\t' '$1 == "storm" {
        one = $10; sub(/.*statements_one_pay=/, "", one); sub(/[,}].*/, "", one)
        all = $10; sub(/.*statements_storm=/, "", all); sub(/[,}].*/, "", all)
        debits = $10; sub(/.*debits=/, "", debits); sub(/[,}].*/, "", debits)
        printf "Wall time %.2f s; answers by status %s; debits %s.\n\n", $4, $9, debits
        printf "Statements the server executed: %s for one payment, %s for the storm: the storm cost %.1f payments.\n", one, all, all / one
    }' "$results"
    echo
    echo "## Latency at a fixed rate (open loop, measured from each request's due time)"
    echo
    echo "wrk has no constant-rate mode, so this open loop is PayBench's JDK HttpClient, which costs about 1.1 ms of CPU"
    echo "per request on these same two cores (measured in an earlier run of this benchmark): from about a quarter of the"
    echo "peak on, the generator's own demand saturates the machine and the queueing below is largely its own."
    echo
    echo "| rate /s | share of peak | p50 ms | p99 ms | p99.9 ms | statuses |"
    echo "|---|---|---|---|---|---|"
    awk -F'\t' -v peak="$peak" '$1 ~ /^rate-/ {printf "| %d | %.0f%% | %s | %s | %s | %s |\n", $2, 100 * $2 / peak, $6, $7, $8, $9}' "$results"
    echo
    echo "## Startup and memory ($kind)"
    echo
    echo "Time from \`${app[*]}\` to the first successful readiness answer: ${startup_ms} ms. RSS after 1,000 pays: $((rss_kb / 1024)) MiB."
    echo
    echo "## Raw results"
    echo
    echo '```'
    echo "mode	clients	count	seconds	per_second	p50_ms	p99_ms	p999_ms	statuses	extras"
    cat "$results"
    echo '```'
} >"$report"
log "report: $report"
