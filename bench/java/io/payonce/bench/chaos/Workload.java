package io.payonce.bench.chaos;

import io.payonce.client.PayonceClient;
import io.payonce.idempotency.Answer;
import io.payonce.support.Tokens;

import java.io.BufferedWriter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/*
 * The bank workload for the chaos harness: many users, orders, pays, refunds and deposits sent the
 * way real clients send them when things go wrong. Each logical operation has one Idempotency-Key
 * and keeps it across all its retries. Orders, pays, refunds and deposits go over HTTP through the
 * client library, as payonce's users send them (ThroughTheClient): it retries them, honouring
 * Retry-After, and follows a 202's Location; the workload makes its clients time out at random (a few
 * ms to 2 s), double-click, give up now and then, and spread their requests over the gateway and both
 * instances. A third of the orders are paid by card, through the processor simulator, and a 202 (the charge's outcome not known yet) is followed
 * by the client; their refunds go back to the card through the same simulator ("card-refund"), a 202
 * followed the same way. A fifth of the pays, by card or from the balance, and
 * of the refunds go as commands through the broker instead (message-id = key, sent again under the
 * same id until a definite reply comes: a card pay's 202 reply is answered by sending it again),
 * as an upstream order system would send them. Now and then ops try to settle a card
 * payment or a refund to the card the workload has seen (POST /payments/{id}/settlement,
 * POST /refunds/{id}/settlement): nearly always refused, since nothing is overdue within a run, but sent under the faults like the rest, and never to move money. Every attempt and every operation's
 * outcome is written to a history file for the checker; an exception inside the workload still
 * writes the outcome line (as unknown) and makes the workload exit with status 1.
 *
 * Run by run.sh, on the test classpath (it signs its tokens with the test key, as the tests do):
 *     Workload <gateway-url> <instance-a-url> <instance-b-url> <seconds> <history.tsv> <broker-port> [stop-file]
 * The load lasts <seconds> at least and, given a stop file, until the harness creates it: once its
 * last fault has healed, so that every fault meets a load however long its heal took.
 * The commands queue and the events exchange are PAYONCE_COMMANDS_QUEUE and PAYONCE_EVENTS_EXCHANGE.
 * Loopback only.
 */

public final class Workload {

    static final int USERS = 12;
    static final int WORKERS = 24;
    static final long INITIAL_BALANCE = 2_000_000;
    /** After the load stops, operations still in flight keep retrying this long before they give up as unknown. */
    static final long SETTLE_MILLIS = 20_000;
    /** After an answer that settled nothing, a client sometimes never retries (a closed tab, a crashed job): its outcome stays unknown. */
    static final int ABANDON_PERCENT = 5;
    /** How long the workload keeps reading replies after its last operation ended. */
    static final long LATE_REPLY_GRACE_MILLIS = 3000;
    /** Share of pays and refunds sent as commands through the broker. */
    static final int BY_MESSAGE_PERCENT = 20;
    /**
     * Every third order is paid by card, through the processor simulator that fails at random; the
     * others from the balance. An order keeps its method, so that the checker can bound the ledger's
     * payments by the balance pays alone.
     */
    static final int CARD_ORDER_EVERY = 3;
    /** Share of card pays whose card the processor declines: their order stays payable. */
    static final int DECLINED_CARD_PERCENT = 10;
    /** The target index of the broker in the history, after the gateway (0) and the two instances (1, 2). */
    static final int BROKER = 3;
    /** Share of operations that are an operator's settlement of a card payment. */
    static final int OPERATOR_SETTLEMENT_PERCENT = 3;

