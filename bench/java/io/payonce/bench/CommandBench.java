package io.payonce.bench;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Address;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/*
 * The broker's side of bench/run.sh: pay commands sent to payonce's command queue as an order system
 * sends them (signed by its broker login, keyed by message-id, persistent, a reply queue of its own),
 * in a closed loop that keeps a fixed number in flight, as wrk keeps its connections busy: each reply
 * sends the next command. The orders are seeded beforehand by a run of their own, so that neither the
 * seeding nor its database work is counted with the commands. It prints one result line in PayBench's
 * format; a command counts once its reply has come, and its latency runs from its publish.
 *
 * The broker is PAYONCE_RABBITMQ_ADDRESSES's nodes if set (a cluster's), else PAYONCE_RABBITMQ_HOST and _PORT.
 *
 *   prepare  <database> <commands> <orders-out>               fresh orders, a user and an order id per line
 *   commands <orders> <commands-exchange> <in-flight> <seconds>
 *   confirms <classic|quorum> <in-flight> <seconds>            the broker alone: persistent messages of a
 *            command's size to a new durable queue of that type, each publisher (one per in flight, a
 *            channel each) waiting for the confirm of each before the next; latency from publish to confirm
 */
public final class CommandBench {

    private static final String SENDER = "guest";
    private static final String STATUS_HEADER = "x-payonce-status";
    /** The replies of commands still in flight when the time is up, waited for so that none is counted as lost. */
    private static final long DRAIN_SECONDS = 30;

    private final Channel publisher;
    private final String exchange;
    private final String replyQueue;
    private final List<PayBench.Order> orders;
    private final long[] sentAt;
    private final long[] latencies;
    /** Commands published so far; guarded by this, as the publishing channel is. */
    private int published;
    private final AtomicInteger answered = new AtomicInteger();
    private final Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
    private boolean sending = true;

