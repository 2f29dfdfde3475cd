package io.payonce.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Address;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.support.Broker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A command sender as an order system runs one against a RabbitMQ cluster: each command is published
 * with a publisher confirm and published again under the same message id, on a new connection to the
 * next node if its own is gone, until a definite reply (not a 202) comes back. A reply lost with the
 * reply queue of a dead node is asked for again the same way: payonce answers a repeat with the stored
 * answer. One thread owns the channel; the replies arrive on the client's.
 */
final class RepublishingSender implements AutoCloseable {

    private static final Duration CONFIRM_WITHIN = Duration.ofSeconds(5);
    private static final Duration REPUBLISH_AFTER = Duration.ofSeconds(5);

    /** A command: its key (the message id), routing key and body. */
    record Command(String key, String routingKey, String body) {
    }

    /** The first definite reply to a command, and when it came. */
    record Reply(int status, String body, long atNanos) {
    }

    /** A reply as the client handed it over, timed then: the sender's thread may be waiting for a confirm. */
    private record Arrival(Delivery delivery, long atNanos) {
    }

    private final ConnectionFactory factory = new ConnectionFactory();
    private final List<Address> addresses;
    private final String exchange;
    private final BlockingQueue<Command> toSend = new LinkedBlockingQueue<>();
    private final Map<String, Command> unanswered = new ConcurrentHashMap<>();
    private final Map<String, Long> lastSentAt = new HashMap<>();
    private final Set<String> confirmed = ConcurrentHashMap.newKeySet();
    private final Map<String, Reply> replies = new ConcurrentHashMap<>();
    private final List<Long> replyTimes = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<Arrival> arrived = new ConcurrentLinkedQueue<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger publishes = new AtomicInteger();
    private final AtomicInteger nacked = new AtomicInteger();
    private final Thread thread;
    private volatile boolean closed;
    private volatile Throwable lastFailure;
    private Connection connection;
    private Channel channel;
    private String replyQueue;

    private RepublishingSender(String addresses, String exchange) {
        this.addresses = List.of(Address.parseAddresses(addresses));
        this.exchange = exchange;
        factory.setUsername(Broker.USER);
        factory.setPassword(Broker.USER);
        factory.setConnectionTimeout(2000);
        factory.setHandshakeTimeout(2000);
        factory.setChannelRpcTimeout(5000);
        // A node that stops answering is left within a few seconds.
        factory.setRequestedHeartbeat(2);
        factory.setAutomaticRecoveryEnabled(false);
        this.thread = new Thread(this::run, "republishing-sender");
    }

    /** A sender to {@code exchange} on the nodes at {@code addresses} (host:port,host:port), started. */
    static RepublishingSender start(String addresses, String exchange) {
        RepublishingSender sender = new RepublishingSender(addresses, exchange);
        sender.thread.start();
        return sender;
    }

    void send(Command command) {
        toSend.add(command);
    }

    /** Commands sent and not yet answered definitely, those waiting to go out included. */
    int outstanding() {
        return unanswered.size() + toSend.size();
    }

    Set<String> confirmed() {
        return Set.copyOf(confirmed);
    }

    Map<String, Reply> replies() {
        return Map.copyOf(replies);
    }

    /** Connections the sender opened: one, and one more each time its node was lost. */
    int connections() {
        return connections.get();
    }

    /** Publishes made, first sends and republishes. */
    int publishes() {
        return publishes.get();
    }

    /** Where it stands, for a test's failure message. */
    @Override
    public String toString() {
        return "sender: " + unanswered.size() + " unanswered, " + toSend.size() + " to send, " + replies.size() + " replied, "
                + connections.get() + " connections, " + publishes.get() + " publishes (" + nacked.get() + " nacked), thread " + thread.getState()
                + (lastFailure == null ? "" : ", last failure: " + lastFailure) + ", at " + Arrays.toString(thread.getStackTrace());
    }

    /** The longest time with no reply from {@code fromNanos} on, through the last reply received. */
    Duration longestSilenceSince(long fromNanos) {
        long longest = 0;
        long previous = fromNanos;
        for (long at : replyTimes.stream().filter(at -> at >= fromNanos).sorted().toList()) {
            longest = Math.max(longest, at - previous);
            previous = at;
        }
        return Duration.ofNanos(longest);
    }

    private void run() {
        while (!closed) {
            try {
                connectIfNeeded();
                takeReplies();
                Command next = toSend.poll(20, TimeUnit.MILLISECONDS);
                if (next != null) {
                    unanswered.put(next.key(), next);
                    publish(next);
                }
                republishOverdue();
            } catch (InterruptedException closing) {
                return;
            } catch (Exception connectionLost) {
                // The node is gone, paused, or did not confirm in time: a new connection, and every unanswered command again.
                lastFailure = connectionLost;
                abort();
                pause();
            }
        }
        abort();
    }

    private void connectIfNeeded() throws IOException, TimeoutException, InterruptedException {
        if (channel != null && channel.isOpen()) {
            return;
        }
        abort();
        connection = factory.newConnection(addresses);
        connections.incrementAndGet();
        channel = connection.createChannel();
        channel.confirmSelect();
        replyQueue = channel.queueDeclare(Broker.USER + ".replies." + UUID.randomUUID(), false, true, true, null).getQueue();
        channel.basicConsume(replyQueue, true, (tag, delivery) -> arrived.add(new Arrival(delivery, System.nanoTime())), tag -> { });
        for (Command command : new ArrayList<>(unanswered.values())) {
            publish(command);
        }
    }

    private void publish(Command command) throws IOException, InterruptedException, TimeoutException {
        AMQP.BasicProperties properties = Broker.commandProperties(command.key(), replyQueue, command.key());
        channel.basicPublish(exchange, command.routingKey(), properties, command.body().getBytes(StandardCharsets.UTF_8));
        publishes.incrementAndGet();
        lastSentAt.put(command.key(), System.nanoTime());
        // No confirm in time drops the connection. So does a nack: on RabbitMQ 3.10, a channel opened while a quorum
        // queue's leader was being replaced can go on nacking every publish to it; a new one reaches the new leader.
        if (channel.waitForConfirms(CONFIRM_WITHIN.toMillis())) {
            confirmed.add(command.key());
        } else {
            nacked.incrementAndGet();
            throw new IOException("nacked: " + command.key());
        }
    }

    private void takeReplies() {
        for (Arrival arrival = arrived.poll(); arrival != null; arrival = arrived.poll()) {
            Delivery delivery = arrival.delivery();
            String key = delivery.getProperties().getCorrelationId();
            Object status = delivery.getProperties().getHeaders().get(MessageSettlement.STATUS_HEADER);
            if (key == null || !(status instanceof Number number) || number.intValue() == 202) {
                continue;
            }
            if (replies.putIfAbsent(key, new Reply(number.intValue(), new String(delivery.getBody(), StandardCharsets.UTF_8),
                    arrival.atNanos())) == null) {
                replyTimes.add(arrival.atNanos());
            }
            unanswered.remove(key);
        }
    }

    private void republishOverdue() throws IOException, InterruptedException, TimeoutException {
        long dueBefore = System.nanoTime() - REPUBLISH_AFTER.toNanos();
        for (Command command : new ArrayList<>(unanswered.values())) {
            if (lastSentAt.getOrDefault(command.key(), 0L) < dueBefore) {
                publish(command);
            }
        }
    }

    private void abort() {
        if (connection != null) {
            connection.abort(1000);
        }
        connection = null;
        channel = null;
    }

    private static void pause() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException closing) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        thread.interrupt();
        thread.join(10_000);
    }
}
