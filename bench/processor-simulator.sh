#!/usr/bin/env bash
# The card processor simulator the tests and the chaos harness use, for card pays in dev mode:
# ./mvnw quarkus:dev sends them to http://127.0.0.1:8099. Tokens starting with tok_decline are
# declined; every other token is charged. Runs until stopped. Its ledger lives in memory, but its
# charge and refund ids carry a part drawn at each start: a restart names no charge the dev database holds.
#   bench/processor-simulator.sh [port, 8099] [share of charges that meet a random fault, 0]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/app-env.sh
exec java -cp "$(bench_classpath "$PWD")" io.payonce.processor.ProcessorSimulator "${1:-8099}" "${2:-0}"
