/*
 * The checker of the chaos harness. After a run it proves, from the database and the workload's
 * history, that the service kept its promise, and writes the report:
 *   - at most one debit per order and per key; no definite refusal moved money;
 *   - every acknowledged operation is in the ledger (nothing lost);
 *   - every operation whose outcome the client never learned had exactly 0 or 1 effect;
 *   - every balance equals the sum of its entries; money is conserved;
 *   - no answer was a 500.
 *
 * Run (compiled by run.sh): java -cp <classes>:<mariadb-java-client.jar> Checker <jdbc-url> <history.tsv>
 *     <faults.tsv> <metrics-dir> <out-dir> <title>
 */

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

public class Checker {


    record Attempt(long op, String type, String key, String subject, int target, long start, long end, String status, String detail) {
        boolean definite() {
            return !status.equals("TIMEOUT") && !status.startsWith("5") && !detail.endsWith("_IN_USE")
                    && !detail.equals("PAYMENT_IN_PROGRESS");
        }
    }

    record Op(long id, String type, String user, String key, String subject, long amount, int attempts, String outcome,
              int status, String detail) {
    }

    record Fault(String name, long start, long end) {
    }

    record Check(String name, long violations, String detail) {
    }

    final Connection db;
    final List<Attempt> attempts = new ArrayList<>();
    final List<Op> ops = new ArrayList<>();
    final List<Fault> faults = new ArrayList<>();
    final List<Check> checks = new ArrayList<>();
    final Map<String, Long> unknownResolved = new TreeMap<>();

    Checker(Connection db) {
        this.db = db;
    }

    public static void main(String[] args) throws Exception {
        try (Connection db = DriverManager.getConnection(args[0], "root", "")) {
            Checker checker = new Checker(db);
            checker.load(Path.of(args[1]), Path.of(args[2]));
            checker.check();
            Path out = Path.of(args[4]);
            checker.writeTimeline(out);
            Files.writeString(out.resolve("report.md"), checker.report(Path.of(args[3]), args[5]));
            long violations = checker.checks.stream().mapToLong(Check::violations).sum();
            System.out.println(checker.summary());
            System.exit(violations == 0 ? 0 : 1);
        }
    }

    void load(Path history, Path faultsFile) throws IOException {
        for (String line : Files.readAllLines(history)) {
            String[] f = line.split("\t", -1);
            if (f[0].equals("A")) {
                attempts.add(new Attempt(Long.parseLong(f[1]), f[2], f[4], f[5], Integer.parseInt(f[8]), Long.parseLong(f[9]),
                        Long.parseLong(f[10]), f[11], f[12]));
            } else if (f[0].equals("O")) {
                ops.add(new Op(Long.parseLong(f[1]), f[2], f[3], f[4], f[5], Long.parseLong(f[6]), Integer.parseInt(f[7]), f[8],
                        Integer.parseInt(f[9]), f[10]));
            }
        }
        if (Files.exists(faultsFile)) {
            for (String line : Files.readAllLines(faultsFile)) {
                String[] f = line.split("\t");
                if (f.length == 3) {
                    faults.add(new Fault(f[0], Long.parseLong(f[1]), Long.parseLong(f[2])));
                }
            }
        }
    }

