# The chaos harness's RabbitMQ cluster (run.sh --broker-cluster), sourced by run.sh: three nodes of
# the run's own on loopback, joined with join_cluster, handling a partition with pause_minority, as
# the Java tests' PrivateRabbitMqCluster, and the cluster's own faults (broker_cluster_cycle). Needs
# $stores and log from the script that sources it (run.sh, bench/broker-cluster-cost.sh), and free_port
# from bench/app-env.sh. The instances are given $rabbit_addresses as PAYONCE_RABBITMQ_ADDRESSES.
#
# Each node runs as the rabbitmq user, under /tmp (which that user reaches), with a cookie of the
# run's own given on the command line (the launcher's HOME holds the machine's broker's), and a net
# tick time of 4 s, so that the other two find a frozen node gone within 5 s. Each node's beam.smp
# writes its pid at boot; the nemesis kills and freezes it by that pid.

rabbit_dir=$(mktemp -d /tmp/payonce-chaos-rabbitmq-cluster-XXXXXX)
rabbit_cookie=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
declare -A rabbit_port rabbit_dist
for n in 1 2 3; do rabbit_port[$n]=$(free_port); rabbit_dist[$n]=$(free_port); done
# As PAYONCE_RABBITMQ_ADDRESSES takes them.
rabbit_addresses="127.0.0.1:${rabbit_port[1]},127.0.0.1:${rabbit_port[2]},127.0.0.1:${rabbit_port[3]}"

rabbit_node() { echo "payonce-chaos-$$-n$1@localhost"; }
rabbit_pid() { cat "$rabbit_dir/n$1/mnesia/$(rabbit_node "$1").pid" 2>/dev/null; }
# Bounded: a frozen node takes the CLI's connection and never answers.
rabbit_ctl() { local n=$1; shift; timeout 30 rabbitmqctl -q --erlang-cookie "$rabbit_cookie" -n "$(rabbit_node "$n")" "$@"; }

rabbit_launch() {
    local n=$1 base=$rabbit_dir/n$1
    mkdir -p "$base"
    echo '[].' >"$base/enabled_plugins"
    echo 'cluster_partition_handling = pause_minority' >"$base/rabbitmq.conf"
    [ "$(id -u)" = 0 ] && chown rabbitmq:rabbitmq "$rabbit_dir" && chown -R rabbitmq:rabbitmq "$base"
    RABBITMQ_NODENAME=$(rabbit_node "$n") RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=${rabbit_port[$n]} \
        RABBITMQ_DIST_PORT=${rabbit_dist[$n]} RABBITMQ_BASE=$base RABBITMQ_MNESIA_BASE=$base/mnesia \
        RABBITMQ_LOG_BASE=$base/log RABBITMQ_CONFIG_FILE=$base/rabbitmq RABBITMQ_ENABLED_PLUGINS_FILE=$base/enabled_plugins \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-setcookie $rabbit_cookie -kernel net_ticktime 4" \
        rabbitmq-server >>"$stores/rabbitmq-n$n.out" 2>&1 &
}

# Until node $1 runs the broker.
rabbit_await() {
    for _ in $(seq 1 120); do
        rabbit_ctl "$1" await_startup --timeout 2 >/dev/null 2>&1 && return
        sleep 0.5
    done
    log "rabbitmq: n$1 did not start; see $stores/rabbitmq-n$1.out"; return 1
}

# How many nodes run the broker, as the first node that answers says.
rabbit_running() {
    local n count
    for n in 1 2 3; do
        count=$(rabbit_ctl "$n" eval 'length(rabbit_nodes:all_running()).' 2>/dev/null) && { echo "$count"; return; }
    done
    echo 0
}

rabbit_await_running() {
    for _ in $(seq 1 120); do
        [ "$(rabbit_running)" = "$1" ] && return
        sleep 0.5
    done
    log "rabbitmq: not $1 nodes running (they say $(rabbit_running))"; return 1
}

# Launched side by side with the run's other stores, then joined once they answer.
rabbit_cluster_launch() {
    local n
    for n in 1 2 3; do rabbit_launch "$n"; done
}

rabbit_cluster_join() {
    local n
    for n in 1 2 3; do rabbit_await "$n"; done
    for n in 2 3; do
        { rabbit_ctl "$n" stop_app && rabbit_ctl "$n" reset && rabbit_ctl "$n" join_cluster "$(rabbit_node 1)" \
            && rabbit_ctl "$n" start_app; } >>"$stores/rabbitmq-n$n.out" 2>&1
    done
    rabbit_await_running 3
}

