package io.payonce.bench;

import io.payonce.support.Database;
import io.payonce.support.Tokens;

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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/*
 * The load program of bench/run.sh. It drives the pay transaction's own SQL straight at MariaDB
 * (the ceiling) and POST /orders/{id}/pay at payonce, on the same database, and prints one result
 * line per measurement. Orders and accounts are seeded directly, so that only the pay is measured.
 *
 * It runs on the test classpath: it signs tokens with the test key and reaches the database named by
 * PAYONCE_DB_* (support.Tokens, support.Database), as the tests do.
 *
 *   seed      <database> <users>                              accounts with room for every benchmark payment
 *   seed-orders <database> <count>                           fresh orders for bench/ceiling.lua (sysbench); prints the first id and the step
 *   pay       <database> <url> <concurrency> <payments>
 *   prepare   <database> <payments> <pays-out>                fresh orders and keys as lines for bench/pay.lua (wrk)
 *   storm     <database> <url> <copies>                       that many identical pays at once
 *   rate      <database> <url> <per-second> <seconds>         open loop: latency from the intended send time
 *   outbox-lag <database> <seconds>                           how long the oldest unsent event has waited, sampled
 */

public final class PayBench {

    static final int USERS = 2000;
    static final long AMOUNT = 100;

    record Order(long id, String user) {
    }