    final String[] targets;
    final History history;
    final CommandChannel commands;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(1)).build();
    final AtomicLong operationIds = new AtomicLong();
    final List<User> users = new ArrayList<>();
    /** Card payments named in answers to card pays, settled or not: what an operator may try to settle. */
    final List<Long> cardPayments = new CopyOnWriteArrayList<>();
    /** Refunds to the card named in answers to card refunds, settled or not: what an operator may try to settle. */
    final List<Long> cardRefunds = new CopyOnWriteArrayList<>();
    final String opsToken;
    /** The client library, through which every operation it has a call for goes over HTTP. */
    final ThroughTheClient client;

    Workload(String[] targets, History history, CommandChannel commands) {
        this.targets = targets;
        this.history = history;
        this.commands = commands;
        this.opsToken = Tokens.lastingAnHour("chaos-ops", "ops");
        this.client = new ThroughTheClient(targets);
    }

    public static void main(String[] args) throws Exception {
        String[] targets = {args[0], args[1], args[2]};
        long seconds = Long.parseLong(args[3]);
        long failures;
        try (History history = new History(Path.of(args[4]));
             CommandChannel commands = new CommandChannel(args[5],
                     System.getenv().getOrDefault("PAYONCE_COMMANDS_QUEUE", "payonce.commands"),
                     System.getenv().getOrDefault("PAYONCE_EVENTS_EXCHANGE", "payonce.events"))) {
            Workload workload = new Workload(targets, history, commands);
            workload.openAccounts();
            failures = workload.run(seconds, args.length > 6 ? Path.of(args[6]) : null);
            // Replies that come while the consumers drain the last copies are late replies too.
            Thread.sleep(LATE_REPLY_GRACE_MILLIS);
            commands.lateReplies().forEach(history::lateReply);
            System.out.println("workload: " + commands.lateReplies().size() + " replies came after their copy had stopped waiting");
        }
        // After the history is closed, so that every line written so far reaches the checker.
        if (failures > 0) {
            System.err.println("workload: " + failures + " failures, see above; the run must not pass");
            System.exit(1);
        }
    }

    void openAccounts() throws InterruptedException {
        String run = Long.toString(System.currentTimeMillis(), 36);
        for (int i = 0; i < USERS; i++) {
            String id = "chaos-" + run + "-" + i;
            User user = new User(id, Tokens.lastingAnHour(id, "user"));
            users.add(user);
            Operation open = new Operation(this, "open", user, "open-" + user.id, "/accounts", opsToken,
                    "{\"userId\":\"" + user.id + "\",\"currency\":\"EUR\"}", 0, user.id);
            open.send(() -> Long.MAX_VALUE, false);
            deposit(user, INITIAL_BALANCE).send(() -> Long.MAX_VALUE, false);
        }
    }

    /**
     * Runs the load for {@code seconds} at least and, with a {@code stopFile}, until it exists; answers
     * how many times the workload itself failed (an exception, a worker that did not end).
     */
    long run(long seconds, Path stopFile) throws InterruptedException {
        long earliestStop = System.currentTimeMillis() + seconds * 1000;
        // Operations in flight when the load stops keep retrying until the settle time after it.
        AtomicLong giveUpAt = new AtomicLong(Long.MAX_VALUE);
        BooleanSupplier loadGoesOn = () -> {
            if (System.currentTimeMillis() < earliestStop || (stopFile != null && !Files.exists(stopFile))) {
                return true;
            }
            giveUpAt.compareAndSet(Long.MAX_VALUE, System.currentTimeMillis() + SETTLE_MILLIS);
            return false;
        };
        AtomicLong failures = new AtomicLong();
        ExecutorService workers = Executors.newFixedThreadPool(WORKERS);
        for (int i = 0; i < WORKERS; i++) {
            workers.submit(() -> {
                while (loadGoesOn.getAsBoolean()) {
                    try {
                        nextOperation().send(giveUpAt::get, true);
                    } catch (Throwable e) {
                        // A bug in the workload, not a fault of the service: keep the load going, but fail the run.
                        failures.incrementAndGet();
                        e.printStackTrace();
                    }
                }
            });
        }
        workers.shutdown();
        if (!endedWithinAMinuteOfGivingUp(workers, loadGoesOn, giveUpAt)) {
            System.err.println("workload: workers still busy long after the settle time; interrupting them");
            failures.incrementAndGet();
            workers.shutdownNow();
            // Interrupted operations write their outcome lines before the history closes.
            workers.awaitTermination(10, TimeUnit.SECONDS);
        }
        return failures.get();
    }

    /**
     * Waits for the workers, for as long as the load goes on and then until a minute after the settle
     * time. It looks whether the load goes on itself, so that the settle time starts with the stop even
     * while every worker is still retrying an operation.
     */
    private static boolean endedWithinAMinuteOfGivingUp(ExecutorService workers, BooleanSupplier loadGoesOn, AtomicLong giveUpAt)
            throws InterruptedException {
        while (!workers.awaitTermination(1, TimeUnit.SECONDS)) {
            loadGoesOn.getAsBoolean();
            long givenUp = giveUpAt.get();
            if (givenUp != Long.MAX_VALUE && System.currentTimeMillis() > givenUp + 60_000) {
                return false;
            }
        }
        return true;
    }

    Operation nextOperation() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        User user = users.get(random.nextInt(users.size()));
        int dice = random.nextInt(100);
        if (dice < 30 || user.orders.isEmpty()) {
            long amount = 100 + random.nextInt(4900);
            String sn = "sn-" + UUID.randomUUID();
            Operation create = new Operation(this, "create", user, newKey(), "/orders", user.token,
                    "{\"orderSn\":\"" + sn + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}", amount, sn);
            return create.viaClient(client -> client.createOrder(sn, amount, "EUR", create.key));
        }
        Order order = user.orders.get(random.nextInt(user.orders.size()));
        boolean byMessage = random.nextInt(100) < BY_MESSAGE_PERCENT;
        if (dice < 70 && order.id % CARD_ORDER_EVERY == 0) {
            String token = random.nextInt(100) < DECLINED_CARD_PERCENT ? "tok_decline_chaos" : "tok_visa";
            String how = "\"method\":\"card\",\"cardToken\":\"" + token + "\"";
            Operation cardPay = new Operation(this, "card-pay", user, newKey(), "/orders/" + order.id + "/pay", user.token,
                    "{" + how + "}", order.amount, Long.toString(order.id));
            cardPay.viaClient(client -> client.payByCard(order.id, token, cardPay.key));
            return byMessage ? cardPay.asCommand("{\"type\":\"pay\",\"userId\":\"" + user.id + "\",\"orderId\":" + order.id + "," + how + "}")
                    : cardPay;
        }
        if (dice < 70) {
            Operation pay = new Operation(this, "pay", user, newKey(), "/orders/" + order.id + "/pay", user.token, null, order.amount,
                    Long.toString(order.id));
            pay.viaClient(client -> client.pay(order.id, pay.key));
            return byMessage ? pay.asCommand("{\"type\":\"pay\",\"userId\":\"" + user.id + "\",\"orderId\":" + order.id + "}") : pay;
        }
        if (dice >= 100 - OPERATOR_SETTLEMENT_PERCENT && !cardRefunds.isEmpty() && random.nextBoolean()) {
            return operatorRefundSettlement(user, cardRefunds.get(random.nextInt(cardRefunds.size())));
        }
        if (dice >= 100 - OPERATOR_SETTLEMENT_PERCENT && !cardPayments.isEmpty()) {
            return operatorSettlement(user, cardPayments.get(random.nextInt(cardPayments.size())));
        }
        if (dice < 85) {
            long amount = 1 + random.nextLong(Math.max(1, order.amount / 3));
            String refundNo = "r-" + UUID.randomUUID();
            String type = order.id % CARD_ORDER_EVERY == 0 ? "card-refund" : "refund";
            Operation refund = new Operation(this, type, user, newKey(), "/orders/" + order.id + "/refunds", opsToken,
                    "{\"refundNo\":\"" + refundNo + "\",\"amount\":" + amount + "}", amount, order.id + "/" + refundNo);
            refund.viaClient(client -> client.refund(order.id, refundNo, amount, refund.key));
            return byMessage ? refund.asCommand("{\"type\":\"refund\",\"orderId\":" + order.id + ",\"refundNo\":\"" + refundNo
                    + "\",\"amount\":" + amount + "}") : refund;
        }
        return deposit(user, 100 + random.nextInt(9900));
    }

    /**
     * Settles a card payment as not charged or, now and then, as charged by a charge the processor
     * never made: payonce must refuse both (the payment is not overdue, or settled already, or the
     * processor disagrees). {@code user} only places it in the history.
     */
    Operation operatorSettlement(User user, long payment) {
        String body = ThreadLocalRandom.current().nextInt(5) == 0
                ? "{\"outcome\":\"charged\",\"chargeId\":\"ch_chaos_" + payment + "\",\"reason\":\"chaos: the processor shows a charge\"}"
                : "{\"outcome\":\"not_charged\",\"reason\":\"chaos: the processor shows nothing\"}";
        return new Operation(this, "ops-settle", user, newKey(), "/payments/" + payment + "/settlement", opsToken, body, 0,
                Long.toString(payment));
    }

    /**
     * Settles a refund to the card as not refunded or, now and then, as refunded by a refund the
     * processor never made: payonce must refuse both, as it refuses the payments' settlements.
     */
    Operation operatorRefundSettlement(User user, long refund) {
        String body = ThreadLocalRandom.current().nextInt(5) == 0
                ? "{\"outcome\":\"refunded\",\"processorRefundId\":\"re_chaos_" + refund + "\",\"reason\":\"chaos: the processor shows a refund\"}"
                : "{\"outcome\":\"not_refunded\",\"reason\":\"chaos: the processor shows nothing\"}";
        return new Operation(this, "ops-settle-refund", user, newKey(), "/refunds/" + refund + "/settlement", opsToken, body, 0,
                Long.toString(refund));
    }

    /** The deposit's external reference is its key: one settlement, one key, kept across retries. */
    Operation deposit(User user, long amount) {
        String key = newKey();
        return new Operation(this, "deposit", user, key, "/accounts/" + user.id + "/deposits", opsToken,
                "{\"amount\":" + amount + ",\"currency\":\"EUR\",\"reference\":\"" + key + "\"}", amount, user.id)
                .viaClient(client -> client.deposit(user.id, amount, "EUR", key, key));
    }

    static String newKey() {
        return "chaos-" + UUID.randomUUID();
    }

    record Order(long id, long amount) {
    }

    static final class User {
        final String id;
        final String token;
        final List<Order> orders = new CopyOnWriteArrayList<>();

        User(String id, String token) {
            this.id = id;
            this.token = token;
        }
    }

    /**
     * One logical operation: the same request, under the same key, until a definite answer arrives
     * or the run gives up on it (then its outcome is unknown and the checker resolves it).
     */
    static final class Operation {
        private static final Pattern ID = Pattern.compile("\"(?:id|paymentId|refundId)\":(\\d+)");
        private static final Pattern CODE = Pattern.compile("\"code\":\"([A-Z_]+)\"");
        private static final Duration DOUBLE_CLICK_TIMEOUT = Duration.ofSeconds(2);

        final Workload workload;
        final long id;
        final String type;
        final User user;
        final String key;
        final String path;
        final String bearer;
        final String body;
        final long amount;
        final String subject;
        /** The command's body when the operation goes through the broker; null over HTTP. */
        String command;
        /** The client library's call of the operation, where it has one: over HTTP, the client sends and retries it. */
        Function<PayonceClient, io.payonce.client.Outcome<?>> clientCall;
        int attempts;
        /** The last definite answer of its attempts: what settles it when the client has the outcome. */
        volatile Attempt settledBy;

        Operation(Workload workload, String type, User user, String key, String path, String bearer, String body,
                  long amount, String subject) {
            this.workload = workload;
            this.id = workload.operationIds.incrementAndGet();
            this.type = type;
            this.user = user;
            this.key = key;
            this.path = path;
            this.bearer = bearer;
            this.body = body;
            this.amount = amount;
            this.subject = subject;
        }

        Operation asCommand(String body) {
            this.command = body;
            return this;
        }

        Operation viaClient(Function<PayonceClient, io.payonce.client.Outcome<?>> call) {
            this.clientCall = call;
            return this;
        }

        /**
         * Sends until a definite answer or until the run gives up, and writes the outcome line whatever
         * happens: an exception in the workload records the operation as unknown, naming the exception,
         * so that the checker still resolves it from the database, and goes on to fail the run.
         */
        void send(LongSupplier giveUpAt, boolean mayAbandon) throws InterruptedException {
            Outcome outcome = Outcome.UNKNOWN;
            try {
                outcome = untilDefinite(giveUpAt, mayAbandon);
                if (outcome.ok() && "create".equals(type)) {
                    user.orders.add(new Order(Long.parseLong(outcome.answer.detail), amount));
                }
            } catch (RuntimeException | InterruptedException e) {
                outcome = Outcome.exception(e);
                throw e;
            } finally {
                workload.history.operation(this, outcome);
            }
        }

        private Outcome untilDefinite(LongSupplier giveUpAt, boolean mayAbandon) throws InterruptedException {
            if (clientCall != null && command == null) {
                return workload.client.send(this, giveUpAt, mayAbandon);
            }
            Random random = ThreadLocalRandom.current();
            int target = command != null ? BROKER : random.nextInt(10) < 6 ? 0 : 1 + random.nextInt(2);
            while (System.currentTimeMillis() < giveUpAt.getAsLong()) {
                // A command is sent again only when its reply is late: a copy sent while the first is in
                // flight is put back on the queue for a second, which would only slow the consumers down.
                // An operator's settlement is refused without being stored (its key stays free for when the
                // payment can be settled), so two clicks at once may be told two refusals: it is sent once.
                boolean doubleClick = command == null && !type.startsWith("ops-settle") && attempts == 0 && random.nextInt(100) < 15;
                Attempt attempt = doubleClick ? doubleClick(target) : attempt(target, target == BROKER ? commandTimeout(random) : timeout(random));
                if (attempt.definite()) {
                    return new Outcome(attempt.status / 100 == 2 ? "ok" : "fail", attempt);
                }
                if (mayAbandon && random.nextInt(100) < ABANDON_PERCENT) {
                    break;
                }
                target = otherThan(target, random);
                Thread.sleep(20 + random.nextInt(200));
            }
            return Outcome.UNKNOWN;
        }

        /**
         * The same request twice, a few milliseconds apart. Both answers go to the history, where the
         * checker requires the definite ones to be identical; the first definite one settles the operation.
         */
        private Attempt doubleClick(int target) throws InterruptedException {
            CompletableFuture<Attempt> first = click(target);
            Thread.sleep(2 + ThreadLocalRandom.current().nextInt(8));
            CompletableFuture<Attempt> second = click(target);
            // Both clicks end (and write their lines) before the outcome line, even if one of them threw.
            CompletableFuture.allOf(first, second).exceptionally(e -> null).join();
            Attempt firstAnswer = first.join();
            return firstAnswer.definite() ? firstAnswer : second.join();
        }

        private CompletableFuture<Attempt> click(int target) {
            return CompletableFuture.supplyAsync(() -> {
                try {
                    return attempt(target, DOUBLE_CLICK_TIMEOUT);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CompletionException(e);
                }
            });
        }

        /** One request and its answer, written to the history whatever happens to it. */
        private Attempt attempt(int target, Duration timeout) throws InterruptedException {
            long start = System.currentTimeMillis();
            Attempt attempt;
            try {
                if (target == BROKER) {
                    CommandChannel.Reply reply = workload.commands.send(key, key + "/" + (attempts + 1), command, timeout);
                    attempt = classify(reply.status(), reply.body(), reply.repeat());
                } else {
                    HttpResponse<String> response = workload.http.send(request(target, timeout), HttpResponse.BodyHandlers.ofString());
                    attempt = classify(response.statusCode(), response.body(), response.headers().firstValue(Answer.REPLAYED_HEADER).isPresent());
                }
            } catch (IOException | TimeoutException e) {
                attempt = Attempt.noAnswer(e);
            } catch (RuntimeException | InterruptedException e) {
                // Not a fault of the service: the attempt keeps its line, the exception fails the operation.
                record(target, start, System.currentTimeMillis(), Attempt.noAnswer(e));
                throw e;
            }
            record(target, start, System.currentTimeMillis(), attempt);
            return attempt;
        }

        /** Writes one attempt to the history under the operation's next number, and notes what it tells. */
        void record(int target, long start, long end, Attempt attempt) {
            int number;
            synchronized (this) {
                number = ++attempts;
            }
            workload.history.attempt(this, number, target, start, end, attempt);
            if (attempt.definite()) {
                settledBy = attempt;
            }
            if (type.equals("card-pay") && attempt.status / 100 == 2 && !attempt.detail.isEmpty()) {
                workload.cardPayments.add(Long.parseLong(attempt.detail));
            }
            if (type.equals("card-refund") && attempt.status / 100 == 2 && !attempt.detail.isEmpty()) {
                workload.cardRefunds.add(Long.parseLong(attempt.detail));
            }
        }

        private HttpRequest request(int target, Duration timeout) {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(workload.targets[target] + path))
                    .timeout(timeout)
                    .header("Authorization", "Bearer " + bearer)
                    .header("Idempotency-Key", key);
            if (body == null) {
                return request.POST(HttpRequest.BodyPublishers.noBody()).build();
            }
            return request.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
        }

        static Attempt classify(int status, String body, boolean repeat) {
            String code = match(CODE, body);
            if (status / 100 == 2) {
                return new Attempt(status, match(ID, body), body, Answers.definite(status, ""), repeat);
            }
            return new Attempt(status, code, body, Answers.definite(status, code), repeat);
        }

        private static String match(Pattern pattern, String text) {
            Matcher matcher = pattern.matcher(text);
            return matcher.find() ? matcher.group(1) : "";
        }

        /** Clients give up anywhere between a few milliseconds and two seconds. */
        static Duration timeout(Random random) {
            return logUniform(random, 5, 2000);
        }

        /** A sender of commands waits for a reply between 200 ms and three seconds. */
        private static Duration commandTimeout(Random random) {
            return logUniform(random, 200, 3000);
        }

        private static Duration logUniform(Random random, long fromMillis, long toMillis) {
            return Duration.ofMillis((long) Math.exp(Math.log(fromMillis) + random.nextDouble() * (Math.log(toMillis) - Math.log(fromMillis))));
        }

        /** The next target of a retry: another of the HTTP ones; a command is sent to the broker again. */
        private static int otherThan(int target, Random random) {
            if (target == BROKER) {
                return BROKER;
            }
            return target == 0 ? 1 + random.nextInt(2) : (target == 1 ? 2 : 1);
        }
    }

    /**
     * One answer: its status (0 when none came), the id it names or its error code (or the exception
     * that stood for it), the body as received, whether it settles the operation, and whether it said
     * that it repeats an earlier answer (Idempotent-Replayed).
     */
    record Attempt(int status, String detail, String body, boolean definite, boolean repeat) {
        static Attempt noAnswer(Exception e) {
            return new Attempt(0, e.getClass().getSimpleName(), "", false, false);
        }
    }

    /** How an operation ended: ok or fail with the answer that settled it, or unknown. */
    record Outcome(String name, Attempt answer) {
        /** The prefix of the detail by which the checker tells an operation ended by an exception of the workload. */
        static final String EXCEPTION = "exception:";
        static final Outcome UNKNOWN = new Outcome("unknown", new Attempt(0, "", "", false, false));

        static Outcome exception(Throwable e) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            return new Outcome("unknown", new Attempt(0, EXCEPTION + cause.getClass().getSimpleName(), "", false, false));
        }

        boolean ok() {
            return name.equals("ok");
        }
    }

    /**
     * One line per attempt and one per operation, tab-separated, in the order they end:
     * A  op type user key subject amount attempt-number target start-ms end-ms status|TIMEOUT detail body repeat
     * O  op type user key subject amount attempts ok|fail|unknown status detail body repeat
     * L  key status detail body repeat       (a command's reply that came after its copy stopped waiting)
     * (TIMEOUT: no answer came; detail then names the exception. repeat: "repeat" when the answer carried
     * Idempotent-Replayed, else empty.)
     */
    static final class History implements AutoCloseable {
        private static final Pattern LINE_BREAKS_AND_TABS = Pattern.compile("[\\t\\r\\n]+");
        private final BufferedWriter out;

        History(Path file) throws IOException {
            this.out = Files.newBufferedWriter(file);
        }

        synchronized void attempt(Operation op, int number, int target, long start, long end, Attempt attempt) {
            write(String.join("\t", "A", Long.toString(op.id), op.type, op.user.id, op.key, op.subject,
                    Long.toString(op.amount), Integer.toString(number), Integer.toString(target), Long.toString(start),
                    Long.toString(end), attempt.status == 0 ? "TIMEOUT" : Integer.toString(attempt.status), attempt.detail,
                    oneField(attempt.body), repeatMark(attempt)));
        }

        synchronized void operation(Operation op, Outcome outcome) {
            write(String.join("\t", "O", Long.toString(op.id), op.type, op.user.id, op.key, op.subject,
                    Long.toString(op.amount), Integer.toString(op.attempts), outcome.name,
                    Integer.toString(outcome.answer.status), outcome.answer.detail, oneField(outcome.answer.body),
                    repeatMark(outcome.answer)));
        }

        synchronized void lateReply(CommandChannel.LateReply late) {
            Attempt answer = Operation.classify(late.reply().status(), late.reply().body(), late.reply().repeat());
            write(String.join("\t", "L", late.key(), Integer.toString(answer.status), answer.detail, oneField(answer.body),
                    repeatMark(answer)));
        }

        private static String repeatMark(Attempt attempt) {
            return attempt.repeat ? "repeat" : "";
        }

        /** A body in one tab-separated field: JSON bodies have no raw tabs or line breaks, the gateway's HTML pages do. */
        private static String oneField(String body) {
            return LINE_BREAKS_AND_TABS.matcher(body).replaceAll(" ");
        }

        private void write(String line) {
            try {
                out.write(line);
                out.newLine();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public synchronized void close() throws IOException {
            out.close();
        }
    }
}
