#!/usr/bin/env bash
# payonce as a native executable beside the JVM jar, on the same MariaDB and Redis: time to the first
# successful request, RSS after 1,000 pays, size on disk, pay throughput at 64 clients (wrk).
# Needs both builds: target/quarkus-app (./mvnw package -DskipNative) and target/*-runner built optimised
# (bench/run.sh --native builds it and stamps it; the one ./mvnw verify leaves behind is a quick build for the tests).
# Writes bench/native-vs-jvm.md. Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/target/bench-native"
database=payonce_bench_native
port=18095
url="http://127.0.0.1:$port"
runner=$(ls target/*-runner | head -n 1)
if [ ! target/native-optimized.stamp -nt "$runner" ]; then
    echo "$runner is not the optimised build bench/run.sh --native stamps (./mvnw verify leaves a quick build): run that first" >&2
    exit 1
fi

source "$root/bench/app-env.sh"
cleanup() { [ -n "${app_pid:-}" ] && kill "$app_pid" 2>/dev/null; true; }
trap cleanup EXIT
rm -rf "$out" && mkdir -p "$out"
classpath=$(bench_classpath "$root")
bench() { java -cp "$classpath" io.payonce.bench.PayBench "$@"; }

measure() {
    local kind=$1; shift
    mariadb -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $database"
    bench_database_user $database
    local start_ms first_ms rss_kb line
    start_ms=$(date +%s%3N)
    (payonce_env $port && PAYONCE_JWT_PUBLIC_KEY_LOCATION="$root/src/test/resources/jwt/publicKey.pem" \
        exec "$@") >"$out/$kind.log" 2>&1 &
    app_pid=$!
    until curl -sf "$(management_url $port)/q/health/ready" >/dev/null 2>&1; do sleep 0.01; done
    first_ms=$(( $(date +%s%3N) - start_ms ))
    bench seed $database
    bench pay $database "$url" 8 1000 >/dev/null
    rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$app_pid/status")
    bench prepare $database 40000 "$out/$kind-warmup.txt"
    MODE=warmup CLIENTS=64 PAYS="$out/$kind-warmup.txt" THREADS=2 wrk -t2 -c64 -d10s -s bench/pay.lua "$url" >/dev/null
    bench prepare $database 40000 "$out/$kind-pays.txt"
    line=$(MODE=pay CLIENTS=64 PAYS="$out/$kind-pays.txt" THREADS=2 wrk -t2 -c64 -d10s -s bench/pay.lua "$url" | tail -n 1)
    kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=
    printf '%s\t%s\t%s\t%s\t%s\n' "$kind" "$first_ms" "$((rss_kb / 1024))" "$(echo "$line" | cut -f5)" "$(echo "$line" | cut -f6-8 | tr '\t' '/')"
}

{
    jvm=$(measure jvm java -jar target/quarkus-app/quarkus-run.jar)
    native=$(measure native "$runner")
    echo "# payonce: native executable beside the JVM"
    echo
    echo "Command: \`bench/native-vs-jvm.sh\` ($(date -u +%Y-%m-%d)), same machine, MariaDB and Redis as bench/report.md."
    echo "The native executable was built by ../shared/native-toolchain (GraalVM 25 builder on Temurin 25)."
    echo
    echo "| | time to first successful request | RSS after 1,000 pays | size on disk | pays/s at 64 clients (wrk) | p50 / p99 / p99.9 ms |"
    echo "|---|---|---|---|---|---|"
    echo "$jvm" | awk -F'\t' -v size="$(du -sh target/quarkus-app | cut -f1)" '{printf "| JVM (%s) | %s ms | %s MiB | %s (quarkus-app) | %s | %s |\n", "java -jar", $2, $3, size, $4, $5}'
    echo "$native" | awk -F'\t' -v size="$(du -sh "$runner" | cut -f1)" '{printf "| native | %s ms | %s MiB | %s (executable) | %s | %s |\n", $2, $3, size, $4, $5}'
} >bench/native-vs-jvm.md
cat bench/native-vs-jvm.md