    private CommandBench(Channel publisher, String exchange, String replyQueue, List<PayBench.Order> orders) {
        this.publisher = publisher;
        this.exchange = exchange;
        this.replyQueue = replyQueue;
        this.orders = orders;
        this.sentAt = new long[orders.size()];
        this.latencies = new long[orders.size()];
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "prepare" -> prepare(args[1], Integer.parseInt(args[2]), Path.of(args[3]));
            case "commands" -> send(Path.of(args[1]), args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "confirms" -> confirms(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    static void prepare(String database, int commands, Path ordersOut) throws Exception {
        Files.write(ordersOut, PayBench.seedOrders(database, commands).stream().map(order -> order.user() + "\t" + order.id()).toList());
    }

    static void send(Path ordersIn, String exchange, int inFlight, int seconds) throws Exception {
        List<PayBench.Order> orders = Files.readAllLines(ordersIn).stream()
                .map(line -> line.split("\t"))
                .map(fields -> new PayBench.Order(Long.parseLong(fields[1]), fields[0]))
                .toList();
        try (Connection connection = connect()) {
            Channel replies = connection.createChannel();
            String replyQueue = replies.queueDeclare(SENDER + ".replies.bench-" + UUID.randomUUID(), false, true, true, null).getQueue();
            CommandBench bench = new CommandBench(connection.createChannel(), exchange, replyQueue, orders);
            replies.basicConsume(replyQueue, true, (tag, reply) -> bench.answered(reply), tag -> { });
            bench.run(inFlight, seconds);
        }
    }

    static void confirms(String queueType, int inFlight, int seconds) throws Exception {
        byte[] body = ("{\"type\":\"pay\",\"userId\":\"" + UUID.randomUUID() + "\",\"orderId\":1000000}").getBytes(StandardCharsets.UTF_8);
        AMQP.BasicProperties persistent = new AMQP.BasicProperties.Builder().deliveryMode(2).build();
        try (Connection connection = connect()) {
            Channel setup = connection.createChannel();
            String queue = setup.queueDeclare("payonce.bench.confirms-" + UUID.randomUUID(), true, false, false,
                    Map.of("x-queue-type", queueType)).getQueue();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            List<Long> latencies = new CopyOnWriteArrayList<>();
            List<Thread> publishers = new ArrayList<>();
            AtomicReference<Exception> failure = new AtomicReference<>();
            long started = System.nanoTime();
            for (int i = 0; i < inFlight; i++) {
                Channel channel = connection.createChannel();
                channel.confirmSelect();
                Thread publisher = new Thread(() -> {
                    try {
                        while (System.nanoTime() < until) {
                            long sent = System.nanoTime();
                            channel.basicPublish("", queue, persistent, body);
                            channel.waitForConfirmsOrDie(10_000);
                            latencies.add(System.nanoTime() - sent);
                        }
                    } catch (Exception e) {
                        failure.compareAndSet(null, e);
                    }
                });
                publisher.start();
                publishers.add(publisher);
            }
            for (Thread publisher : publishers) {
                publisher.join();
            }
            long elapsed = System.nanoTime() - started;
            setup.queueDelete(queue);
            if (failure.get() != null) {
                throw new IllegalStateException("a publisher failed", failure.get());
            }
            PayBench.report("confirm", inFlight, latencies.stream().mapToLong(Long::longValue).toArray(), elapsed, Map.of());
        }
    }

    private static Connection connect() throws IOException, TimeoutException {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(System.getenv().getOrDefault("PAYONCE_RABBITMQ_HOST", "127.0.0.1"));
        factory.setPort(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_RABBITMQ_PORT", "5672")));
        String cluster = System.getenv("PAYONCE_RABBITMQ_ADDRESSES");
        return cluster == null || cluster.isBlank() ? factory.newConnection("payonce-bench")
                : factory.newConnection(List.of(Address.parseAddresses(cluster)), "payonce-bench");
    }

    private void run(int inFlight, int seconds) throws Exception {
        long started = System.nanoTime();
        for (int i = 0; i < inFlight; i++) {
            sendNext();
        }
        TimeUnit.SECONDS.sleep(seconds);
        int sent = stopSending();
        long stopped = System.nanoTime();
        long drainedBy = stopped + TimeUnit.SECONDS.toNanos(DRAIN_SECONDS);
        while (answered.get() < sent && System.nanoTime() < drainedBy) {
            TimeUnit.MILLISECONDS.sleep(10);
        }
        if (answered.get() < sent) {
            throw new IllegalStateException((sent - answered.get()) + " commands got no reply within " + DRAIN_SECONDS + " s");
        }
        // Throughput over the time commands were sent; the drain's last replies are counted, not timed.
        PayBench.report("command", inFlight, Arrays.copyOf(latencies, sent), stopped - started, statuses);
    }

    /** Ends the sending; how many commands were published. */
    private synchronized int stopSending() {
        sending = false;
        return published;
    }

    /** Publishes the next order's pay command, while the time lasts and orders remain. */
    private synchronized void sendNext() throws IOException {
        if (!sending || published == orders.size()) {
            return;
        }
        int i = published++;
        PayBench.Order order = orders.get(i);
        String key = "bench-" + UUID.randomUUID();
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId(key).userId(SENDER).replyTo(replyQueue)
                .correlationId(Integer.toString(i)).contentType("application/json").deliveryMode(2).build();
        sentAt[i] = System.nanoTime();
        publisher.basicPublish(exchange, "pay", properties,
                ("{\"type\":\"pay\",\"userId\":\"" + order.user() + "\",\"orderId\":" + order.id() + "}").getBytes(StandardCharsets.UTF_8));
    }

    private void answered(Delivery reply) throws IOException {
        int i = Integer.parseInt(reply.getProperties().getCorrelationId());
        latencies[i] = System.nanoTime() - sentAt[i];
        int status = ((Number) reply.getProperties().getHeaders().get(STATUS_HEADER)).intValue();
        statuses.computeIfAbsent(status, s -> new AtomicInteger()).incrementAndGet();
        answered.incrementAndGet();
        sendNext();
    }
}
