package io.payonce.bench.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.Address;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.payonce.account.EntryType;
import io.payonce.support.Database;
import io.payonce.support.MoneyInvariants;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import java.util.stream.Stream;

/*
 * The checker of the chaos harness. After a run it proves, from the database and the workload's
 * history, that the service kept its promise, and writes the report:
 *   - the money invariants the tests assert too (MoneyInvariants): at most one debit per order and
 *     per key, every balance the sum of its entries, one ledger line per payment and refund...;
 *   - money is conserved; no definite refusal moved money;
 *   - every acknowledged operation is in the ledger (nothing lost);
 *   - every operation whose outcome the client never learned had exactly 0 or 1 effect;
 *   - no answer was a 500;
 *   - both ways: every row that moved money (ledger line, order, payment, refund) belongs to exactly
 *     one operation of the history, and the ledger's totals lie between what was acknowledged and
 *     that plus what stayed unknown (the schema's UNIQUE keys cannot see a second credit under a
 *     new reference; this can);
 *   - the message path: every event the outbox wrote (one per ledger line, a database invariant)
 *     was delivered through the broker, restarts and all, and nothing else was; no command was
 *     dead-lettered; enough pays and refunds went through the broker (their effects are reconciled
 *     with the others: one effect per message id, as per key), card pays among them, some replied 202
 *     and sent again;
 *   - the hop to the processor, from the processor simulator's own ledger: every card payment settled
 *     by the recovery job or a webhook, each order charged at most once, every SUCCEEDED card payment
 *     one charge of its amount under its own key, no charge payonce does not know;
 *   - the processor's webhooks, from the simulator's ledger of deliveries and payonce's inbox and
 *     payment and refund phases: no event moved a payment or a refund twice, every event recorded as
 *     applied did move its own, every delivery answered 2xx is recorded, no forged or stale copy was
 *     accepted, and some payments were settled by a webhook;
 *     likewise every refund to the card settled, no refund number refunded twice, no charge refunded
 *     beyond its amount, every SUCCEEDED card refund one refund of its amount under its own key, no
 *     refund payonce does not know;
 *   - operators' settlements: each audit row belongs to exactly one settlement of the history, under
 *     its key (a payment settled by an operator twice would be two), and the path ran;
 *   - the run proved something: enough operations of every type, most of them acknowledged, every
 *     fault injected while attempts were in flight, a workload that ended cleanly, a history where
 *     every attempt has its outcome and all definite answers of one operation are identical.
 * Any violation makes it exit with status 1.
 *
 * Run by run.sh, on the test classpath, with PAYONCE_DB_* naming the server: Checker <database>
 *     <history.tsv> <faults.tsv> <metrics-dir> <out-dir> <load-seconds> <workload-exit-status> <title> <broker-addresses>
 *     <processor-url>
 * with PAYONCE_COMMANDS_QUEUE naming the command queue (its dead-letter queue is that name + ".dlq").
 */
public final class Checker {

    /**
     * Acknowledged operations per minute of load that a run must reach, per type: about a fifth of
     * what a short run on 2 cores achieved (create 2371, deposit 1212, pay 3041, refund 618 ok in 60 s),
     * and for refunds, once a third of them went to the card, about a third of what a short run
     * achieved (refund 266, card-refund 106 ok in 90 s). A run that did nothing, or whose workload
     * stalled, cannot pass. Counted per minute of load with no fault open ({@link #operationFloors}).
     */
    static final Map<String, Long> OK_FLOOR_PER_MINUTE =
            new TreeMap<>(Map.of("create", 470L, "deposit", 240L, "pay", 400L, "card-pay", 100L, "refund", 60L, "card-refund", 20L));
    /** Share of operations answered ok that a run must reach; a short run on 2 cores reached about 0.9. */
    static final double OK_RATE_FLOOR = 0.75;
    /** Pays and refunds acknowledged through the broker per minute of load: about a fifth of a short run's. */
    static final long BY_MESSAGE_OK_FLOOR_PER_MINUTE = 60;
    /** Card pays acknowledged through the broker per minute of load: about a fifth of a short run's (154 in 90 s). */
    static final long CARD_BY_MESSAGE_OK_FLOOR_PER_MINUTE = 20;
    /** How long the outbox may take to drain once the load and the faults are over. */
    static final Duration OUTBOX_DRAIN = Duration.ofSeconds(60);
    /** How long the recovery jobs may take to settle every card payment and refund once the load and the faults are over. */
    static final Duration CARD_RECOVERY = Duration.ofSeconds(60);

    record Attempt(long op, String type, String key, String subject, int target, long start, long end, String status, String detail,
                   String body) {
        boolean definite() {
            return !status.equals("TIMEOUT") && Answers.definite(Integer.parseInt(status), detail);
        }

        String answer() {
            return status + " " + detail + " " + body;
        }
    }

    /** {@code repeat}: the answer that settled it said it repeats an earlier one (Idempotent-Replayed). */
    record Op(long id, String type, String user, String key, String subject, long amount, int attempts, String outcome,
              int status, String detail, String body, boolean repeat) {
        boolean settled() {
            return outcome.equals("ok") || outcome.equals("fail");
        }

        String answer() {
            return status + " " + detail + " " + body;
        }
    }

    record Fault(String name, long start, long end) {
    }

    record Check(String name, long violations, String detail) {
    }

    /** Rows of the database that moved money, read once for the reconciliation. */
    record LedgerLine(long id, String user, String type, String refId, long delta) {
    }

    record Payment(long id, long orderId, String user, long amount, String key) {
    }

    record Refund(long id, long orderId, String refundNo, String user, long amount) {
    }

    record OrderRow(long id, String user, String orderSn, long amount) {
    }

    /** An operator's settlement as its audit row records it: {@code settled} is the payment or the refund. */
    record Settlement(long id, long settled, String key) {
    }

    /** A database row, named for the report, and the operation of the history it belongs to (null: none). */
    record Claim(String row, Op op) {
    }

    final Connection db;
    final long loadSeconds;
    final int workloadExitStatus;
    final List<Attempt> attempts = new ArrayList<>();
    private static final Duration PROCESSOR_ANSWERS_WITHIN = Duration.ofSeconds(10);

    final List<Op> ops = new ArrayList<>();
    final List<Fault> faults = new ArrayList<>();
    /** The acknowledged operations the database does not show, for the table of faults. */
    final Set<Long> lostOps = new HashSet<>();
    final List<Check> checks = new ArrayList<>();
    final Map<String, Long> unknownResolved = new TreeMap<>();
    final List<String> unreadableLines = new ArrayList<>();
    /** Replies to commands that came after their copy had stopped waiting: key, then the answer. */
    final List<String[]> lateReplies = new ArrayList<>();
    final String brokerAddresses;
    final String processorUrl;
    private final HttpClient processor = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(PROCESSOR_ANSWERS_WITHIN).build();

    Checker(Connection db, long loadSeconds, int workloadExitStatus, String brokerAddresses, String processorUrl) {
        this.db = db;
        this.loadSeconds = loadSeconds;
        this.workloadExitStatus = workloadExitStatus;
        this.brokerAddresses = brokerAddresses;
        this.processorUrl = processorUrl;
    }

    public static void main(String[] args) throws Exception {
        try (Connection db = Database.named(args[0]).connect()) {
            Checker checker = new Checker(db, Long.parseLong(args[5]), Integer.parseInt(args[6]), args[8], args[9]);
            checker.load(Path.of(args[1]), Path.of(args[2]));
            checker.check();
            Path out = Path.of(args[4]);
            checker.writeTimeline(out);
            Files.writeString(out.resolve("report.md"), checker.report(Path.of(args[3]), args[7]));
            long violations = checker.checks.stream().mapToLong(Check::violations).sum();
            System.out.println(checker.summary());
            System.exit(violations == 0 ? 0 : 1);
        }
    }

