#!/usr/bin/env bash
# The chaos harness: two payonce instances behind a retrying nginx, a bank workload over HTTP and
# through the broker (pay and refund commands, events read back) and by card through a processor
# simulator that loses answers at random and pushes webhook events (a second path to settlement), a
# nemesis that kills and pauses Redis, MariaDB, RabbitMQ, the instances (which consume the commands)
# and the processor, and a checker that proves from the database, the broker and the history that
# every payment happened at most once, nothing acknowledged was lost, every row that moved money
# belongs to one operation of the history, every event was delivered, no card was charged twice or
# without payonce knowing, every webhook event had at most one effect and no forged one any, and
# that the run itself proved something (enough operations, faults with requests in flight, a clean
# workload).
# Exits non-zero if any check fails. Loopback only; stops by itself.
#
# It harms nothing on the machine: it starts a MariaDB, a Redis and a RabbitMQ node (or three, with
# --broker-cluster) of its own (own data directories, own free loopback ports, own node names and
# cookie; the nodes register with the machine's epmd, as every RabbitMQ node there does), points the instances at them, injects
# every fault into those and into processes it started, by pid, and stops them all at the end. It
# fails if any mariadbd, redis-server or RabbitMQ node (beam.smp) that was running before it started
# is gone afterwards. It needs nginx and gnuplot (.ci/run installs them: nginx-light, gnuplot-nox).
#
#   bench/chaos/run.sh short        90 seconds of load, every fault once
#   bench/chaos/run.sh full         five minutes, every fault twice; the report lands in bench/chaos/last-full-run/
#   add --galera to run on a three-node MariaDB Galera cluster behind HAProxy (bench/chaos/galera.sh)
#   instead of one MariaDB: the short run injects the cluster's faults only (opt-in in the build: -Pchaos,chaos-galera), the full
#   run every fault, the cluster's among them, twice; its report lands in bench/chaos/last-full-run-galera/
#   add --broker-cluster to run on a three-node RabbitMQ cluster with the commands on quorum queues
#   (bench/chaos/rabbitmq-cluster.sh) instead of one node: the broker's fault becomes the cluster's
#   (its commands queue's leader killed, a node leading nothing killed, the leader frozen and resumed,
#   all three killed). CI runs `short --broker-cluster`: every fault once, the broker's on the cluster
#   add --no-build to reuse target/quarkus-app
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

mode=short
build=1
galera=0
broker_cluster=0
for arg in "$@"; do
    case "$arg" in
        short|full) mode=$arg ;;
        --no-build) build=0 ;;
        --galera) galera=1 ;;
        --broker-cluster) broker_cluster=1 ;;
        *) echo "usage: $0 short|full [--galera] [--broker-cluster] [--no-build]" >&2; exit 2 ;;
    esac
done
case "$mode" in
    # The load's least length. It goes on until the last fault has healed, and a few seconds more
    # (stop_load): a fault with nothing in flight fails the run, and a heal slowed by busy cores must
    # not leave the next fault without load. On the JVM jar the cycle takes up to 100 s (a killed
    # instance takes up to 40 s to be ready again on two busy cores); on the native executable about
    # 60 s (choose_instance_command). The cluster's cycle takes about 80 s, most of it the whole
    # cluster's restart, and more when a pause leaves no primary component.
    short) load_seconds=90 ;;
    full) load_seconds=$((galera ? 420 : 300)) ;;
esac

variant=$mode
[ "$galera" = 1 ] && variant=$mode-galera
[ "$broker_cluster" = 1 ] && variant=$variant-broker-cluster
out="$root/target/chaos/$variant"
database=payonce_chaos
public_key="$root/src/test/resources/jwt/publicKey.pem"
stores="$out/stores"
# A Unix socket path is limited to about 100 bytes, which a deep checkout can exceed.
socket=$(mktemp -u /tmp/payonce-chaos-XXXXXX.sock)
mariadbd=$(command -v mariadbd || echo /usr/sbin/mariadbd)

source "$root/bench/app-env.sh"

log() { printf '%s chaos: %s\n' "$(date +%T)" "$*"; }
now_ms() { date +%s%3N; }