    void check() throws Exception {
        checks.add(new Check("orders with more than one payment", count("""
                SELECT COUNT(*) FROM (SELECT order_id FROM pay_record GROUP BY order_id HAVING COUNT(*) > 1) t"""), "pay_record"));
        checks.add(new Check("payments without exactly one ledger debit of their amount", count("""
                SELECT COUNT(*) FROM pay_record p WHERE (SELECT COUNT(*) FROM account_entry e WHERE e.ref_type = 'PAYMENT'
                  AND e.ref_id = CAST(p.id AS CHAR CHARACTER SET ascii) AND e.delta = -p.amount) <> 1"""), "pay_record vs account_entry"));
        checks.add(new Check("ledger debits without a payment", count("""
                SELECT COUNT(*) FROM account_entry e WHERE e.ref_type = 'PAYMENT'
                  AND NOT EXISTS (SELECT 1 FROM pay_record p WHERE p.id = CAST(e.ref_id AS UNSIGNED))"""), "account_entry vs pay_record"));
        checks.add(new Check("keys that paid more than once", count("""
                SELECT COUNT(*) FROM (SELECT user_id, idem_key FROM pay_record GROUP BY user_id, idem_key HAVING COUNT(*) > 1) t"""),
                "pay_record by key"));
        checks.add(new Check("accounts whose balance differs from the sum of their entries", count("""
                SELECT COUNT(*) FROM account a WHERE a.balance <> (SELECT COALESCE(SUM(delta), 0) FROM account_entry e
                  WHERE e.user_id = a.user_id)"""), "account vs account_entry"));
        checks.add(new Check("orders whose refunds exceed or disagree with their total", count("""
                SELECT COUNT(*) FROM orders o WHERE o.refunded_amount > o.amount OR o.refunded_amount <>
                  (SELECT COALESCE(SUM(amount), 0) FROM refund_record r WHERE r.order_id = o.id)"""), "orders vs refund_record"));
        long balances = count("SELECT COALESCE(SUM(balance), 0) FROM account");
        long deposits = count("SELECT COALESCE(SUM(delta), 0) FROM account_entry WHERE ref_type = 'DEPOSIT'");
        long paid = count("SELECT COALESCE(SUM(amount), 0) FROM pay_record");
        long refunded = count("SELECT COALESCE(SUM(amount), 0) FROM refund_record");
        checks.add(new Check("money not conserved (balances vs deposits - payments + refunds)",
                Math.abs(balances - (deposits - paid + refunded)),
                "balances " + balances + " = deposits " + deposits + " - payments " + paid + " + refunds " + refunded));
        checks.add(new Check("answers with status 500", attempts.stream().filter(a -> a.status.equals("500")).count(), "history"));

        long lost = 0;
        long refusedWithEffect = 0;
        long unknownWithTwoEffects = 0;
        for (Op op : ops) {
            if (op.type.equals("open")) {
                continue;
            }
            long effects = effects(op);
            switch (op.outcome) {
                case "ok" -> lost += acknowledged(op, effects) ? 0 : 1;
                case "fail" -> refusedWithEffect += effects == 0 ? 0 : 1;
                default -> {
                    unknownResolved.merge(op.type + " -> " + effects + " effect" + (effects == 1 ? "" : "s"), 1L, Long::sum);
                    unknownWithTwoEffects += effects > 1 ? 1 : 0;
                }
            }
        }
        checks.add(new Check("acknowledged operations missing from the database (lost)", lost, "history vs database"));
        checks.add(new Check("definite refusals that moved money", refusedWithEffect, "history vs database"));
        checks.add(new Check("unknown outcomes with more than one effect", unknownWithTwoEffects, "history vs database"));
    }

    /** How many times the database shows this operation's effect. */
    long effects(Op op) throws Exception {
        return switch (op.type) {
            case "pay" -> paymentsByKey().getOrDefault(op.user + "\t" + op.key, 0L);
            case "deposit" -> count("SELECT COUNT(*) FROM account_entry WHERE ref_type = 'DEPOSIT' AND ref_id = ?", reference(op.key));
            case "refund" -> {
                String[] orderAndNo = op.subject.split("/");
                yield count("SELECT COUNT(*) FROM refund_record WHERE order_id = ? AND refund_no = ?", orderAndNo[0], orderAndNo[1]);
            }
            case "create" -> count("SELECT COUNT(*) FROM orders WHERE order_sn = ?", op.subject);
            default -> throw new IllegalArgumentException(op.type);
        };
    }

    private Map<String, Long> paymentsByKey;

