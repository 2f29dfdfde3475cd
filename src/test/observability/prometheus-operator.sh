#!/usr/bin/env bash
# Writes what the Prometheus Operator reads of payonce, each in a file of its own under OUTPUT_DIR:
# - payonce-prometheus-rule.yml, the alert rules as a PrometheusRule: the rules file's groups,
#   unchanged, become its spec, so the two never differ. Labels: the kube-prometheus convention
#   (prometheus: k8s, role: alert-rules), the application's name, payonce.io/needs: prometheus-operator;
# - payonce-servicemonitor.yml, the ServiceMonitor as written in src/main/observability.
# Both also carry the name=value pairs of PAYONCE_PROMETHEUS_LABELS (comma-separated, such as
# release=kube-prometheus-stack for that chart's ruleSelector and serviceMonitorSelector).
#   prometheus-operator.sh RULES_FILE SERVICE_MONITOR_FILE OUTPUT_DIR
set -euo pipefail

rules=$1 service_monitor=$2 output_dir=$3 extra_labels=${PAYONCE_PROMETHEUS_LABELS:-}

extra_label_lines() {
    local pairs pair
    IFS=',' read -ra pairs <<<"$extra_labels"
    for pair in "${pairs[@]}"; do
        [[ $pair =~ ^([A-Za-z0-9./_-]+)=([A-Za-z0-9._-]*)$ ]] \
            || { echo "prometheus-operator.sh: not a label name=value: '$pair'" >&2; exit 1; }
        echo "    ${BASH_REMATCH[1]}: \"${BASH_REMATCH[2]}\""
    done
}

# Writes through a partial file, so a failure never leaves half a document behind.
write() {
    local output=$1
    trap 'rm -f "$output.partial"' EXIT
    cat >"$output.partial"
    mv "$output.partial" "$output"
    trap - EXIT
}

mkdir -p "$output_dir"
{
    cat <<'HEADER'
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: payonce
  labels:
    app.kubernetes.io/name: payonce
    app.kubernetes.io/component: alerts
    prometheus: k8s
    role: alert-rules
    payonce.io/needs: prometheus-operator
HEADER
    extra_label_lines
    echo "spec:"
    # The rules file's own comments speak of rule_files; its content, indented, is the spec.
    grep -v '^[[:space:]]*#' "$rules" | sed 's/^./  &/'
} | write "$output_dir/payonce-prometheus-rule.yml"

# The extra labels go right after the file's own, which end the metadata.
grep -v '^[[:space:]]*#' "$service_monitor" \
    | awk -v extra="$(extra_label_lines)" '{ print } /^    payonce.io\/needs:/ && extra != "" { print extra }' \
    | write "$output_dir/payonce-servicemonitor.yml"