gateway_port=$(free_port)
port_a=$(free_port)
port_b=$(free_port)
export PAYONCE_DB_PORT=$(free_port) PAYONCE_REDIS_PORT=$(free_port) PAYONCE_RABBITMQ_PORT=$(free_port)
# One node with classic queues unless --broker-cluster says otherwise (rabbitmq-cluster.sh sets both).
unset PAYONCE_RABBITMQ_ADDRESSES PAYONCE_COMMANDS_QUEUE_TYPE
processor_port=$(free_port)
# The run's database makes a commit durable before it shows it, one MariaDB or the cluster: the
# instances check it as production does.
export PAYONCE_DATABASE_DURABLE_COMMITS_REQUIRED=true
# Card pays, and the refunds of card-paid orders, go to the processor simulator, which fails a fifth
# of the charges and refunds at random (slow, the answer lost after the charge or refund, a 500
# before it). Short bounds, so that the recovery jobs settle every unknown outcome within the run.
export PAYONCE_PROCESSOR_URL=http://127.0.0.1:$processor_port PAYONCE_PROCESSOR_TIMEOUT=1s PAYONCE_PROCESSOR_RECOVERY_BACKOFF_MAX=4s
processor_fault_share=0.2
export PAYONCE_EVENTS_EXCHANGE=payonce.events.chaos PAYONCE_COMMANDS_QUEUE=payonce.commands.chaos
rabbitmq_dist_port=$(free_port)
rabbitmq_node=payonce-chaos-$$@localhost
# The node runs as the rabbitmq user, which must reach its directory: under /tmp, not the checkout.
rabbitmq_base=$(mktemp -d /tmp/payonce-chaos-rabbitmq-XXXXXX)

require_tools() {
    local missing=()
    local tools=(nginx gnuplot python3 redis-server mariadb-install-db "$mariadbd")
    [ "$galera" = 1 ] && tools+=(haproxy mariabackup envsubst setsid)
    for tool in "${tools[@]}"; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "missing: ${missing[*]} (apt-get install nginx-light gnuplot-nox mariadb-backup haproxy; .ci/run does)"
        exit 2
    fi
}

# The machine's own servers, as found before the run: each must still be running afterwards.
shared_servers() { pgrep -x 'mariadbd|redis-server|beam.smp' | sort || true; }

# Each store is launched, then awaited: at the start of the run the three boot side by side; the
# nemesis restarts one with start_<store>, both steps in a row.

# A child of this script, not a daemon, so that the script reaps it when the nemesis kills it.
launch_redis() {
    redis-server --bind 127.0.0.1 --port "$PAYONCE_REDIS_PORT" --save "" --appendonly no \
        --dir "$stores" --logfile "$stores/redis.log" &
    echo $! >"$stores/redis.pid"
}

await_redis() {
    for _ in $(seq 1 50); do redis_cli ping >/dev/null 2>&1 && return; sleep 0.1; done
    log "the run's Redis did not start"; return 1
}

start_redis() { launch_redis && await_redis; }

redis_cli() { redis-cli -h 127.0.0.1 -p "$PAYONCE_REDIS_PORT" "$@"; }

# A MariaDB of the run's own: root without a password on its own port, data under target/chaos; with
# the binary log, as production needs, so that a commit is durable before another session sees it
# (docs/operations/scaling.md, "Durable commits"): the instances refuse a server without it.
launch_mariadb() {
    if [ ! -d "$stores/mariadb/mysql" ]; then
        mariadb-install-db --no-defaults --datadir="$stores/mariadb" --auth-root-authentication-method=normal \
            --skip-test-db --user="$(id -un)" >"$stores/mariadb-install.log" 2>&1
    fi
    "$mariadbd" --no-defaults --datadir="$stores/mariadb" --port="$PAYONCE_DB_PORT" --bind-address=127.0.0.1 \
        --socket="$socket" --pid-file="$stores/mariadb.pid" --log-error="$stores/mariadb.log" \
        --user="$(id -un)" --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
        --innodb-buffer-pool-size=256M --max-connections=300 --log-bin=binlog --sync-binlog=1 --server-id=1 &
    echo $! >"$stores/mariadbd.pid"
}

await_mariadb() {
    for _ in $(seq 1 120); do mariadb -h127.0.0.1 -P"$PAYONCE_DB_PORT" -uroot -e 'SELECT 1' >/dev/null 2>&1 && return; sleep 0.5; done
    log "the run's MariaDB did not start"; return 1
}

start_mariadb() { launch_mariadb && await_mariadb; }

[ "$galera" = 1 ] && source "$root/bench/chaos/galera.sh"
if [ "$broker_cluster" = 1 ]; then
    source "$root/bench/chaos/rabbitmq-cluster.sh"
    # The commands on quorum queues, replicated; the single address stays required in production, the list wins.
    export PAYONCE_RABBITMQ_ADDRESSES=$rabbit_addresses PAYONCE_COMMANDS_QUEUE_TYPE=quorum PAYONCE_RABBITMQ_PORT=${rabbit_port[1]}