    /** pay_record has no index on the key: count payments per (user, key) once, in one scan. */
    Map<String, Long> paymentsByKey() throws SQLException {
        if (paymentsByKey == null) {
            paymentsByKey = new java.util.HashMap<>();
            try (PreparedStatement statement = db.prepareStatement("SELECT user_id, idem_key FROM pay_record");
                 ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    paymentsByKey.merge(rows.getString(1) + "\t" + rows.getString(2), 1L, Long::sum);
                }
            }
        }
        return paymentsByKey;
    }

    /** Whether what the client was told is what the database holds. */
    boolean acknowledged(Op op, long effects) throws Exception {
        return switch (op.type) {
            case "pay" -> op.status == 201
                    ? effects == 1 && count("SELECT COUNT(*) FROM pay_record WHERE id = ? AND order_id = ? AND idem_key = ?",
                            Long.parseLong(op.detail), Long.parseLong(op.subject), op.key) == 1
                    : count("SELECT COUNT(*) FROM pay_record WHERE id = ? AND order_id = ?",
                            Long.parseLong(op.detail), Long.parseLong(op.subject)) == 1;
            case "deposit" -> effects == 1 && count("""
                    SELECT COUNT(*) FROM account_entry WHERE ref_type = 'DEPOSIT' AND ref_id = ? AND delta = ?""",
                    reference(op.key), op.amount) == 1;
            case "refund" -> {
                String[] orderAndNo = op.subject.split("/");
                yield count("SELECT COUNT(*) FROM refund_record WHERE id = ? AND order_id = ? AND refund_no = ? AND amount = ?",
                        op.detail, orderAndNo[0], orderAndNo[1], op.amount) == 1;
            }
            case "create" -> count("SELECT COUNT(*) FROM orders WHERE id = ? AND order_sn = ?", op.detail, op.subject) == 1;
            default -> throw new IllegalArgumentException(op.type);
        };
    }

    /** The ledger reference payonce derives from a caller's key (IdempotentCommand.reference). */
    /** A deposit is booked under its external reference, which the workload makes its key. */
    static String reference(String key) {
        return key;
    }

    long count(String sql, Object... args) throws SQLException {
        try (PreparedStatement statement = db.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }

    long t0() {
        return attempts.stream().mapToLong(Attempt::start).min().orElse(0);
    }

    /** Per second of the run: definite answers (throughput) and everything else (errors: timeouts, 5xx, in-use). */
    void writeTimeline(Path out) throws IOException {
        long t0 = t0();
        long[] ok = perSecond(true);
        long[] errors = perSecond(false);
        StringBuilder tsv = new StringBuilder("# second\tdefinite\terrors\n");
        for (int s = 0; s < ok.length; s++) {
            tsv.append(s).append('\t').append(ok[s]).append('\t').append(errors[s]).append('\n');
        }
        Files.writeString(out.resolve("timeline.tsv"), tsv);
        StringBuilder plot = new StringBuilder("""
                set terminal pngcairo size 1200,500
                set output 'timeline.png'
                set title 'payonce under faults: answers per second'
                set xlabel 'seconds since start'
                set ylabel 'attempts per second'
                set key bottom right
                set style fill transparent solid 0.15 noborder
                """);
        int index = 1;
        for (Fault f : faults) {
            double from = (f.start - t0) / 1000.0;
            double to = Math.max(from + 0.5, (f.end - t0) / 1000.0);
            plot.append(String.format("set object %d rect from %.1f, graph 0 to %.1f, graph 1 behind fc rgb '#cc4444' fs transparent solid 0.15 noborder%n",
                    index, from, to));
            plot.append(String.format("set label %d '%s' at %.1f, graph 0.97 rotate by 90 right font ',8'%n", index, f.name, from + 0.3));
            index++;
        }
        plot.append("plot 'timeline.tsv' using 1:2 with lines lw 2 title 'definite answers', ")
                .append("'timeline.tsv' using 1:3 with lines lw 1 title 'timeouts, 5xx, in-use'\n");
        Files.writeString(out.resolve("timeline.gp"), plot);
    }

    /** Attempts ending in each second of the run, definite ones or the others. */
    long[] perSecond(boolean definite) {
        long t0 = t0();
        int seconds = (int) ((attempts.stream().mapToLong(Attempt::end).max().orElse(t0) - t0) / 1000) + 1;
        long[] counts = new long[seconds];
        for (Attempt a : attempts) {
            if (a.definite() == definite) {
                counts[(int) ((a.end - t0) / 1000)]++;
            }
        }
        return counts;
    }

    String summary() {
        return checks.stream().map(c -> String.format("%-75s %d", c.name, c.violations)).collect(Collectors.joining("\n"));
    }

    String report(Path metricsDir, String title) throws IOException {
        StringBuilder md = new StringBuilder("# " + title + "\n\n");
        long t0 = t0();
        md.append("Run length ").append((attempts.stream().mapToLong(Attempt::end).max().orElse(t0) - t0) / 1000)
                .append(" s; ").append(ops.size()).append(" operations, ").append(attempts.size()).append(" attempts.\n\n");
        md.append("## The promise\n\n| check | violations | compared |\n|---|---|---|\n");
        for (Check c : checks) {
            md.append("| ").append(c.name).append(" | **").append(c.violations).append("** | ").append(c.detail).append(" |\n");
        }
        md.append("\n## Operations\n\n| type | ok | fail | unknown | attempts |\n|---|---|---|---|---|\n");
        Map<String, List<Op>> byType = ops.stream().collect(Collectors.groupingBy(Op::type, TreeMap::new, Collectors.toList()));
        byType.forEach((type, list) -> md.append(String.format("| %s | %d | %d | %d | %d |%n", type,
                list.stream().filter(o -> o.outcome.equals("ok")).count(),
                list.stream().filter(o -> o.outcome.equals("fail")).count(),
                list.stream().filter(o -> o.outcome.equals("unknown")).count(),
                list.stream().mapToLong(Op::attempts).sum())));
        md.append("\nUnknown outcomes, resolved from the database: ").append(unknownResolved.isEmpty() ? "none" : unknownResolved)
                .append("\n\n## Answers by status (all attempts)\n\n| status | count |\n|---|---|\n");
        attempts.stream().collect(Collectors.groupingBy(a -> a.status + (a.detail.matches("[A-Z_]+") ? " " + a.detail : ""),
                        TreeMap::new, Collectors.counting()))
                .forEach((status, n) -> md.append("| ").append(status).append(" | ").append(n).append(" |\n"));
        List<Long> latencies = attempts.stream().filter(Attempt::definite).map(a -> a.end - a.start).sorted().toList();
        md.append("\nLatency of definite answers: p50 ").append(percentile(latencies, 50)).append(" ms, p99 ")
                .append(percentile(latencies, 99)).append(" ms, max ").append(latencies.isEmpty() ? 0 : latencies.get(latencies.size() - 1))
                .append(" ms.\n\n## Faults and recovery\n\n");
        md.append(recovery(t0));
        md.append("\n![throughput and errors over time](timeline.png)\n\n## Duplicates caught, by layer\n\n");
        md.append(duplicates(metricsDir));
        return md.toString();
    }

    /**
     * Recovery: from the end of a fault to the first second whose definite answers are back at half
     * the median of the five seconds before the fault began.
     */
    String recovery(long t0) {
        if (faults.isEmpty()) {
            return "No faults were injected.\n";
        }
        long[] perSecond = perSecond(true);
        StringBuilder md = new StringBuilder("Recovery: seconds from the end of a fault until the answers per second are back at"
                + " half the median of the five seconds before it began.\n\n"
                + "| fault | from (s) | to (s) | answers/s before | lowest during | recovered after (s) |\n|---|---|---|---|---|---|\n");
        for (Fault f : faults) {
            int begin = (int) ((f.start - t0) / 1000);
            int end = Math.min(perSecond.length, (int) Math.ceil((f.end - t0) / 1000.0));
            long[] before = java.util.Arrays.copyOfRange(perSecond, Math.max(0, begin - 5), Math.max(1, begin));
            java.util.Arrays.sort(before);
            long baseline = before[before.length / 2];
            long lowest = java.util.Arrays.stream(perSecond, begin, Math.max(begin + 1, end)).min().orElse(0);
            String recovered = "not within the run";
            for (int s = end; s < perSecond.length; s++) {
                if (perSecond[s] * 2 >= baseline) {
                    recovered = Integer.toString(s - end);
                    break;
                }
            }
            md.append(String.format("| %s | %.1f | %.1f | %d | %d | %s |%n", f.name, (f.start - t0) / 1000.0,
                    (f.end - t0) / 1000.0, baseline, lowest, recovered));
        }
        return md.toString();
    }

    static String duplicates(Path metricsDir) throws IOException {
        Map<String, Double> byLayer = new TreeMap<>();
        double degraded = 0;
        double retries = 0;
        if (Files.isDirectory(metricsDir)) {
            try (Stream<Path> files = Files.list(metricsDir)) {
                for (Path file : files.toList()) {
                    for (String line : Files.readAllLines(file)) {
                        if (line.startsWith("payonce_duplicates_total{")) {
                            String layer = line.replaceAll(".*layer=\"([a-z_]+)\".*", "$1");
                            byLayer.merge(layer, value(line), Double::sum);
                        } else if (line.startsWith("payonce_lock_degraded_total")) {
                            degraded += value(line);
                        } else if (line.startsWith("ft_retry_retries_total{") && line.contains("Transactions")) {
                            retries += value(line);
                        }
                    }
                }
            }
        }
        StringBuilder md = new StringBuilder("Counters read from both instances' /q/metrics at the end of the run; an instance"
                + " that was killed counts only since its restart.\n\n| layer | duplicates caught |\n|---|---|\n");
        byLayer.forEach((layer, n) -> md.append(String.format("| %s | %.0f |%n", layer, n)));
        md.append(String.format("%nPays that went on without the Redis lock: %.0f. Transactions retried after a transient"
                + " failure: %.0f.%n", degraded, retries));
        return md.toString();
    }

    static double value(String line) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }

    static long percentile(List<Long> sorted, int p) {
        return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }
}