rabbit_cluster_stop() {
    local n pid
    for n in 1 2 3; do
        pid=$(rabbit_pid "$n")
        [ -n "$pid" ] && { kill -CONT "$pid"; kill -9 "$pid"; } 2>/dev/null
    done
    rm -rf "$rabbit_dir"
}

# The quorum queues' leaders, "queue node" a line, as the first node that answers lists them.
rabbit_leaders() {
    local n listed
    for n in 1 2 3; do
        listed=$(rabbit_ctl "$n" list_queues --no-table-headers name type leader 2>/dev/null) && break
    done
    awk '$2 == "quorum" { print $1, $3 }' <<<"$listed"
}

# The number of the node that leads the commands queue.
rabbit_commands_leader() {
    local leader n
    leader=$(rabbit_leaders | awk -v queue="$PAYONCE_COMMANDS_QUEUE" '$1 == queue { print $2 }')
    for n in 1 2 3; do [ "$(rabbit_node "$n")" = "$leader" ] && echo "$n"; done
    return 0
}

# The number of the node that holds most client connections.
rabbit_connections_node() {
    local n listed busiest
    for n in 1 2 3; do
        listed=$(rabbit_ctl "$n" list_connections --no-table-headers pid 2>/dev/null) && break
    done
    # A connection's process id names its node: <node@host.N.M>.
    busiest=$(sed -n 's/^<\([^.]*\)\..*/\1/p' <<<"$listed" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
    for n in 1 2 3; do [ "$(rabbit_node "$n")" = "$busiest" ] && echo "$n"; done
    return 0
}

rabbit_fault_kill() {
    rabbit_victim=${1:-}
    [ -n "$rabbit_victim" ] || { log "rabbitmq: no node to kill found (leaders: $(rabbit_leaders | tr '\n' ' '))"; exit 1; }
    log "rabbitmq: killing n$rabbit_victim"
    kill -9 "$(rabbit_pid "$rabbit_victim")"
    sleep 3
}

rabbit_heal_kill() {
    [ -n "$rabbit_victim" ] || return 0
    rabbit_launch "$rabbit_victim"
    rabbit_await "$rabbit_victim"
    rabbit_await_running 3
}

# The node that holds most client connections (payonce's go to the first live address and stay)
# frozen past the net tick time and past its connections' heartbeats: the other two elect
# new leaders, the instances' consumers and publisher leave it for the next address. Thawed, it meets
# the other two at once, so pause_minority does not pause it, and its view of the cluster's metadata
# may have parted from theirs (BrokerClusterIT saw replies lost through it): it is restarted, as
# docs/operations/scaling.md says to.
rabbit_fault_freeze() {
    rabbit_victim=$(rabbit_connections_node)
    [ -n "$rabbit_victim" ] || { log "rabbitmq: no node holding connections found"; exit 1; }
    log "rabbitmq: freezing n$rabbit_victim"
    kill -STOP "$(rabbit_pid "$rabbit_victim")"
    sleep 20
    kill -CONT "$(rabbit_pid "$rabbit_victim")"
}

rabbit_heal_freeze() {
    kill -9 "$(rabbit_pid "$rabbit_victim")"
    sleep 1
    rabbit_launch "$rabbit_victim"
    rabbit_await "$rabbit_victim"
    rabbit_await_running 3
}

# Every node killed at once, as a power loss: all three started again, and the cluster forms from
# their data (each waits for the others, its peers when it went down); the outbox holds the events.
rabbit_fault_cluster_kill() {
    local n
    for n in 1 2 3; do kill -9 "$(rabbit_pid "$n")"; done
    sleep 3
}

rabbit_heal_cluster_kill() {
    local n
    for n in 1 2 3; do rabbit_launch "$n"; done
    for n in 1 2 3; do rabbit_await "$n"; done
    rabbit_await_running 3
}

# The cluster's faults; a node that leads no queue killed is BrokerClusterIT's alone.
broker_cluster_cycle() {
    fault rabbitmq-leader-kill "rabbit_fault_kill \"\$(rabbit_commands_leader)\"" "rabbit_heal_kill"
    sleep 4
    fault rabbitmq-connections-node-freeze "rabbit_fault_freeze" "rabbit_heal_freeze"
    sleep 4
    fault rabbitmq-cluster-kill "rabbit_fault_cluster_kill" "rabbit_heal_cluster_kill"
}