fi

# A RabbitMQ node of the run's own; its beam.smp writes its pid at boot, and is killed by it.
launch_rabbitmq() {
    echo '[].' >"$rabbitmq_base/enabled_plugins"
    [ "$(id -u)" = 0 ] && chown -R rabbitmq:rabbitmq "$rabbitmq_base"
    RABBITMQ_NODENAME=$rabbitmq_node RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=$PAYONCE_RABBITMQ_PORT \
        RABBITMQ_DIST_PORT=$rabbitmq_dist_port RABBITMQ_BASE=$rabbitmq_base RABBITMQ_MNESIA_BASE=$rabbitmq_base/mnesia \
        RABBITMQ_LOG_BASE=$rabbitmq_base/log RABBITMQ_CONFIG_FILE=$rabbitmq_base/rabbitmq \
        RABBITMQ_ENABLED_PLUGINS_FILE=$rabbitmq_base/enabled_plugins rabbitmq-server >>"$stores/rabbitmq.out" 2>&1 &
}

await_rabbitmq() {
    for _ in $(seq 1 120); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PAYONCE_RABBITMQ_PORT") 2>/dev/null && return
        sleep 0.5
    done
    log "the run's RabbitMQ did not start"; return 1
}

start_rabbitmq() { launch_rabbitmq && await_rabbitmq; }

rabbitmq_pid() { cat "$rabbitmq_base/mnesia/$rabbitmq_node.pid"; }

stop_stores() {
    redis_cli SHUTDOWN NOSAVE >/dev/null 2>&1
    if [ -f "$rabbitmq_base/mnesia/$rabbitmq_node.pid" ]; then
        kill -9 "$(rabbitmq_pid)" 2>/dev/null
    fi
    rm -rf "$rabbitmq_base"
    [ "$broker_cluster" = 1 ] && rabbit_cluster_stop
    [ "$galera" = 1 ] && galera_stop
    if [ -f "$stores/mariadbd.pid" ]; then
        local pid
        pid=$(cat "$stores/mariadbd.pid")
        kill "$pid" 2>/dev/null
        for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$pid" 2>/dev/null
        rm -rf "$stores/mariadb"
    fi
}

# The instances run the native executable when the build that made the jar made one after it (what
# ships, and an instance the nemesis kills is back in a second), the JVM jar otherwise.
choose_instance_command() {
    local runner
    runner=$(find "$root/target" -maxdepth 1 -name '*-runner' -newer "$root/target/quarkus-app/quarkus-run.jar" | head -1)
    if [ -n "$runner" ]; then
        instance_command=("$runner" -Xmx384m)
        if [ "$mode" = short ] && [ "$galera" = 0 ]; then load_seconds=75; fi
    else
        instance_command=(java -Xmx384m -jar "$root/target/quarkus-app/quarkus-run.jar")
    fi
}

start_instance() {
    local name=$1 port=$2
    (payonce_env "$port" && PAYONCE_JWT_PUBLIC_KEY_LOCATION=$public_key \
        PAYONCE_COMMANDS_PAY_SENDERS=guest PAYONCE_COMMANDS_CARD_PAY_SENDERS=guest PAYONCE_COMMANDS_REFUND_SENDERS=guest \
        exec "${instance_command[@]}") >>"$out/instance-$name.log" 2>&1 &
    echo $! >"$out/instance-$name.pid"
}

wait_ready() {
    local port=$1
    for _ in $(seq 1 120); do
        curl -sf "$(management_url "$port")/q/health/ready" >/dev/null 2>&1 && return
        sleep 0.5
    done
    log "instance on $port not ready"; return 1
}

pid_of() { cat "$out/instance-$1.pid"; }

cleanup() {
    set +e
    rm -f "$free_ports_taken"
    [ -n "${workload_pid:-}" ] && kill "$workload_pid" 2>/dev/null
    for name in a b; do
        if [ -f "$out/instance-$name.pid" ]; then
            kill -CONT "$(pid_of $name)" 2>/dev/null
            kill "$(pid_of $name)" 2>/dev/null
        fi
    done
    [ -f "$out/nginx/nginx.pid" ] && nginx -p "$out/nginx" -c "$out/nginx/nginx.conf" -s stop 2>/dev/null
    if [ -n "${processor_pid:-}" ]; then
        kill -CONT "$processor_pid" 2>/dev/null
        kill "$processor_pid" 2>/dev/null
    fi
    stop_stores
}

