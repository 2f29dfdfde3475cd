#!/usr/bin/env bash
# The native executable beside the JVM, from the last bench/run.sh report of each (bench/report.md and
# bench/report-native.md): at each concurrency, HTTP pays per second, each beside the ceiling of its own
# run (the two runs are apart in time, and the machine's speed drifts between them), and payonce's CPU
# per pay. Prints a Markdown table. Two other reports may be named instead, e.g. two committed ones of the
# same commit: bench/native-beside-jvm.sh <(git show REV:bench/report.md) <(git show REV:bench/report-native.md)
set -euo pipefail
[ $# = 0 ] && cd "$(dirname "$0")/.."
# From a report: clients, ceiling /s, payonce /s (the throughput table), then ms per HTTP pay (the broker table).
figures() {
    awk -F'|' '
        /^## Throughput/ {section = "throughput"} /^## The broker path/ {section = "broker"} /^## Where the CPU/ {section = ""}
        section == "throughput" && $2 ~ /^ [0-9]+ $/ {ceiling[$2 + 0] = $3 + 0; pays[$2 + 0] = $5 + 0; order[++n] = $2 + 0}
        section == "broker" && $2 ~ /^ [0-9]+ $/ {cpu[$2 + 0] = $7 + 0}
        END {for (i = 1; i <= n; i++) {c = order[i]; print c, ceiling[c], pays[c], cpu[c]}}' "$1"
}
echo "| clients | JVM pays /s | native pays /s | JVM / its ceiling | native / its ceiling | native against JVM, beside their ceilings | JVM ms per pay | native ms per pay | native CPU against JVM |"
echo "|---|---|---|---|---|---|---|---|---|"
jvm_report=${1:-bench/report.md}
native_report=${2:-bench/report-native.md}
join <(figures "$jvm_report") <(figures "$native_report") | awk '{
    jvm = $3 / $2; native = $6 / $5
    printf "| %d | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", $1, $3, $6, jvm, native, native / jvm, $4, $7, $7 / $4}'
