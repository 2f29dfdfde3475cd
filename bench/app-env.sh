# Sourced by the bench and chaos scripts: what payonce's production profile needs to start here.
# Production refuses to fall back to root with an empty password or to loopback, so the scripts name
# every store and log in as a MariaDB user of their own, limited to the database the run uses, with a
# password made for the run. Health and metrics answer on the management port, the HTTP port + 1000.

# Creates (or resets) the run's MariaDB user on the server at 127.0.0.1:${PAYONCE_DB_PORT:-3306}, where
# root logs in without a password, creates the run's database if missing, as an operator does (on a
# Galera cluster an instance must not: PAYONCE_DB_CREATE_DATABASE in docs/operations/configuration.md),
# and exports the PAYONCE_DB_* variables that the service, the tests' Database and the programs under bench/ read. The run's database begins empty, its order ids from 1:
# its processor keys get a namespace of their own, never met by an earlier run's at a simulator that
# outlived it.
bench_database_user() {
    local database=$1
    export PAYONCE_DB_HOST=127.0.0.1 PAYONCE_DB_PORT=${PAYONCE_DB_PORT:-3306} PAYONCE_DB_NAME=$database \
        PAYONCE_DB_USER=payonce_bench PAYONCE_DB_PASSWORD PAYONCE_PROCESSOR_KEY_NAMESPACE PAYONCE_DB_CREATE_DATABASE=false
    PAYONCE_DB_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
    PAYONCE_PROCESSOR_KEY_NAMESPACE=$database-$(date +%s%N)
    mariadb -h127.0.0.1 -P"$PAYONCE_DB_PORT" -uroot -e "
        CREATE DATABASE IF NOT EXISTS \`$database\`;
        CREATE OR REPLACE USER '$PAYONCE_DB_USER'@'127.0.0.1' IDENTIFIED BY '$PAYONCE_DB_PASSWORD';
        CREATE OR REPLACE USER '$PAYONCE_DB_USER'@'localhost' IDENTIFIED BY '$PAYONCE_DB_PASSWORD';
        GRANT ALL ON \`$database\`.* TO '$PAYONCE_DB_USER'@'127.0.0.1';
        GRANT ALL ON \`$database\`.* TO '$PAYONCE_DB_USER'@'localhost';"
}

# The rest of an instance's environment: Redis at 127.0.0.1:${PAYONCE_REDIS_PORT:-6379}, RabbitMQ on
# loopback with the broker's own loopback account unless PAYONCE_RABBITMQ_* say otherwise (events
# go to the exchange PAYONCE_EVENTS_EXCHANGE names), the card processor at PAYONCE_PROCESSOR_URL
# (a simulator on loopback port 8099 unless said otherwise) and the secret its webhooks are signed
# with (BENCH_WEBHOOK_SECRET, which the simulator is given too), its ports, and the address its
# problem types name (the instance itself, unless PAYONCE_PUBLIC_URL says otherwise).
payonce_env() {
    local http_port=$1
    export PAYONCE_REDIS_HOST=127.0.0.1 PAYONCE_REDIS_PORT=${PAYONCE_REDIS_PORT:-6379} \
        PAYONCE_RABBITMQ_HOST=${PAYONCE_RABBITMQ_HOST:-127.0.0.1} PAYONCE_RABBITMQ_USER=${PAYONCE_RABBITMQ_USER:-guest} \
        PAYONCE_RABBITMQ_PASSWORD=${PAYONCE_RABBITMQ_PASSWORD:-guest} \
        PAYONCE_PROCESSOR_URL=${PAYONCE_PROCESSOR_URL:-http://127.0.0.1:8099} \
        PAYONCE_PROCESSOR_WEBHOOK_SECRET=${PAYONCE_PROCESSOR_WEBHOOK_SECRET:-$BENCH_WEBHOOK_SECRET} \
        PAYONCE_PUBLIC_URL=${PAYONCE_PUBLIC_URL:-http://127.0.0.1:$http_port} \
        PAYONCE_HTTP_PORT=$http_port PAYONCE_MANAGEMENT_PORT=$((http_port + 1000))
    # The machine's shared MariaDB has no binary log, which production refuses
    # (docs/operations/scaling.md, "Durable commits"): the benches measure on it with a warning; the
    # chaos harness's own server has the log.
    export PAYONCE_DATABASE_DURABLE_COMMITS_REQUIRED=${PAYONCE_DATABASE_DURABLE_COMMITS_REQUIRED:-false}
}

# The secret the bench's processor simulator signs its webhooks with: a bench's own, not secret.
BENCH_WEBHOOK_SECRET=whsec_payonce_bench_simulator

management_url() { echo "http://127.0.0.1:$(($1 + 1000))"; }

# A loopback port free now, for a server of the run's own (its management port, 1000 above, too). It
# is chosen below the kernel's ephemeral range, which outgoing connections take their ports from: a
# port from there, free now, may be a client socket's by the time the server binds it, minutes later
# for a cluster's last node. No port is handed out twice in one run (free_ports_taken).
free_ports_taken=${free_ports_taken:-$(mktemp /tmp/payonce-ports-XXXXXX)}
free_port() {
    python3 - "$free_ports_taken" <<'PY'
import random, socket, sys
taken_file = sys.argv[1]
first, last = (int(port) for port in open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
# Below the range, or above it where a machine's range starts too low to leave room below.
low, high = (15000, first - 1000) if first - 15000 >= 5000 else (last + 1, 64535)
taken = {int(port) for port in open(taken_file).read().split()}
for _ in range(1000):
    port = random.randrange(low, high)
    # Neither this port nor its management port, 1000 above, may meet one handed out before or its.
    if taken & {port, port + 1000, port - 1000}:
        continue
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            continue
    with open(taken_file, "a") as out:
        out.write(f"{port}\n")
    print(port)
    break
else:
    sys.exit("no free port below the ephemeral range")
PY
}

# The test classpath that Maven wrote (target/bench.classpath), on which the programs under bench/ run.
bench_classpath() {
    local root=$1
    [ -f "$root/target/bench.classpath" ] && [ -d "$root/target/test-classes/io/payonce/bench" ] \
        || (cd "$root" && ./mvnw -B -q test-compile -DskipNative)
    echo "$root/target/test-classes:$root/target/classes:$(cat "$root/target/bench.classpath")"
}
