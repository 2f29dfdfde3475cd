#!/usr/bin/env bash
# Writes payonce's alert rules as a Prometheus-Operator PrometheusRule: the rules file's groups,
# unchanged, become its spec, so the two never differ. Labels: the kube-prometheus convention
# (prometheus: k8s, role: alert-rules), the application's name, the mark the manifest's ServiceMonitor
# carries too (payonce.io/needs: prometheus-operator), and the name=value pairs of
# PAYONCE_PROMETHEUS_RULE_LABELS (comma-separated, such as release=kube-prometheus-stack for that
# chart's ruleSelector).
#   prometheus-rule.sh RULES_FILE OUTPUT_FILE
set -euo pipefail

rules=$1 output=$2 extra_labels=${PAYONCE_PROMETHEUS_RULE_LABELS:-}

mkdir -p "$(dirname "$output")"
trap 'rm -f "$output.partial"' EXIT
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
    IFS=',' read -ra pairs <<<"$extra_labels"
    for pair in "${pairs[@]}"; do
        [[ $pair =~ ^([A-Za-z0-9./_-]+)=([A-Za-z0-9._-]*)$ ]] \
            || { echo "prometheus-rule.sh: not a label name=value: '$pair'" >&2; exit 1; }
        echo "    ${BASH_REMATCH[1]}: \"${BASH_REMATCH[2]}\""
    done
    echo "spec:"
    # The rules file's own comments speak of rule_files; its content, indented, is the spec.
    grep -v '^[[:space:]]*#' "$rules" | sed 's/^./  &/'
} >"$output.partial"
mv "$output.partial" "$output"