# The processor simulator, a child of this script; its ledgers live in its memory until the checker has
# read them. It sends each charge's and each refund's webhook event to the two instances in turn, signed with the secret
# they hold, some twice, late and out of order, beside forged and stale copies: a second path to
# settlement, racing payonce's own calls and the recovery job.
start_processor() {
    PAYONCE_PROCESSOR_WEBHOOK_SECRET=$BENCH_WEBHOOK_SECRET java -cp "$1" io.payonce.processor.ProcessorSimulator "$processor_port" \
        "$processor_fault_share" "http://127.0.0.1:$port_a/processor/webhooks,http://127.0.0.1:$port_b/processor/webhooks" \
        >"$out/processor.log" 2>&1 &
    processor_pid=$!
    for _ in $(seq 1 60); do
        curl -sf "$PAYONCE_PROCESSOR_URL/v1/ledger" >/dev/null 2>&1 && return
        sleep 0.5
    done
    log "the processor simulator did not start"; return 1
}

start_gateway() {
    mkdir -p "$out/nginx/tmp"
    cat >"$out/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $out/nginx/nginx.pid;
error_log $out/nginx/error.log warn;
events { worker_connections 2048; }
http {
    access_log $out/nginx/access.log;
    client_body_temp_path $out/nginx/tmp;
    proxy_temp_path $out/nginx/tmp;
    upstream payonce {
        server 127.0.0.1:$port_a max_fails=0;
        server 127.0.0.1:$port_b max_fails=0;
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$gateway_port;
        location / {
            proxy_pass http://payonce;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # The post-mortem's gateway: give up on a slow answer and send the same POST to the other instance.
            proxy_connect_timeout 200ms;
            proxy_read_timeout 400ms;
            proxy_next_upstream error timeout http_502 http_503 non_idempotent;
            proxy_next_upstream_tries 2;
        }
    }
}
CONF
    nginx -p "$out/nginx" -c "$out/nginx/nginx.conf"
}

# One fault: name, then the commands that inject and heal it. Its window is written to faults.tsv.
# A fault that did not go as named says so in fault_note, which the report then shows in its name.
fault() {
    local name=$1 inject=$2 heal=$3 start end
    fault_note=
    start=$(now_ms)
    log "fault $name"
    eval "$inject"
    eval "$heal"
    end=$(now_ms)
    printf '%s\t%s\t%s\n' "$name${fault_note:+-$fault_note}" "$start" "$end" >>"$out/faults.tsv"
}

nemesis_cycle() {
    sleep 8
    fault redis-kill "kill -9 \$(cat $stores/redis.pid); sleep 1" "start_redis"
    sleep 6
    fault redis-pause "redis_cli CLIENT PAUSE 7000 ALL >/dev/null" "sleep 7"
    sleep 4
    fault sigstop-a "kill -STOP \$(pid_of a); sleep 7" "kill -CONT \$(pid_of a)"
    sleep 4
    fault sigkill-b "kill -9 \$(pid_of b); sleep 0.5" "start_instance b $port_b; wait_ready $port_b"
    sleep 4
    if [ "$galera" = 1 ]; then
        galera_cycle
    else
        fault mariadb-kill "kill -9 \$(cat $stores/mariadbd.pid); sleep 1" "start_mariadb"
    fi
    sleep 4
    if [ "$broker_cluster" = 1 ]; then
        broker_cluster_cycle
    else
        fault rabbitmq-kill "kill -9 \$(rabbitmq_pid); sleep 1" "start_rabbitmq"
    fi
}

# The cluster's own faults (bench/chaos/galera.sh): the writer killed and back by IST, a node that
# takes no writes killed and back, the writer paused past the suspect timeout, the whole cluster
# killed and bootstrapped again from its most advanced node.
galera_cycle() {
    fault galera-writer-kill "galera_fault_kill 1" "galera_heal_kill 1"
    sleep 4
    fault galera-replica-kill "galera_fault_kill 3" "galera_heal_kill 3"
    sleep 4
    fault galera-writer-pause "galera_fault_pause" "galera_heal_pause"
    sleep 4
    fault galera-cluster-kill "galera_fault_cluster_kill" "galera_heal_cluster_kill"
}

# The processor's faults run beside the others, in a lane of their own: its port refuses
# connections for 4 s, then the simulator freezes for 4 s (every call times out).
processor_nemesis() {
    sleep 15
    fault processor-down "curl -sf -X POST $PAYONCE_PROCESSOR_URL/control/down/4000 >/dev/null; sleep 4.5" ":"
    sleep 20
    fault processor-pause "kill -STOP $processor_pid; sleep 4" "kill -CONT $processor_pid"
}