    /** Reads the history (a line it cannot read is kept as a violation, not a crash) and the fault windows. */
    void load(Path history, Path faultsFile) throws IOException {
        for (String line : Files.readAllLines(history)) {
            try {
                readHistoryLine(line.split("\t", -1));
            } catch (RuntimeException unreadable) {
                unreadableLines.add(line);
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

    /** The columns Workload.History writes. */
    private void readHistoryLine(String[] f) {
        switch (f[0]) {
            case "A" -> attempts.add(new Attempt(Long.parseLong(f[1]), f[2], f[4], f[5], Integer.parseInt(f[8]), Long.parseLong(f[9]),
                    Long.parseLong(f[10]), f[11], f[12], f[13]));
            case "O" -> ops.add(new Op(Long.parseLong(f[1]), f[2], f[3], f[4], f[5], Long.parseLong(f[6]), Integer.parseInt(f[7]), f[8],
                    Integer.parseInt(f[9]), f[10], f[11], "repeat".equals(f[12])));
            case "L" -> lateReplies.add(new String[] {f[1], f[2] + " " + f[3] + " " + f[4]});
            default -> throw new IllegalArgumentException("not a history line");
        }
    }

    void check() throws Exception {
        // Card payments and refunds first: every other check reads the database once they are all settled.
        checkTheCardPayments();
        checkTheCardRefunds();
        checkTheWebhooks();
        checkTheDatabaseAlone();
        checkOutcomesAgainstTheDatabase();
        reconcileTheDatabaseWithTheHistory();
        checkTheMessagePath();
        checkTheRunProvedSomething();
        checkTheHistoryIsWhole();
    }

    /** A charge in the processor simulator's own ledger. */
    record ProcessorCharge(String id, String key, String reference, long amount, String currency, String status) {
        boolean succeeded() {
            return "succeeded".equals(status);
        }
    }

    /** A card payment as payonce recorded it. */
    record CardPayment(String processorKey, long amount, String currency, String phase) {
    }

    /**
     * The hop to the processor, judged from the processor's own ledger and payonce's database once
     * the recovery job has settled every card payment (it must, within {@link #CARD_RECOVERY}): each
     * order charged at the processor at most once; every SUCCEEDED card payment matching exactly one
     * charge of its amount under its own key; no charge that payonce does not know, or knows otherwise.
     */
    void checkTheCardPayments() throws Exception {
        long unsettled = unsettledAfterRecovery("SELECT COUNT(*) FROM pay_record WHERE phase IN ('STARTED', 'CHARGE_SENT', 'UNKNOWN')");
        List<ProcessorCharge> charges = processorLedger();
        Map<String, CardPayment> cards = new HashMap<>();
        rows("SELECT processor_key, amount, currency, phase FROM pay_record WHERE method = 'CARD'",
                row -> new CardPayment(row.getString(1), row.getLong(2), row.getString(3), row.getString(4)))
                .forEach(card -> cards.put(card.processorKey, card));
        Map<String, ProcessorCharge> byKey = charges.stream().collect(Collectors.toMap(ProcessorCharge::key, c -> c));
        String compared = charges.size() + " charges at the processor (" + charges.stream().filter(ProcessorCharge::succeeded).count()
                + " succeeded), " + cards.size() + " card payments";
        long wentUnknown = count("SELECT COUNT(DISTINCT payment_id) FROM payment_phase WHERE phase = 'UNKNOWN'");
        checks.add(new Check("card payments still unsettled " + CARD_RECOVERY.toSeconds() + " s after the run", unsettled,
                "pay_record phases STARTED, CHARGE_SENT, UNKNOWN; " + wentUnknown + " payments were UNKNOWN on the way"));
        // A run whose processor faults left no outcome unknown proved nothing about the recovery.
        checks.add(new Check("no card payment's outcome was ever unknown", wentUnknown == 0 ? 1 : 0,
                wentUnknown + " card payments went through UNKNOWN and were recovered"));
        checks.add(new Check("orders charged more than once at the processor", charges.stream().filter(ProcessorCharge::succeeded)
                .collect(Collectors.groupingBy(ProcessorCharge::reference, Collectors.counting())).values().stream().filter(n -> n > 1).count(),
                compared));
        checks.add(new Check("SUCCEEDED card payments without exactly one processor charge of their amount", cards.values().stream()
                .filter(card -> card.phase.equals("SUCCEEDED"))
                .filter(card -> {
                    ProcessorCharge charge = byKey.get(card.processorKey);
                    return charge == null || !charge.succeeded() || charge.amount != card.amount
                            || !charge.currency.equalsIgnoreCase(card.currency);
                }).count(), compared));
        checks.add(new Check("processor charges payonce does not know, or knows otherwise", charges.stream().filter(charge -> {
            CardPayment card = cards.get(charge.key);
            return card == null || !card.phase.equals(charge.succeeded() ? "SUCCEEDED" : "DECLINED");
        }).count(), compared));
    }

    /** What {@code unsettledQuery} counts once the recovery jobs have settled all they can, or {@link #CARD_RECOVERY} has passed. */
    long unsettledAfterRecovery(String unsettledQuery) throws SQLException, InterruptedException {
        long deadline = System.nanoTime() + CARD_RECOVERY.toNanos();
        long unsettled = count(unsettledQuery);
        while (unsettled > 0 && System.nanoTime() < deadline) {
            Thread.sleep(500);
            unsettled = count(unsettledQuery);
        }
        return unsettled;
    }

    /** One delivery of a webhook event, from the processor simulator's ledger; status 0: no answer. */
    record WebhookDelivery(String event, String kind, int status) {
        boolean accepted() {
            return status >= 200 && status < 300;
        }

        /** A copy the simulator forged (another secret) or signed long ago: payonce must refuse it and record nothing. */
        boolean forgery() {
            return kind.equals("FORGED") || kind.equals("STALE");
        }
    }

    /**
     * The second path to settlement, judged once every card payment and refund is settled. What an
     * event did is read from its effects, not from the inbox's word for it: each payment or refund
     * phase a webhook moved names its event, so an event that moved payments or refunds twice shows as
     * two rows, whatever the inbox says; and an event the inbox calls APPLIED must have moved its
     * payment or its refund. Every delivery the
     * processor saw answered 2xx must be in the inbox, and no forged or stale copy may be there or
     * have been answered 2xx. A run in which no webhook settled a payment proved nothing of them.
     */
    void checkTheWebhooks() throws Exception {
        List<WebhookDelivery> deliveries = webhookLedger();
        Set<String> recorded = new HashSet<>(rows("SELECT event_id FROM processor_event", row -> row.getString(1)));
        long settledByWebhooks = count("SELECT COUNT(DISTINCT payment_id) FROM payment_phase WHERE event_id IS NOT NULL "
                + "AND phase IN ('SUCCEEDED', 'DECLINED')");
        long refundsSettledByWebhooks = count("SELECT COUNT(DISTINCT refund_id) FROM refund_phase WHERE event_id IS NOT NULL "
                + "AND phase IN ('SUCCEEDED', 'FAILED')");
        long events = deliveries.stream().filter(delivery -> !delivery.forgery()).map(WebhookDelivery::event).distinct().count();
        long forgeries = deliveries.stream().filter(WebhookDelivery::forgery).count();
        String compared = deliveries.size() + " deliveries of " + events + " events and " + forgeries + " forged or stale copies; "
                + recorded.size() + " events recorded; " + settledByWebhooks + " card payments and " + refundsSettledByWebhooks
                + " card refunds settled by a webhook";
        checks.add(new Check("webhook events applied more than once", count("""
                SELECT COUNT(*) FROM (SELECT event_id FROM (SELECT event_id FROM payment_phase WHERE event_id IS NOT NULL
                                                            UNION ALL SELECT event_id FROM refund_phase WHERE event_id IS NOT NULL) moved
                                      GROUP BY event_id HAVING COUNT(*) > 1) twice"""),
                compared));
        checks.add(new Check("webhook events recorded as applied without their effect", count("""
                SELECT COUNT(*) FROM processor_event e WHERE e.outcome = 'APPLIED'
                    AND NOT EXISTS (SELECT 1 FROM payment_phase p WHERE p.event_id = e.event_id AND p.payment_id = e.payment_id)
                    AND NOT EXISTS (SELECT 1 FROM refund_phase r WHERE r.event_id = e.event_id AND r.refund_id = e.refund_id)"""), compared));
        checks.add(new Check("webhook events answered 2xx but not recorded", deliveries.stream()
                .filter(delivery -> delivery.accepted() && !delivery.forgery() && !recorded.contains(delivery.event))
                .map(WebhookDelivery::event).distinct().count(), compared));
        checks.add(new Check("forged or stale webhook deliveries accepted or recorded", deliveries.stream()
                .filter(delivery -> delivery.forgery() && (delivery.accepted() || recorded.contains(delivery.event))).count(), compared));
        checks.add(new Check("no card payment was settled by a webhook", settledByWebhooks == 0 ? 1 : 0, compared));
        checks.add(new Check("no card refund was settled by a webhook", refundsSettledByWebhooks == 0 ? 1 : 0, compared));
    }

    List<WebhookDelivery> webhookLedger() throws IOException, InterruptedException {
        List<WebhookDelivery> deliveries = new ArrayList<>();
        for (JsonNode delivery : processorJson("/v1/ledger/webhooks")) {
            deliveries.add(new WebhookDelivery(delivery.get("event").asText(), delivery.get("kind").asText(), delivery.get("status").asInt()));
        }
        return deliveries;
    }

    List<ProcessorCharge> processorLedger() throws IOException, InterruptedException {
        List<ProcessorCharge> charges = new ArrayList<>();
        for (JsonNode charge : processorJson("/v1/ledger")) {
            charges.add(new ProcessorCharge(charge.get("id").asText(), charge.get("key").asText(), charge.get("reference").asText(),
                    charge.get("amount").asLong(), charge.get("currency").asText(), charge.get("status").asText()));
        }
        return charges;
    }

    /** A refund in the processor simulator's own ledger: {@code reference} names the order and the refund number. */
    record ProcessorRefund(String key, String charge, String reference, long amount, String currency, String status) {
        boolean succeeded() {
            return "succeeded".equals(status);
        }
    }

    /** A refund to the card as payonce recorded it. */
    record CardRefund(String processorKey, long amount, String currency, String phase) {
    }

    /**
     * The refunds to the card, judged like the card payments from the processor's own ledger once the
     * recovery job has settled every one: no refund number refunded twice at the processor, no charge
     * refunded beyond its amount in all, every SUCCEEDED card refund exactly one refund of its amount
     * under its own key, and no refund at the processor that payonce does not know, or knows otherwise.
     */
    void checkTheCardRefunds() throws Exception {
        long unsettled = unsettledAfterRecovery("SELECT COUNT(*) FROM refund_record WHERE phase IN ('STARTED', 'SENT', 'UNKNOWN')");
        List<ProcessorRefund> refunds = new ArrayList<>();
        for (JsonNode refund : processorJson("/v1/ledger/refunds")) {
            refunds.add(new ProcessorRefund(refund.get("idempotency_key").asText(), refund.get("charge").asText(),
                    refund.get("reference").asText(), refund.get("amount").asLong(), refund.get("currency").asText(),
                    refund.get("status").asText()));
        }
        Map<String, Long> charged = processorLedger().stream().filter(ProcessorCharge::succeeded)
                .collect(Collectors.toMap(ProcessorCharge::id, ProcessorCharge::amount));
        Map<String, CardRefund> cardRefunds = new HashMap<>();
        rows("SELECT r.processor_key, r.amount, o.currency, r.phase FROM refund_record r JOIN orders o ON o.id = r.order_id "
                + "WHERE r.method = 'CARD'", row -> new CardRefund(row.getString(1), row.getLong(2), row.getString(3), row.getString(4)))
                .forEach(refund -> cardRefunds.put(refund.processorKey, refund));
        Map<String, ProcessorRefund> byKey = refunds.stream().collect(Collectors.toMap(ProcessorRefund::key, r -> r));
        String compared = refunds.size() + " refunds at the processor (" + refunds.stream().filter(ProcessorRefund::succeeded).count()
                + " succeeded), " + cardRefunds.size() + " card refunds";
        long wentUnknown = count("SELECT COUNT(DISTINCT refund_id) FROM refund_phase WHERE phase = 'UNKNOWN'");
        checks.add(new Check("card refunds still unsettled " + CARD_RECOVERY.toSeconds() + " s after the run", unsettled,
                "refund_record phases STARTED, SENT, UNKNOWN; " + wentUnknown + " refunds were UNKNOWN on the way"));
        checks.add(new Check("no card refund's outcome was ever unknown", wentUnknown == 0 ? 1 : 0,
                wentUnknown + " card refunds went through UNKNOWN and were recovered"));
        checks.add(new Check("refund numbers refunded more than once at the processor", refunds.stream().filter(ProcessorRefund::succeeded)
                .collect(Collectors.groupingBy(ProcessorRefund::reference, Collectors.counting())).values().stream().filter(n -> n > 1).count(),
                compared));
        Map<String, Long> refundedPerCharge = refunds.stream().filter(ProcessorRefund::succeeded)
                .collect(Collectors.groupingBy(ProcessorRefund::charge, Collectors.summingLong(ProcessorRefund::amount)));
        checks.add(new Check("orders refunded beyond their charge at the processor", refundedPerCharge.entrySet().stream()
                .filter(refunded -> refunded.getValue() > charged.getOrDefault(refunded.getKey(), 0L)).count(),
                refundedPerCharge.size() + " charges refunded, compared with their amounts"));
        checks.add(new Check("SUCCEEDED card refunds without exactly one processor refund of their amount", cardRefunds.values().stream()
                .filter(refund -> refund.phase.equals("SUCCEEDED"))
                .filter(refund -> {
                    ProcessorRefund atProcessor = byKey.get(refund.processorKey);
                    return atProcessor == null || !atProcessor.succeeded() || atProcessor.amount != refund.amount
                            || !atProcessor.currency.equalsIgnoreCase(refund.currency);
                }).count(), compared));
        checks.add(new Check("processor refunds payonce does not know, or knows otherwise", refunds.stream().filter(refund -> {
            CardRefund known = cardRefunds.get(refund.key);
            return known == null || !known.phase.equals(refund.succeeded() ? "SUCCEEDED" : "FAILED");
        }).count(), compared));
    }

    /**
     * The processor's ledger at {@code path}. Over HTTP/1.1, as the workload's client: the JDK client's
     * default asks a plain-HTTP server to upgrade to HTTP/2, and the simulator's server accepts, and
     * once such a request never ended, its timeout notwithstanding, holding a CI run at "checking" for
     * good. The whole exchange is bounded too, so that no hang can outlive the check.
     */
    JsonNode processorJson(String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(processorUrl + path)).timeout(PROCESSOR_ANSWERS_WITHIN).build();
        CompletableFuture<HttpResponse<String>> answer = processor.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        try {
            return new ObjectMapper().readTree(answer.get(2 * PROCESSOR_ANSWERS_WITHIN.toSeconds(), TimeUnit.SECONDS).body());
        } catch (ExecutionException | TimeoutException failed) {
            answer.cancel(true);
            throw new IOException("the processor's " + path + " did not answer: " + failed, failed);
        }
    }

    /** Invariants that the database must hold by itself, whatever the history says. */
    void checkTheDatabaseAlone() throws SQLException {
        MoneyInvariants.violations(db).forEach((invariant, violations) -> checks.add(new Check(invariant, violations, "database")));
        long balances = count("SELECT COALESCE(SUM(balance), 0) FROM account");
        long deposits = count("SELECT COALESCE(SUM(delta), 0) FROM account_entry WHERE ref_type = 'DEPOSIT'");
        long paid = count("SELECT COALESCE(SUM(amount), 0) FROM pay_record WHERE method = 'BALANCE'");
        long refunded = count("SELECT COALESCE(SUM(amount), 0) FROM refund_record WHERE method = 'BALANCE'");
        checks.add(new Check("money not conserved (balances vs deposits - balance payments + balance refunds)",
                Math.abs(balances - (deposits - paid + refunded)),
                "balances " + balances + " = deposits " + deposits + " - payments " + paid + " + refunds " + refunded));
        checks.add(new Check("answers with status 500", attempts.stream().filter(a -> a.status.equals("500")).count(), "history"));
    }

    /** From the history to the database: what each operation's outcome says must be there, or not. */
    void checkOutcomesAgainstTheDatabase() throws Exception {
        long lost = 0;
        List<String> lostNamed = new ArrayList<>();
        long refusedWithEffect = 0;
        long unknownWithTwoEffects = 0;
        for (Op op : ops) {
            if (op.type.equals("open")) {
                continue;
            }
            long effects = effects(op);
            switch (op.outcome) {
                case "ok" -> {
                    if (!acknowledged(op, effects)) {
                        lost++;
                        lostOps.add(op.id);
                        lostNamed.add(describeLost(op, effects));
                    }
                }
                case "fail" -> refusedWithEffect += effects == 0 ? 0 : 1;
                default -> {
                    unknownResolved.merge(op.type + " -> " + effects + " effect" + (effects == 1 ? "" : "s"), 1L, Long::sum);
                    unknownWithTwoEffects += effects > 1 ? 1 : 0;
                }
            }
        }
        checks.add(new Check("acknowledged operations missing from the database (lost)", lost,
                lostNamed.isEmpty() ? "history vs database" : "history vs database: " + String.join("; ", lostNamed.subList(0, Math.min(5, lostNamed.size())))));
        checks.add(new Check("definite refusals that moved money", refusedWithEffect, "history vs database"));
        checks.add(new Check("unknown outcomes with more than one effect", unknownWithTwoEffects, "history vs database"));
    }

    /**
     * From the database to the history: every row that moved money belongs to exactly one operation,
     * matched on what the workload chose (user, key or reference, order, refund number, amount), never
     * on the database's own ids or UNIQUE keys; and the ledger's totals lie within what the history allows.
     */
    void reconcileTheDatabaseWithTheHistory() throws SQLException {
        Map<String, Op> byEffect = new HashMap<>();
        for (Op op : ops) {
            String effect = effectOf(op);
            if (effect != null) {
                byEffect.put(effect, op);
            }
        }
        Map<String, Payment> payments = payments();
        Map<String, Refund> refunds = refunds();
        List<LedgerLine> ledger = ledger();
        checks.add(reconciliation("DEPOSIT ledger lines not matching exactly one deposit of the history",
                "account_entry DEPOSIT vs deposits (user, reference = key, amount)",
                linesOf(ledger, "DEPOSIT").map(line -> new Claim("entry " + line.id,
                        byEffect.get(effect("deposit", line.user, line.refId, line.delta)))).toList()));
        checks.add(reconciliation("PAYMENT ledger lines not matching exactly one pay of the history",
                "account_entry PAYMENT vs pay_record vs pays (user, order, key, amount)",
                linesOf(ledger, "PAYMENT").map(line -> new Claim("entry " + line.id, paymentOf(line, payments, byEffect))).toList()));
        checks.add(reconciliation("REFUND ledger lines not matching exactly one refund of the history",
                "account_entry REFUND vs refund_record vs refunds (user, order, refund number, amount)",
                linesOf(ledger, "REFUND").map(line -> new Claim("entry " + line.id, refundOf(line, refunds, byEffect))).toList()));
        checks.add(reconciliation("orders not matching exactly one create of the history",
                "orders vs creates (user, order number, amount)",
                orders().stream().map(o -> new Claim("order " + o.id,
                        byEffect.get(effect("create", o.user, o.orderSn, o.amount)))).toList()));
        checks.add(reconciliation("payments not matching exactly one pay of the history",
                "pay_record vs pays (user, order, key, amount)",
                payments.values().stream().map(p -> new Claim("pay_record " + p.id, byEffect.get(effectOf(p)))).toList()));
        checks.add(reconciliation("refunds not matching exactly one refund of the history",
                "refund_record vs refunds (user, order, refund number, amount)",
                refunds.values().stream().map(r -> new Claim("refund_record " + r.id, byEffect.get(effectOf(r)))).toList()));
        checks.add(operatorSettlements(byEffect));
        checks.add(operatorRefundSettlements(byEffect));
        checkLedgerTotals(ledger);
    }

    /**
     * Every audit row of an operator's settlement belongs to exactly one ops-settle of the history,
     * by its key and payment: a settlement the history never sent, or one payment settled twice,
     * shows here. What a settlement did to the money is the money checks' business; that the path
     * ran under the faults, this one's.
     */
    Check operatorSettlements(Map<String, Op> byEffect) throws SQLException {
        return operatorSettlements(byEffect, "ops-settle", "operator settlements", "operator_settlement", "payment_id", "payment");
    }

    /** The same for the refunds to the card, settled through their own audit table. */
    Check operatorRefundSettlements(Map<String, Op> byEffect) throws SQLException {
        return operatorSettlements(byEffect, "ops-settle-refund", "operator settlements of refunds", "refund_settlement", "refund_id", "refund");
    }

    private Check operatorSettlements(Map<String, Op> byEffect, String type, String what, String table, String settledColumn, String settled)
            throws SQLException {
        List<Op> attempted = ops.stream().filter(op -> op.type.equals(type)).toList();
        Check audits = reconciliation(what + " not matching exactly one settlement of the history, or none attempted",
                table + " vs " + type + " (key, " + settled + ")",
                rows("SELECT id, " + settledColumn + ", idem_key FROM " + table, row -> new Settlement(row.getLong(1), row.getLong(2), row.getString(3)))
                        .stream().map(s -> new Claim(table + " " + s.id, byEffect.get(effect(type, s.key, s.settled)))).toList());
        return new Check(audits.name(), audits.violations() + (attempted.isEmpty() ? 1 : 0), audits.detail() + "; " + attempted.size()
                + " attempted, answered " + attempted.stream().collect(Collectors.groupingBy(op -> op.status + " " + op.detail, TreeMap::new,
                Collectors.counting())));
    }

    /**
     * What an operation leaves in the database if it takes effect, in the terms the workload chose;
     * null for opening an account, which moves no money. Keys and order numbers are fresh UUIDs, so
     * no two operations share one.
     */
    static String effectOf(Op op) {
        return switch (op.type) {
            case "deposit" -> effect("deposit", op.user, op.key, op.amount);
            case "pay", "card-pay" -> effect("pay", op.user, op.subject, op.key, op.amount);
            case "refund", "card-refund" -> effect("refund", op.user, op.subject, op.amount);
            case "create" -> effect("create", op.user, op.subject, op.amount);
            case "ops-settle", "ops-settle-refund" -> effect(op.type, op.key, op.subject);
            default -> null;
        };
    }

    static String effectOf(Payment p) {
        return effect("pay", p.user, p.orderId, p.key, p.amount);
    }

    /** A refund operation's subject is "orderId/refundNo". */
    static String effectOf(Refund r) {
        return effect("refund", r.user, r.orderId + "/" + r.refundNo, r.amount);
    }

    static String effect(Object... parts) {
        return Stream.of(parts).map(String::valueOf).collect(Collectors.joining("\t"));
    }

    /** A PAYMENT line names its pay_record, which must debit the same account by the same amount. */
    static Op paymentOf(LedgerLine line, Map<String, Payment> payments, Map<String, Op> byEffect) {
        Payment p = payments.get(line.refId);
        return p != null && p.user.equals(line.user) && p.amount == -line.delta ? byEffect.get(effectOf(p)) : null;
    }

    /** A REFUND line names its refund_record, which must credit the same account by the same amount. */
    static Op refundOf(LedgerLine line, Map<String, Refund> refunds, Map<String, Op> byEffect) {
        Refund r = refunds.get(line.refId);
        return r != null && r.user.equals(line.user) && r.amount == line.delta ? byEffect.get(effectOf(r)) : null;
    }

    static Stream<LedgerLine> linesOf(List<LedgerLine> ledger, String type) {
        return ledger.stream().filter(line -> line.type.equals(type));
    }

    /** Rows that belong to no operation, and rows beyond the first that belong to the same one, are violations. */
    static Check reconciliation(String name, String compared, List<Claim> claims) {
        List<Claim> orphans = claims.stream().filter(c -> c.op == null).toList();
        long matched = claims.size() - orphans.size();
        long sharing = matched - claims.stream().filter(c -> c.op != null).map(c -> c.op.id).distinct().count();
        return new Check(name, orphans.size() + sharing, compared + ": " + claims.size() + " rows, " + orphans.size()
                + " match no operation" + (orphans.isEmpty() ? "" : " (first: " + orphans.get(0).row + ")") + ", " + sharing
                + " share an operation");
    }

    /**
     * Each total the ledger moved lies between the acknowledged operations' amounts and that plus the
     * unknown ones' (which may or may not have taken effect), taken from the history. Several pays of
     * one order pay it once, so payments are summed per order.
     */
    void checkLedgerTotals(List<LedgerLine> ledger) {
        checks.add(withinBounds("ledger deposits outside the history's bounds", "deposits",
                linesOf(ledger, "DEPOSIT").mapToLong(LedgerLine::delta).sum(), amounts("deposit", "ok"), amounts("deposit", "unknown")));
        Map<String, Long> paidOrders = orderAmounts("ok");
        Map<String, Long> maybePaidOrders = orderAmounts("unknown");
        maybePaidOrders.keySet().removeAll(paidOrders.keySet());
        checks.add(withinBounds("ledger payments outside the history's bounds", "payments",
                -linesOf(ledger, "PAYMENT").mapToLong(LedgerLine::delta).sum(), sum(paidOrders), sum(maybePaidOrders)));
        checks.add(withinBounds("ledger refunds outside the history's bounds", "refunds",
                linesOf(ledger, "REFUND").mapToLong(LedgerLine::delta).sum(), amounts("refund", "ok"), amounts("refund", "unknown")));
    }

    /** The violation is how far the ledger's total lies outside the bounds, in minor units. */
    static Check withinBounds(String name, String what, long total, long acknowledged, long unknown) {
        long upper = acknowledged + unknown;
        long outside = total < acknowledged ? acknowledged - total : Math.max(0, total - upper);
        return new Check(name, outside, "ledger " + what + " " + total + ", bounds " + acknowledged + " (acknowledged) .. "
                + upper + " (+ unknown)");
    }

    long amounts(String type, String outcome) {
        return ops.stream().filter(op -> op.type.equals(type) && op.outcome.equals(outcome)).mapToLong(Op::amount).sum();
    }

    /** The orders that pays with this outcome name, with their amounts (a pay operation's subject is its order id). */
    Map<String, Long> orderAmounts(String outcome) {
        Map<String, Long> orders = new HashMap<>();
        ops.stream().filter(op -> op.type.equals("pay") && op.outcome.equals(outcome)).forEach(op -> orders.put(op.subject, op.amount));
        return orders;
    }

    static long sum(Map<String, Long> amounts) {
        return amounts.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * Events and commands through the broker. Once the outbox has drained, the audit queue the
     * workload bound before any money moved holds every event published, duplicates included (at
     * least once): each event id written must be there, and no other.
     */
    void checkTheMessagePath() throws Exception {
        long deadline = System.nanoTime() + OUTBOX_DRAIN.toNanos();
        long unsent = count("SELECT COUNT(*) FROM outbox_event WHERE sent_at IS NULL");
        while (unsent > 0 && System.nanoTime() < deadline) {
            Thread.sleep(200);
            unsent = count("SELECT COUNT(*) FROM outbox_event WHERE sent_at IS NULL");
        }
        checks.add(new Check("events still unsent " + OUTBOX_DRAIN.toSeconds() + " s after the run", unsent, "outbox_event"));
        Set<String> written = new HashSet<>(rows("SELECT event_id FROM outbox_event", row -> row.getString(1)));
        List<String> delivered = new ArrayList<>();
        long deadLettered;
        try (com.rabbitmq.client.Connection broker = new ConnectionFactory()
                .newConnection(List.of(Address.parseAddresses(brokerAddresses)), "payonce-chaos-checker")) {
            Channel channel = broker.createChannel();
            for (GetResponse event = channel.basicGet(CommandChannel.AUDIT_QUEUE, true); event != null;
                 event = channel.basicGet(CommandChannel.AUDIT_QUEUE, true)) {
                delivered.add(event.getProps().getMessageId());
            }
            deadLettered = channel.messageCount(System.getenv().getOrDefault("PAYONCE_COMMANDS_QUEUE", "payonce.commands") + ".dlq");
        }
        Set<String> distinct = new HashSet<>(delivered);
        long neverDelivered = written.stream().filter(id -> !distinct.contains(id)).count();
        long notWritten = distinct.stream().filter(id -> !written.contains(id)).count();
        checks.add(new Check("events written but never delivered", neverDelivered,
                written.size() + " written, " + delivered.size() + " delivered (" + (delivered.size() - distinct.size())
                        + " of them again, under the same event id)"));
        checks.add(new Check("events delivered that the outbox never wrote", notWritten, "audit queue vs outbox_event"));
        checks.add(new Check("commands dead-lettered", deadLettered, "the command queue's dead-letter queue"));
        Set<Long> byMessage = byMessage();
        Set<Long> begunWithNoFault = begunWithNoFaultOpen();
        long ok = ops.stream().filter(op -> byMessage.contains(op.id) && begunWithNoFault.contains(op.id) && op.outcome.equals("ok")).count();
        long floor = BY_MESSAGE_OK_FLOOR_PER_MINUTE * faultFreeSeconds() / 60;
        checks.add(new Check("pays and refunds by message acknowledged below the floor", ok < floor ? 1 : 0,
                byMessage.size() + " sent as commands " + ops.stream().filter(op -> byMessage.contains(op.id))
                        .collect(Collectors.groupingBy(Op::type, TreeMap::new, Collectors.counting())) + ", " + ok
                        + " of those begun with no fault open ok (floor " + floor + " for " + faultFreeSeconds() + " s)"));
        checks.add(cardPaysByMessage(byMessage));
        Map<String, Op> settledByKey = ops.stream().filter(Op::settled).collect(Collectors.toMap(Op::key, op -> op, (a, b) -> a));
        long compared = 0;
        long differing = 0;
        for (String[] late : lateReplies) {
            Op op = settledByKey.get(late[0]);
            String[] statusAndDetail = late[1].split(" ", 3);
            if (op != null && Answers.definite(Integer.parseInt(statusAndDetail[0]), statusAndDetail[1])) {
                compared++;
                differing += late[1].equals(op.answer()) ? 0 : 1;
            }
        }
        checks.add(new Check("late command replies that differ from their operation's answer", differing,
                lateReplies.size() + " late replies, " + compared + " definite ones of settled operations compared"));
    }

    /** The operations that went through the broker. */
    Set<Long> byMessage() {
        return attempts.stream().filter(a -> a.target == Workload.BROKER).map(Attempt::op).collect(Collectors.toSet());
    }

    /**
     * Card pays by command take the same door, guard and phases as over HTTP, and are reconciled with
     * the others (one charge per order and per key, above). A run proves that path only if enough of
     * them were acknowledged and some met an unknown outcome: a 202 reply, answered by sending the
     * command again under its message-id.
     */
    Check cardPaysByMessage(Set<Long> byMessage) {
        Set<Long> begunWithNoFault = begunWithNoFaultOpen();
        long ok = ops.stream().filter(op -> op.type.equals("card-pay") && byMessage.contains(op.id) && begunWithNoFault.contains(op.id)
                && op.outcome.equals("ok")).count();
        List<Attempt> accepted = attempts.stream()
                .filter(a -> a.type.equals("card-pay") && a.target == Workload.BROKER && a.status.equals("202")).toList();
        Set<Long> settled = ops.stream().filter(Op::settled).map(Op::id).collect(Collectors.toSet());
        long resumed = accepted.stream().map(Attempt::op).distinct().filter(settled::contains).count();
        long floor = CARD_BY_MESSAGE_OK_FLOOR_PER_MINUTE * faultFreeSeconds() / 60;
        return new Check("card pays by message acknowledged below the floor, or none replied 202", (ok < floor ? 1 : 0) + (accepted.isEmpty() ? 1 : 0),
                ok + " begun with no fault open ok (floor " + floor + "); " + accepted.size() + " replies 202 (outcome unknown), " + resumed
                        + " of their pays settled by sending the command again");
    }

    /**
     * Card pays over HTTP go through the client library, which answers a 202 by reading the payment
     * until its outcome is known and then asking under the key once more. A run proves that path only
     * if some card pays were answered 202 and then settled by the client: acknowledged or declined.
     */
    Check cardPaysThroughA202OverHttp() {
        Set<Long> answered202 = attempts.stream()
                .filter(a -> a.type.equals("card-pay") && a.target != Workload.BROKER && a.status.equals("202")).map(Attempt::op)
                .collect(Collectors.toSet());
        long settled = ops.stream().filter(op -> answered202.contains(op.id) && op.settled()).count();
        return new Check("card pays over HTTP through a 202 settled by the client: none", settled == 0 ? 1 : 0,
                answered202.size() + " card pays over HTTP answered 202, " + settled + " of them then settled by the client");
    }

    /** A run that did nothing, or did it while nothing was failing, proves nothing. */
    void checkTheRunProvedSomething() {
        checks.add(operationFloors());
        long ok = ops.stream().filter(op -> op.outcome.equals("ok")).count();
        double okRate = ops.isEmpty() ? 0 : (double) ok / ops.size();
        checks.add(new Check("share of operations acknowledged below the floor", okRate < OK_RATE_FLOOR ? 1 : 0,
                String.format("%d of %d ok = %.3f, floor %.2f", ok, ops.size(), okRate, OK_RATE_FLOOR)));
        checks.add(faultsWithAttemptsInFlight());
        checks.add(cardPaysThroughA202OverHttp());
        long endedByException = ops.stream().filter(op -> op.detail.startsWith(Workload.Outcome.EXCEPTION)).count();
        checks.add(new Check("workload failures (exit status, operations ended by an exception)",
                (workloadExitStatus == 0 ? 0 : 1) + endedByException,
                "exit status " + workloadExitStatus + ", " + endedByException + " operations ended by an exception"));
    }

    /**
     * Per type, the operations begun while no fault was open and acknowledged, against the floor for the
     * load's seconds with no fault open; each type below it is a violation. What a fault takes away (a
     * whole cluster's restart, the seconds until an evicted writer is out) says nothing of the
     * workload, and it grows with a heal slowed by a busy machine; a workload that stalled still falls
     * far below its floor.
     */
    Check operationFloors() {
        long below = 0;
        long seconds = faultFreeSeconds();
        Set<Long> begunWithNoFault = begunWithNoFaultOpen();
        List<String> compared = new ArrayList<>();
        for (Map.Entry<String, Long> floorPerMinute : OK_FLOOR_PER_MINUTE.entrySet()) {
            String type = floorPerMinute.getKey();
            long floor = floorPerMinute.getValue() * seconds / 60;
            long ok = ops.stream().filter(op -> op.type.equals(type) && begunWithNoFault.contains(op.id) && op.outcome.equals("ok")).count();
            below += ok < floor ? 1 : 0;
            compared.add(type + " " + ok + " (floor " + floor + ")");
        }
        return new Check("operation types with fewer acknowledged operations than their floor", below,
                "ok per type, begun in the " + seconds + " s of " + loadSeconds + " s of load with no fault open: " + String.join(", ", compared));
    }

    /** The operations whose first attempt began while no fault window was open. */
    Set<Long> begunWithNoFaultOpen() {
        Map<Long, Long> firstStart = attempts.stream().collect(Collectors.toMap(Attempt::op, Attempt::start, Math::min));
        return firstStart.entrySet().stream()
                .filter(first -> faults.stream().noneMatch(f -> first.getValue() >= f.start && first.getValue() < f.end))
                .map(Map.Entry::getKey).collect(Collectors.toSet());
    }

    /** The load's seconds, from its first attempt on, with no fault window open. */
    long faultFreeSeconds() {
        long loadStart = attempts.stream().mapToLong(Attempt::start).min().orElse(0);
        long loadEnd = loadStart + loadSeconds * 1000;
        long faulted = 0;
        long coveredUntil = loadStart;
        for (Fault f : faults.stream().sorted(Comparator.comparingLong(Fault::start)).toList()) {
            long from = Math.max(f.start, coveredUntil);
            long to = Math.min(f.end, loadEnd);
            if (to > from) {
                faulted += to - from;
                coveredUntil = to;
            }
        }
        return (loadSeconds * 1000 - faulted) / 1000;
    }

    /** A fault proves something only if requests were in flight while it lasted; no fault at all is a violation too. */
    Check faultsWithAttemptsInFlight() {
        if (faults.isEmpty()) {
            return new Check("fault windows without attempts in flight", 1, "faults.tsv lists no fault");
        }
        long idle = 0;
        List<String> compared = new ArrayList<>();
        for (Fault f : faults) {
            long inFlight = attempts.stream().filter(a -> a.start < f.end && a.end > f.start).count();
            idle += inFlight == 0 ? 1 : 0;
            compared.add(f.name + " " + inFlight);
        }
        return new Check("fault windows without attempts in flight", idle, "attempts in flight: " + String.join(", ", compared));
    }

    /**
     * The history must hold every attempt with its operation's outcome, and an operation must have
     * been told one thing: its definite answers (double clicks, retries) and its outcome all identical.
     */
    void checkTheHistoryIsWhole() {
        Map<Long, List<Attempt>> attemptsByOp = attempts.stream().collect(Collectors.groupingBy(Attempt::op));
        Map<Long, Long> outcomeLines = ops.stream().collect(Collectors.groupingBy(Op::id, Collectors.counting()));
        long orphanAttempts = attempts.stream().filter(a -> !outcomeLines.containsKey(a.op)).count();
        long repeatedOutcomes = outcomeLines.values().stream().mapToLong(n -> n - 1).sum();
        long attemptsMissing = ops.stream().filter(op -> op.attempts != attemptsByOp.getOrDefault(op.id, List.of()).size()).count();
        checks.add(new Check("attempts and outcomes that do not pair up, unreadable history lines",
                orphanAttempts + repeatedOutcomes + attemptsMissing + unreadableLines.size(),
                orphanAttempts + " attempt lines without an outcome line, " + repeatedOutcomes + " repeated outcome lines, "
                        + attemptsMissing + " outcomes whose attempt count differs from their attempt lines, "
                        + unreadableLines.size() + " unreadable lines"));
        List<Op> disagreeing = ops.stream().filter(op -> !answersAgree(op, attemptsByOp.getOrDefault(op.id, List.of()))).toList();
        long answeredTwice = attemptsByOp.values().stream().filter(list -> list.stream().filter(Attempt::definite).count() > 1).count();
        checks.add(new Check("operations whose definite answers differ (double clicks, retries, outcome)", disagreeing.size(),
                "history: " + answeredTwice + " operations answered definitely more than once"
                        + (disagreeing.isEmpty() ? "" : "; first: operation " + disagreeing.get(0).id)));
    }

    /**
     * Under an Idempotency-Key every answer after the first is a replay of the stored one, byte for
     * byte: all definite answers must be equal, and equal to the outcome, and an operation recorded as
     * unknown must have had none. Opening an account is not keyed, but its repeat answers the same
     * way: the first answer's status and body, marked as a repeat.
     */
    static boolean answersAgree(Op op, List<Attempt> attempts) {
        Set<String> answers = attempts.stream().filter(Attempt::definite).map(Attempt::answer).collect(Collectors.toSet());
        if (!op.settled()) {
            return answers.isEmpty();
        }
        return answers.size() == 1 && answers.contains(op.answer());
    }

    /** How many times the database shows this operation's effect, looked up by the keys of schema V2 (per user). */
    long effects(Op op) throws Exception {
        return switch (op.type) {
            case "pay", "card-pay" -> paymentsByKey().getOrDefault(op.user + "\t" + op.key, 0L);
            case "deposit" -> count("SELECT COUNT(*) FROM account_entry WHERE user_id = ? AND ref_type = 'DEPOSIT' AND ref_id = ?",
                    op.user, reference(op.key));
            case "refund", "card-refund" -> {
                // A refund to the card that failed is a row that moved no money: no effect.
                String[] orderAndNo = op.subject.split("/");
                yield count("SELECT COUNT(*) FROM refund_record WHERE order_id = ? AND refund_no = ? AND phase = 'SUCCEEDED'",
                        orderAndNo[0], orderAndNo[1]);
            }
            case "create" -> count("SELECT COUNT(*) FROM orders WHERE user_id = ? AND order_sn = ?", op.user, op.subject);
            case "ops-settle" -> count("SELECT COUNT(*) FROM operator_settlement WHERE payment_id = ? AND idem_key = ?", op.subject, op.key);
            case "ops-settle-refund" -> count("SELECT COUNT(*) FROM refund_settlement WHERE refund_id = ? AND idem_key = ?", op.subject, op.key);
            default -> throw new IllegalArgumentException(op.type);
        };
    }

    private Map<String, Long> paymentsByKey;

    /** pay_record has no index on the key: count payments per (user, key) once, from the one scan of payments(). */
    Map<String, Long> paymentsByKey() throws SQLException {
        if (paymentsByKey == null) {
            paymentsByKey = new HashMap<>();
            for (Payment p : payments().values()) {
                paymentsByKey.merge(p.user + "\t" + p.key, 1L, Long::sum);
            }
        }
        return paymentsByKey;
    }

    private Map<String, Payment> payments;

    /** Every pay_record by its id as text, which is how a PAYMENT ledger line names it. */
    Map<String, Payment> payments() throws SQLException {
        if (payments == null) {
            payments = new HashMap<>();
            // A declined card payment moved no money and charged nothing: it is no effect of its pay.
            for (Payment p : rows("SELECT id, order_id, user_id, amount, idem_key FROM pay_record WHERE phase = 'SUCCEEDED'",
                    row -> new Payment(row.getLong(1), row.getLong(2), row.getString(3), row.getLong(4), row.getString(5)))) {
                payments.put(EntryType.referenceOf(p.id), p);
            }
        }
        return payments;
    }

    /** Every refund_record by its id as text, which is how a REFUND ledger line names it. */
    Map<String, Refund> refunds() throws SQLException {
        Map<String, Refund> refunds = new HashMap<>();
        for (Refund r : rows("SELECT id, order_id, refund_no, user_id, amount FROM refund_record",
                row -> new Refund(row.getLong(1), row.getLong(2), row.getString(3), row.getString(4), row.getLong(5)))) {
            refunds.put(EntryType.referenceOf(r.id), r);
        }
        return refunds;
    }

    List<LedgerLine> ledger() throws SQLException {
        return rows("SELECT id, user_id, ref_type, ref_id, delta FROM account_entry",
                row -> new LedgerLine(row.getLong(1), row.getString(2), row.getString(3), row.getString(4), row.getLong(5)));
    }

    List<OrderRow> orders() throws SQLException {
        return rows("SELECT id, user_id, order_sn, amount FROM orders",
                row -> new OrderRow(row.getLong(1), row.getString(2), row.getString(3), row.getLong(4)));
    }

    interface RowReader<T> {
        T read(ResultSet row) throws SQLException;
    }

    <T> List<T> rows(String sql, RowReader<T> reader, Object... args) throws SQLException {
        List<T> rows = new ArrayList<>();
        try (PreparedStatement statement = db.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                statement.setObject(i + 1, args[i]);
            }
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    rows.add(reader.read(result));
                }
            }
        }
        return rows;
    }