    record Pay(String user, long order, String key) {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "seed" -> seedAccounts(args[1]);
            case "seed-orders" -> System.out.println(seedEvenlySpacedOrders(args[1], Integer.parseInt(args[2])));
            case "pay" -> pay(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "prepare" -> prepare(args[1], Integer.parseInt(args[2]), Path.of(args[3]));
            case "storm" -> storm(args[1], args[2], Integer.parseInt(args[3]));
            case "rate" -> rate(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "outbox-lag" -> outboxLag(args[1], Integer.parseInt(args[2]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static Connection connect(String database) throws SQLException {
        return Database.named(database).connect("useServerPrepStmts=true&cachePrepStmts=true&rewriteBatchedStatements=true");
    }

    static void seedAccounts(String database) throws SQLException {
        try (Connection db = connect(database); PreparedStatement insert = db.prepareStatement(
                "INSERT INTO account (user_id, balance, currency) VALUES (?, 1000000000000, 'EUR')")) {
            for (int i = 0; i < USERS; i++) {
                insert.setString(1, "bench-" + i);
                insert.addBatch();
            }
            insert.executeBatch();
        }
    }

    /** Fresh UNPAID orders spread over the users, so that payments do not queue on one account row. */
    static List<Order> seedOrders(String database, int count) throws SQLException {
        String tag = UUID.randomUUID().toString().substring(0, 8);
        try (Connection db = connect(database)) {
            try (PreparedStatement insert = db.prepareStatement(
                    "INSERT INTO orders (order_sn, user_id, amount, currency, status) VALUES (?, ?, ?, 'EUR', 'UNPAID')")) {
                for (int i = 0; i < count; i++) {
                    insert.setString(1, "bench-" + tag + "-" + i);
                    insert.setString(2, "bench-" + (i % USERS));
                    insert.setLong(3, AMOUNT);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            List<Order> orders = new ArrayList<>(count);
            try (PreparedStatement select = db.prepareStatement("SELECT id, user_id FROM orders WHERE order_sn LIKE ? ORDER BY id")) {
                select.setString(1, "bench-" + tag + "-%");
                try (ResultSet rows = select.executeQuery()) {
                    while (rows.next()) {
                        orders.add(new Order(rows.getLong(1), rows.getString(2)));
                    }
                }
            }
            return orders;
        }
    }

    /**
     * Fresh orders whose ids are evenly spaced, the i-th of them owned by bench-(i mod USERS): what
     * bench/ceiling.lua pays without reading them first. Returns the first id and the space between two
     * (one on a single MariaDB; on a Galera node, the cluster's auto-increment step).
     */
    static String seedEvenlySpacedOrders(String database, int count) throws SQLException {
        List<Order> orders = seedOrders(database, count);
        long first = orders.get(0).id();
        long step = orders.size() > 1 ? orders.get(1).id() - first : 1;
        for (int i = 0; i < orders.size(); i++) {
            if (orders.get(i).id() != first + i * step || !orders.get(i).user().equals("bench-" + (i % USERS))) {
                throw new IllegalStateException("seeded order " + i + " is " + orders.get(i) + ", not id " + (first + i * step));
            }
        }
        return first + " " + step;
    }

    static void pay(String database, String url, int concurrency, int payments) throws Exception {
        List<Order> orders = seedOrders(database, payments);
        List<Pay> pays = new ArrayList<>(payments);
        for (Order order : orders) {
            pays.add(new Pay(order.user, order.id, UUID.randomUUID().toString()));
        }
        send("pay", url, concurrency, pays);
    }

    /** Path, bearer token and key per line: the same pays as {@code pay} sends, for a lighter load generator. */
    static void prepare(String database, int payments, Path paysOut) throws Exception {
        Map<String, String> bearers = new java.util.HashMap<>();
        List<String> lines = new ArrayList<>(payments);
        for (Order order : seedOrders(database, payments)) {
            String bearer = bearers.computeIfAbsent(order.user, user -> Tokens.lastingAnHour(user, "user"));
            lines.add("/orders/" + order.id + "/pay\t" + bearer + "\t" + UUID.randomUUID());
        }
        Files.write(paysOut, lines);
    }

    /** Closed loop: each worker sends its next pay when the previous one answered. */
    static void send(String mode, String url, int concurrency, List<Pay> pays) throws Exception {
        Client client = new Client(url);
        AtomicInteger next = new AtomicInteger();
        long[] latencies = new long[pays.size()];
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        long started = System.nanoTime();
        runWorkers(concurrency, () -> {
            for (int i = next.getAndIncrement(); i < pays.size(); i = next.getAndIncrement()) {
                long start = System.nanoTime();
                int status = client.pay(pays.get(i));
                latencies[i] = System.nanoTime() - start;
                statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
            }
            return null;
        });
        report(mode, concurrency, latencies, System.nanoTime() - started, statuses);
    }

    /** Identical pays of one order under one key, all at once; counts what the database executed for them. */
    static void storm(String database, String url, int copies) throws Exception {
        Client client = new Client(url);
        Order single = seedOrders(database, 2).get(0);
        Order stormed = seedOrders(database, 1).get(0);
        long[] before = statementCounts(database);
        client.pay(new Pay(single.user, single.id, UUID.randomUUID().toString()));
        long[] afterOne = statementCounts(database);
        Pay pay = new Pay(stormed.user, stormed.id, UUID.randomUUID().toString());
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        long[] latencies = new long[copies];
        ExecutorService threads = Executors.newFixedThreadPool(copies);
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        List<java.util.concurrent.Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < copies; i++) {
            int index = i;
            futures.add(threads.submit(() -> {
                gate.await();
                long start = System.nanoTime();
                int status = client.pay(pay);
                latencies[index] = System.nanoTime() - start;
                statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                return null;
            }));
        }
        long started = System.nanoTime();
        gate.countDown();
        for (var future : futures) {
            future.get();
        }
        long wall = System.nanoTime() - started;
        threads.shutdown();
        long[] afterStorm = statementCounts(database);
        long oneStatements = afterOne[0] - before[0] - 1;
        long stormStatements = afterStorm[0] - afterOne[0] - 1;
        report("storm", copies, latencies, wall, statuses, Map.of("statements_one_pay", oneStatements,
                "statements_storm", stormStatements, "debits", count(database, "SELECT COUNT(*) FROM pay_record WHERE order_id = " + stormed.id)));
    }

    /** Open loop at a fixed rate: latency counts from when a request was due, not from when it could be sent. */
    static void rate(String database, String url, int perSecond, int seconds) throws Exception {
        Client client = new Client(url);
        int total = perSecond * seconds;
        List<Order> orders = seedOrders(database, total);
        long[] latencies = new long[total];
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        ExecutorService senders = Executors.newFixedThreadPool(256);
        long interval = 1_000_000_000L / perSecond;
        long started = System.nanoTime() + 50_000_000L;
        for (int i = 0; i < total; i++) {
            int index = i;
            long due = started + i * interval;
            senders.submit(() -> {
                LockSupport.parkNanos(due - System.nanoTime());
                Order order = orders.get(index);
                int status = client.pay(new Pay(order.user, order.id, UUID.randomUUID().toString()));
                latencies[index] = System.nanoTime() - due;
                statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
                return null;
            });
        }
        senders.shutdown();
        senders.awaitTermination(seconds + 120, TimeUnit.SECONDS);
        report("rate-" + perSecond, perSecond, latencies, System.nanoTime() - started, statuses);
    }

    /**
     * Every 100 ms for {@code seconds}, how long the oldest unsent event (parked ones aside: they wait
     * for an operator) has waited, by the database's clock: one line, the samples' count, median, p99
     * and maximum in milliseconds, and the unsent events left at the end.
     */
    static void outboxLag(String database, int seconds) throws Exception {
        long[] samples = new long[seconds * 10];
        try (Connection db = connect(database); PreparedStatement oldest = db.prepareStatement(
                "SELECT COALESCE(MAX(TIMESTAMPDIFF(MICROSECOND, created_at, NOW(6))), 0) FROM "
                        + "(SELECT created_at FROM outbox_event WHERE sent_at IS NULL AND parked_at IS NULL ORDER BY id LIMIT 1) unsent")) {
            for (int i = 0; i < samples.length; i++) {
                try (ResultSet row = oldest.executeQuery()) {
                    row.next();
                    samples[i] = row.getLong(1) * 1000;
                }
                TimeUnit.MILLISECONDS.sleep(100);
            }
        }
        long[] sorted = samples.clone();
        Arrays.sort(sorted);
        System.out.printf("outbox-lag\t%d\t%.0f\t%.0f\t%.0f\t%d%n", samples.length, ms(sorted, 0.50), ms(sorted, 0.99),
                sorted[sorted.length - 1] / 1e6, count(database, "SELECT COUNT(*) FROM outbox_event WHERE sent_at IS NULL AND parked_at IS NULL"));
    }

    /** Questions (every statement the server ran) and commits, server-wide. */
    static long[] statementCounts(String database) throws SQLException {
        try (Connection db = connect(database); ResultSet rows = db.createStatement().executeQuery(
                "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_commit')")) {
            long[] counts = new long[2];
            while (rows.next()) {
                counts[rows.getString(1).equals("Questions") ? 0 : 1] = rows.getLong(2);
            }
            return counts;
        }
    }

    static long count(String database, String sql) throws SQLException {
        try (Connection db = connect(database); ResultSet rows = db.createStatement().executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    interface Work {
        Void run() throws Exception;
    }

    static void runWorkers(int concurrency, Work work) throws Exception {
        ExecutorService workers = Executors.newFixedThreadPool(concurrency);
        List<java.util.concurrent.Future<Void>> futures = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            futures.add(workers.submit(work::run));
        }
        for (var future : futures) {
            future.get();
        }
        workers.shutdown();
    }

    static void report(String mode, int concurrency, long[] latencies, long wallNanos, Map<Integer, AtomicInteger> statuses) {
        report(mode, concurrency, latencies, wallNanos, statuses, Map.of());
    }

    /** One tab-separated line: mode, concurrency, count, seconds, per second, p50, p99, p99.9 (ms), statuses, extras. */
    static void report(String mode, int concurrency, long[] latencies, long wallNanos, Map<Integer, AtomicInteger> statuses,
                       Map<String, Long> extras) {
        long[] sorted = latencies.clone();
        Arrays.sort(sorted);
        double seconds = wallNanos / 1e9;
        Map<Integer, Integer> byStatus = new TreeMap<>();
        statuses.forEach((status, n) -> byStatus.put(status, n.get()));
        System.out.printf("%s\t%d\t%d\t%.2f\t%.0f\t%.1f\t%.1f\t%.1f\t%s\t%s%n", mode, concurrency, latencies.length, seconds,
                latencies.length / seconds, ms(sorted, 0.50), ms(sorted, 0.99), ms(sorted, 0.999), byStatus, new TreeMap<>(extras));
    }

    static double ms(long[] sorted, double quantile) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)] / 1e6;
    }

    /** One HTTP/1.1 client shared by all workers; a token per benchmark user, minted once. */
    static final class Client {
        final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        final String url;
        final Map<String, String> bearers = new ConcurrentHashMap<>();

        Client(String url) {
            this.url = url;
        }

        int pay(Pay pay) throws IOException, InterruptedException {
            String bearer = bearers.computeIfAbsent(pay.user, user -> Tokens.lastingAnHour(user, "user"));
            HttpRequest request = HttpRequest.newBuilder(URI.create(url + "/orders/" + pay.order + "/pay"))
                    .timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + bearer)
                    .header("Idempotency-Key", pay.key)
                    .POST(HttpRequest.BodyPublishers.noBody())
                    .build();
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        }
    }
}