main() {
    rm -rf "$out"
    mkdir -p "$out/metrics" "$stores"
    require_tools
    if [ "$build" = 1 ] || [ ! -f target/quarkus-app/quarkus-run.jar ]; then
        log "building the packaged application"
        ./mvnw -B -q package -DskipTests -DskipNative
    fi
    local classpath shared
    choose_instance_command
    classpath=$(bench_classpath "$root")
    shared=$(shared_servers)
    trap cleanup EXIT
    local broker_addresses=127.0.0.1:$PAYONCE_RABBITMQ_PORT
    [ "$broker_cluster" = 1 ] && broker_addresses=$PAYONCE_RABBITMQ_ADDRESSES
    log "the run's own MariaDB on port $PAYONCE_DB_PORT, Redis on port $PAYONCE_REDIS_PORT, RabbitMQ at $broker_addresses"
    if [ "$broker_cluster" = 1 ]; then
        rabbit_cluster_launch
    else
        launch_rabbitmq
    fi
    launch_redis
    if [ "$galera" = 1 ]; then
        log "a Galera cluster of the run's own behind HAProxy on port $PAYONCE_DB_PORT"
        galera_start
    else
        launch_mariadb
    fi
    start_processor "$classpath"
    await_redis
    [ "$galera" = 1 ] || await_mariadb
    if [ "$broker_cluster" = 1 ]; then
        rabbit_cluster_join
    else
        await_rabbitmq
    fi
    bench_database_user $database
    start_instance a $port_a
    start_instance b $port_b
    wait_ready $port_a
    wait_ready $port_b
    start_gateway
    log "load for $load_seconds s at least ($mode), until the last heal; instances: ${instance_command[*]}"
    local load_started=$SECONDS
    # Bounded, should the harness never create the stop file: far beyond any cycle's heals.
    timeout $((load_seconds + 900)) java -cp "$classpath" io.payonce.bench.chaos.Workload "http://127.0.0.1:$gateway_port" \
        "http://127.0.0.1:$port_a" "http://127.0.0.1:$port_b" "$load_seconds" "$out/history.tsv" "$broker_addresses" \
        "$out/stop-load" >"$out/workload.log" 2>&1 &
    workload_pid=$!
    processor_nemesis &
    local processor_lane=$!
    if [ "$mode" = short ] && [ "$galera" = 1 ]; then
        sleep 8
        galera_cycle
    else
        nemesis_cycle
    fi
    if [ "$mode" = full ]; then
        sleep 60
        wait "$processor_lane"
        processor_nemesis &
        processor_lane=$!
        nemesis_cycle
    fi
    wait "$processor_lane"
    # Every fault has healed: the load goes on a little longer, so that the last heal meets requests too.
    sleep 5
    touch "$out/stop-load"
    local loaded=$((SECONDS - load_started))
    [ "$loaded" -ge "$load_seconds" ] || loaded=$load_seconds
    # A workload that failed (an exception, a worker that never ended, killed by the timeout: 124)
    # fails the run: the checker reports its exit status as a violation.
    local workload_status=0
    wait "$workload_pid" || workload_status=$?
    workload_pid=
    [ "$workload_status" = 0 ] || log "workload failed with exit status $workload_status; see $out/workload.log"
    curl -sf "$(management_url $port_a)/q/metrics" >"$out/metrics/a.txt" || true
    curl -sf "$(management_url $port_b)/q/metrics" >"$out/metrics/b.txt" || true
    log "checking"
    local verdict=0
    java -cp "$classpath" io.payonce.bench.chaos.Checker $database "$out/history.tsv" \
        "$out/faults.tsv" "$out/metrics" "$out" "$loaded" "$workload_status" \
        "payonce chaos run ($variant, $(date -u +%Y-%m-%dT%H:%MZ))" "$broker_addresses" "$PAYONCE_PROCESSOR_URL" || verdict=$?
    (cd "$out" && gnuplot timeline.gp)
    if [ "$mode" = full ]; then
        local kept=bench/chaos/last-full-run${variant#full}
        mkdir -p "$kept"
        cp "$out/report.md" "$out/timeline.png" "$kept/"
    fi
    log "report: $out/report.md"
    for pid in $shared; do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "the machine's own server $pid (mariadbd, redis-server or beam.smp) is gone: the run must never touch it"
            verdict=1
        fi
    done
    return $verdict
}

main
