package io.payonce.ops;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Just enough PromQL reading for the checks on the dashboard and the alert rules: the metrics an
 * expression selects, the labels it matches on or groups by, the selectors not scoped to payonce's
 * job, and the aggregations that drop a label. Not a parser: the expressions are payonce's own.
 */
final class PromQl {

    /** The scrape job of payonce, as the ServiceMonitor generated with the manifest names it. */
    static final String JOB_MATCHER = "job=\"payonce\"";

    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*\\{([^}]*)}");
    private static final Pattern MATCHER_NAME = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)");
    private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
    private static final Pattern LABEL_LIST_CLAUSE = Pattern.compile("\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    /** A word that is not a function call (possessive, so that "sum(" is not read as the metric "su"), with its matchers if any. */
    private static final Pattern METRIC_WITH_MATCHERS = Pattern.compile("(?<![\\w:.$])([a-zA-Z_:][a-zA-Z0-9_:]*+)(?!\\s*\\()\\s*(\\{[^}]*})?");
    private static final Pattern PAYONCE_JOB = Pattern.compile("\\{(?:[^}]*[,\\s{])?job\\s*=\\s*\"payonce\"");
    private static final Pattern AGGREGATION = Pattern.compile(
            "\\b(sum|min|max|avg|count|group|stddev|stdvar|topk|bottomk|quantile|count_values)\\s*(?:(by|without)\\s*\\(([^)]*)\\))?\\s*\\(");
    /** PromQL's own words: functions, aggregations and their modifiers. */
    private static final Set<String> WORDS = Set.of("sum", "min", "max", "avg", "count", "group", "rate", "irate", "increase",
            "histogram_quantile", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
            "offset", "bool", "abs", "clamp_min", "clamp_max", "absent", "max_over_time");

    private PromQl() {
    }

    /** The metric names of an expression: what is left without strings, label matchers, ranges and PromQL's words. */
    static Set<String> metricsIn(String expression) {
        String bare = withoutStrings(expression)
                .replaceAll("\\{[^}]*}", "")
                .replaceAll("\\[[^]]*]", "")
                .replaceAll("\\b(by|without|on|ignoring)\\s*\\([^)]*\\)", "");
        Set<String> metrics = new TreeSet<>();
        Matcher identifiers = IDENTIFIER.matcher(bare);
        while (identifiers.find()) {
            String word = identifiers.group();
            if (!WORDS.contains(word)) {
                metrics.add(word);
            }
        }
        return metrics;
    }

    /** The label names each metric of an expression is selected by: metric -> labels in its matchers. */
    static Map<String, Set<String>> selectorLabels(String expression) {
        Map<String, Set<String>> labels = new TreeMap<>();
        Matcher selectors = SELECTOR.matcher(withoutStrings(expression));
        while (selectors.find()) {
            Matcher names = MATCHER_NAME.matcher(selectors.group(2));
            while (names.find()) {
                labels.computeIfAbsent(selectors.group(1), metric -> new TreeSet<>()).add(names.group(1));
            }
        }
        return labels;
    }

    /** The label names an expression aggregates by or without. */
    static Set<String> groupingLabels(String expression) {
        Set<String> labels = new TreeSet<>();
        Matcher groupings = GROUPING.matcher(withoutStrings(expression));
        while (groupings.find()) {
            labels.addAll(labelList(groupings.group(1)));
        }
        return labels;
    }

    /**
     * The selectors of an expression that do not match job="payonce", as written: such a selector
     * also reads every other application Prometheus scrapes that exposes the same metric.
     */
    static List<String> unscopedSelectors(String expression) {
        String bare = LABEL_LIST_CLAUSE.matcher(expression.replaceAll("\\[[^]]*]", "")).replaceAll("");
        List<String> unscoped = new ArrayList<>();
        Matcher selectors = METRIC_WITH_MATCHERS.matcher(bare);
        while (selectors.find()) {
            String matchers = selectors.group(2) == null ? "" : selectors.group(2);
            if (!WORDS.contains(selectors.group(1)) && !PAYONCE_JOB.matcher(matchers).find()) {
                unscoped.add(selectors.group().trim());
            }
        }
        return unscoped;
    }

    /** The aggregations of an expression whose result loses one of the labels, as written: "sum(", "max by (instance) (". */
    static List<String> aggregationsDropping(String expression, Set<String> labels) {
        List<String> dropping = new ArrayList<>();
        Matcher aggregations = AGGREGATION.matcher(withoutStrings(expression));
        while (aggregations.find()) {
            Set<String> listed = aggregations.group(3) == null ? Set.of() : labelList(aggregations.group(3));
            boolean keepsAll = "by".equals(aggregations.group(2))
                    ? listed.containsAll(labels)
                    : "without".equals(aggregations.group(2)) && listed.stream().noneMatch(labels::contains);
            if (!keepsAll) {
                dropping.add(aggregations.group());
            }
        }
        return dropping;
    }

    private static Set<String> labelList(String list) {
        Set<String> labels = new TreeSet<>();
        for (String name : list.split(",")) {
            if (!name.isBlank()) {
                labels.add(name.trim());
            }
        }
        return labels;
    }

    private static String withoutStrings(String expression) {
        return expression.replaceAll("\"[^\"]*\"", "\"\"");
    }
}