    /**
     * A lost operation as the history holds it, beside what the database holds under its subject, so
     * that a failed run names what went missing without a second look at its files.
     */
    String describeLost(Op op, long effects) throws SQLException {
        String held = switch (op.type) {
            case "pay", "card-pay" -> rows("SELECT id, phase, idem_key FROM pay_record WHERE order_id = ?",
                    row -> row.getLong(1) + ":" + row.getString(2) + ":" + row.getString(3), Long.parseLong(op.subject)).toString();
            case "refund", "card-refund" -> rows("SELECT id, refund_no, amount, phase FROM refund_record WHERE order_id = ?",
                    row -> row.getLong(1) + ":" + row.getString(2) + ":" + row.getLong(3) + ":" + row.getString(4), op.subject.split("/")[0]).toString();
            default -> "";
        };
        return "op " + op.id + " " + op.type + " user " + op.user + " key " + op.key + " subject " + op.subject + " amount " + op.amount
                + " attempts " + op.attempts + " answer " + op.status + " " + op.detail + (op.repeat ? " (replayed)" : "") + ", effects " + effects
                + (held.isEmpty() ? "" : ", rows " + held);
    }

    /** Whether what the client was told is what the database holds. */
    boolean acknowledged(Op op, long effects) throws Exception {
        return switch (op.type) {
            case "pay", "card-pay" -> op.status == 201 && !op.repeat
                    ? effects == 1 && count("SELECT COUNT(*) FROM pay_record WHERE id = ? AND order_id = ? AND idem_key = ? AND phase = 'SUCCEEDED'",
                            Long.parseLong(op.detail), Long.parseLong(op.subject), op.key) == 1
                    : count("SELECT COUNT(*) FROM pay_record WHERE id = ? AND order_id = ? AND phase = 'SUCCEEDED'",
                            Long.parseLong(op.detail), Long.parseLong(op.subject)) == 1;
            case "deposit" -> effects == 1 && count("""
                    SELECT COUNT(*) FROM account_entry WHERE user_id = ? AND ref_type = 'DEPOSIT' AND ref_id = ? AND delta = ?""",
                    op.user, reference(op.key), op.amount) == 1;
            case "refund", "card-refund" -> {
                String[] orderAndNo = op.subject.split("/");
                yield count("SELECT COUNT(*) FROM refund_record WHERE id = ? AND order_id = ? AND refund_no = ? AND amount = ? AND phase = 'SUCCEEDED'",
                        op.detail, orderAndNo[0], orderAndNo[1], op.amount) == 1;
            }
            case "create" -> count("SELECT COUNT(*) FROM orders WHERE id = ? AND order_sn = ?", op.detail, op.subject) == 1;
            case "ops-settle", "ops-settle-refund" -> effects == 1;
            default -> throw new IllegalArgumentException(op.type);
        };
    }

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

