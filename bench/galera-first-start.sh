#!/usr/bin/env bash
# Two instances starting together on an empty schema of a Galera cluster, as a first deploy of two
# replicas does, many times over: how many starts fail. Each attempt gives the packaged JVM app a new
# empty database (created beforehand, as the Galera section of docs/operations/scaling.md asks of an
# operator), starts two instances at once through the proxy, and counts an instance that logs "Failed
# to start" or is not started within 90 s; then it checks that the schema holds each migration once. The instances run in
# the test profile and reach the machine's Redis and RabbitMQ, as the tests' do. A failure keeps its
# two logs under target/galera-first-start/. The cluster is the run's own (bench/chaos/galera.sh, the
# configuration the tests use). It reuses the packaged app in target/quarkus-app (./mvnw package
# -DskipTests -DskipNative), or with --native the executable ./mvnw verify builds, as CI's GaleraIT
# runs it; each start's time to "started" is printed, since a start held behind the other's migration
# takes longer than one alone.
#
#   bench/galera-first-start.sh [--native] [attempts]   20 by default; needs haproxy and mariadb-backup
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/galera-first-start"
stores="$out/stores"
native=false
if [ "${1:-}" = --native ]; then native=true; shift; fi
attempts=${1:-20}

log() { printf '%s galera-first-start: %s\n' "$(date +%T)" "$*" >&2; }

source "$root/bench/app-env.sh"
rm -rf "$out"
mkdir -p "$stores"
source "$root/bench/chaos/galera.sh"
if $native; then
    runner=$(ls target/*-runner 2>/dev/null | head -n 1 || true)
    [ -x "$runner" ] || { log "no native executable: ./mvnw verify with the native toolchain first"; exit 1; }
    app=("$runner")
else
    [ -f target/quarkus-app/quarkus-run.jar ] || { log "no packaged app: ./mvnw package -DskipTests -DskipNative first"; exit 1; }
    app=(java -Xmx256m -jar target/quarkus-app/quarkus-run.jar)
fi

declare -a instance_pids=()
stop_instances() {
    local pid
    for pid in "${instance_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${instance_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    instance_pids=()
}
trap 'stop_instances; galera_stop' EXIT

# Instance $1 of attempt $2 on database $3, in the test profile (it needs no Redis or broker to start),
# with its log at $out/<attempt>-<instance>.log.
start_instance() {
    local port management
    port=$(free_port)
    management=$(free_port)
    # The JVM reads -D options before -jar, the native executable anywhere: the app's command goes last.
    PAYONCE_DB_CREATE_DATABASE=false PAYONCE_TEST_DB_NAME=$3 PAYONCE_DB_PORT=$galera_proxy_port \
        "${app[0]}" -Dquarkus.profile=test -Dquarkus.http.port="$port" -D%test.quarkus.management.port="$management" \
        -D%test.quarkus.flyway.clean-at-start=false "${app[@]:1}" \
        >"$out/$2-$1.log" 2>&1 &
    instance_pids+=($!)
}

# "started", "failed" or nothing yet for the log $1.
outcome() {
    if grep -q "payonce did not start" "$1"; then echo failed
    elif grep -q "started in" "$1"; then echo started
    fi
}

galera_start
migrations=$(ls src/main/resources/db/migration | grep -c '^V[0-9]*__.*\.sql$')
failed=0
for attempt in $(seq 1 "$attempts"); do
    database=first_start_$attempt
    galera_mysql 1 -e "CREATE DATABASE $database"
    start_instance a "$attempt" "$database"
    start_instance b "$attempt" "$database"
    began=$(date +%s%N)
    deadline=$((SECONDS + 90))
    a= b= a_ms= b_ms=
    while { [ -z "$a" ] || [ -z "$b" ]; } && [ "$SECONDS" -lt "$deadline" ]; do
        sleep 0.2
        [ -n "$a" ] || { a=$(outcome "$out/$attempt-a.log"); [ -z "$a" ] || a_ms=$((($(date +%s%N) - began) / 1000000)); }
        [ -n "$b" ] || { b=$(outcome "$out/$attempt-b.log"); [ -z "$b" ] || b_ms=$((($(date +%s%N) - began) / 1000000)); }
    done
    log "attempt $attempt: a ${a:-timed out} after ${a_ms:-?} ms, b ${b:-timed out} after ${b_ms:-?} ms"
    a=${a:-timed out} b=${b:-timed out}
    stop_instances
    applied=$(galera_mysql 1 -N -e "SELECT COUNT(DISTINCT version), COUNT(*) FROM $database.flyway_schema_history
        WHERE type <> 'BASELINE' AND success = 1" 2>/dev/null | tr '\t' ' ') || applied=
    if [ "$a" = started ] && [ "$b" = started ] && [ "$applied" = "$migrations $migrations" ]; then
        rm -f "$out/$attempt-a.log" "$out/$attempt-b.log"
    else
        failed=$((failed + 1))
        log "attempt $attempt: a $a, b $b, migrations applied (distinct, rows): ${applied:-none} of $migrations; logs in $out"
    fi
    galera_mysql 1 -e "DROP DATABASE $database"
done
log "$failed of $attempts attempts had an instance fail to start or a migration applied other than once"
[ "$failed" = 0 ]