    /** The run spans its attempts and its faults, so that a run without attempts still gets a report. */
    long t0() {
        return LongStream.concat(attempts.stream().mapToLong(Attempt::start), faults.stream().mapToLong(Fault::start)).min().orElse(0);
    }

    long runEnd() {
        return LongStream.concat(attempts.stream().mapToLong(Attempt::end), faults.stream().mapToLong(Fault::end)).max().orElse(t0());
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
        int seconds = (int) ((runEnd() - t0) / 1000) + 1;
        long[] counts = new long[seconds];
        for (Attempt a : attempts) {
            if (a.definite() == definite) {
                counts[(int) ((a.end - t0) / 1000)]++;
            }
        }
        return counts;
    }

    /** One row a check; a failed one names what it compared, so that CI's failure summary says what went wrong. */
    String summary() {
        return checks.stream().map(c -> String.format("%-75s %d", c.violations == 0 ? c.name : c.name + " [" + c.detail + "]", c.violations))
                .collect(Collectors.joining("\n"));
    }

    String report(Path metricsDir, String title) throws IOException {
        StringBuilder md = new StringBuilder("# " + title + "\n\n");
        long t0 = t0();
        md.append("Run length ").append((runEnd() - t0) / 1000)
                .append(" s; ").append(ops.size()).append(" operations, ").append(attempts.size()).append(" attempts.\n\n");
        md.append("## The promise\n\nEvery row must show 0; any other number fails the run.\n\n")
                .append("| check | violations | compared |\n|---|---|---|\n");
        for (Check c : checks) {
            md.append("| ").append(c.name).append(" | **").append(c.violations).append("** | ").append(c.detail).append(" |\n");
        }
        md.append("\n## Operations\n\n| type | ok | fail | unknown | attempts |\n|---|---|---|---|---|\n");
        Set<Long> byMessage = byMessage();
        Map<String, List<Op>> byType = ops.stream().collect(Collectors.groupingBy(
                op -> op.type + (byMessage.contains(op.id) ? " by message" : ""), TreeMap::new, Collectors.toList()));
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
        md.append(perFault());
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

    /**
     * Per fault, what a client saw: the longest time in which no pay succeeded, between two successful
     * pays' answers around and in the fault's window (to the end of the run if none succeeded after
     * it); how many pays began during it, and the p99 of their definite answers (a client's own
     * timeout is its deadline, not the service's latency); and, of the operations acknowledged with an
     * attempt in flight during it, how many are missing from the database.
     */
    String perFault() {
        if (faults.isEmpty()) {
            return "";
        }
        List<Long> succeeded = attempts.stream().filter(a -> a.type.equals("pay") && a.status.startsWith("2"))
                .map(Attempt::end).sorted().toList();
        Set<Long> acknowledged = ops.stream().filter(op -> op.outcome.equals("ok")).map(Op::id).collect(Collectors.toSet());
        StringBuilder md = new StringBuilder("\nPays per fault: the longest time without a successful pay around and in the fault,"
                + " the pays begun during it and the p99 of their definite answers, and the acknowledged operations in flight during it"
                + " that the database lacks.\n\n| fault | no pay succeeded for (s) | pays begun | p99 of their definite answers (ms) |"
                + " acknowledged operations in flight, lost |\n|---|---|---|---|---|\n");
        for (Fault f : faults) {
            List<Attempt> begun = attempts.stream().filter(a -> a.type.equals("pay") && a.start >= f.start && a.start <= f.end).toList();
            List<Long> latencies = begun.stream().filter(Attempt::definite).map(a -> a.end - a.start).sorted().toList();
            Set<Long> inFlight = attempts.stream().filter(a -> a.start <= f.end && a.end >= f.start).map(Attempt::op)
                    .filter(acknowledged::contains).collect(Collectors.toSet());
            long lost = inFlight.stream().filter(lostOps::contains).count();
            md.append(String.format("| %s | %s | %d | %s | %d of %d |%n", f.name, longestWithoutSuccess(succeeded, f), begun.size(),
                    latencies.isEmpty() ? "n/a" : Long.toString(percentile(latencies, 99)), lost, inFlight.size()));
        }
        return md.toString();
    }

    /** Over the successful pays' answer times: the longest gap that touches the fault's window, in seconds. */
    private String longestWithoutSuccess(List<Long> succeeded, Fault f) {
        if (succeeded.isEmpty()) {
            return "n/a (no pay succeeded)";
        }
        long longest = 0;
        long previous = succeeded.get(0);
        for (long next : succeeded) {
            if (next >= f.start && previous <= f.end) {
                longest = Math.max(longest, next - previous);
            }
            previous = next;
        }
        if (previous <= f.end) {
            longest = Math.max(longest, runEnd() - previous);
        }
        return String.format("%.1f", longest / 1000.0);
    }

    static String duplicates(Path metricsDir) throws IOException {
        Map<String, Double> byLayer = new TreeMap<>();
        Map<String, Double> messages = new TreeMap<>();
        Map<String, Double> webhooks = new TreeMap<>();
        double degraded = 0;
        double retries = 0;
        if (Files.isDirectory(metricsDir)) {
            try (Stream<Path> files = Files.list(metricsDir)) {
                for (Path file : files.toList()) {
                    for (String line : Files.readAllLines(file)) {
                        if (line.startsWith("payonce_duplicates_total{")) {
                            String layer = line.replaceAll(".*layer=\"([a-z_]+)\".*", "$1");
                            byLayer.merge(layer, value(line), Double::sum);
                        } else if (line.startsWith("payonce_messages_total{")) {
                            messages.merge(line.replaceAll(".*outcome=\"([a-z_]+)\".*", "$1"), value(line), Double::sum);
                        } else if (line.startsWith("payonce_processor_webhooks_total{")) {
                            webhooks.merge(line.replaceAll(".*outcome=\"([a-z_]+)\".*", "$1"), value(line), Double::sum);
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
        md.append("\n| commands, by what became of them | count |\n|---|---|\n");
        messages.forEach((outcome, n) -> md.append(String.format("| %s | %.0f |%n", outcome, n)));
        md.append("\n| webhook deliveries, by what became of them | count |\n|---|---|\n");
        webhooks.forEach((outcome, n) -> md.append(String.format("| %s | %.0f |%n", outcome, n)));
        md.append(String.format("%nPays that went on without the Redis lock: %.0f. Transactions retried after a transient"
                + " failure: %.0f.%n", degraded, retries));
        return md.toString();
    }

    /** A sample's value: the number after its name and labels, before the exemplar (" # {trace_id=…} 1.0 <timestamp>") that traced counters carry. */
    static double value(String line) {
        String sample = line.contains(" # ") ? line.substring(0, line.indexOf(" # ")) : line;
        return Double.parseDouble(sample.substring(sample.lastIndexOf(' ') + 1));
    }

    static long percentile(List<Long> sorted, int p) {
        return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }
}
