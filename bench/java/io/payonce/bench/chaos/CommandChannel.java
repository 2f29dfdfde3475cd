package io.payonce.bench.chaos;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Address;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DeliverCallback;
import com.rabbitmq.client.ShutdownSignalException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/*
 * The workload's side of the broker, as an upstream order system would hold it: it sends pay and
 * refund commands to payonce's queue (message-id = the operation's key, kept across every copy it
 * sends again) and reads their replies from a durable reply queue of its own; and it binds the
 * durable queue the checker reads every published event from, before any money moves. The
 * connection recovers by itself when the nemesis restarts the broker, or moves to the next of the
 * cluster's nodes when its own is lost; a command sent while it is away is an attempt without an
 * answer, and the operation sends it again. On a cluster (PAYONCE_COMMANDS_QUEUE_TYPE=quorum, as the
 * instances are told) the reply and audit queues are quorum queues too: a classic queue lives on one
 * node, and what it held would be gone with that node.
 */
final class CommandChannel implements AutoCloseable {

    /** The broker user the run's instances accept commands from (PAYONCE_COMMANDS_*_SENDERS in run.sh). */
    static final String SENDER = "guest";
    static final String REPLY_QUEUE = SENDER + ".replies.chaos";
    static final String AUDIT_QUEUE = "payonce.chaos.audit";
    static final String STATUS_HEADER = "x-payonce-status";

    private final Connection connection;
    private final ThreadLocal<Channel> publishers;
    private final String commandsExchange;
    private final Map<String, CompletableFuture<Reply>> waiting = new ConcurrentHashMap<>();
    private final Queue<LateReply> lateReplies = new ConcurrentLinkedQueue<>();

    /** A reply: its status, body and whether it said it repeats an earlier answer. */
    record Reply(int status, String body, boolean repeat) {
    }

    /** A reply that came after its copy had stopped waiting, under the key it answers (the message-id). */
    record LateReply(String key, Reply reply) {
    }

    /** On the broker at {@code addresses}, host:port,host:port: one node, or a cluster's. */
    CommandChannel(String addresses, String commandsExchange, String eventsExchange) throws IOException, TimeoutException {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setNetworkRecoveryInterval(500);
        // A node that stops answering is left within about 10 s, as an order system on a cluster should.
        factory.setRequestedHeartbeat(5);
        this.connection = factory.newConnection(List.of(Address.parseAddresses(addresses)), "payonce-chaos-workload");
        this.commandsExchange = commandsExchange;
        Map<String, Object> queueType = "quorum".equals(System.getenv("PAYONCE_COMMANDS_QUEUE_TYPE")) ? Map.of("x-queue-type", "quorum") : null;
        Channel setup = connection.createChannel();
        setup.exchangeDeclare(eventsExchange, "topic", true);
        setup.queueDeclare(AUDIT_QUEUE, true, false, false, queueType);
        setup.queueBind(AUDIT_QUEUE, eventsExchange, "#");
        setup.queueDeclare(REPLY_QUEUE, true, false, false, queueType);
        DeliverCallback onReply = (tag, delivery) -> {
            String correlationId = String.valueOf(delivery.getProperties().getCorrelationId());
            Map<String, Object> headers = delivery.getProperties().getHeaders();
            Reply reply = new Reply(((Number) headers.get(STATUS_HEADER)).intValue(),
                    new String(delivery.getBody(), StandardCharsets.UTF_8), Boolean.TRUE.equals(headers.get("Idempotent-Replayed")));
            CompletableFuture<Reply> attempt = waiting.remove(correlationId);
            if (attempt == null) {
                lateReplies.add(new LateReply(correlationId.substring(0, correlationId.lastIndexOf('/')), reply));
            } else {
                attempt.complete(reply);
            }
        };
        setup.basicConsume(REPLY_QUEUE, true, onReply, tag -> { });
        this.publishers = ThreadLocal.withInitial(this::confirmingChannel);
    }

    /**
     * Sends the command under {@code key} and waits for the reply to this copy ({@code correlationId})
     * at most {@code timeout}; no confirm or no reply in time is a timeout, and the caller sends it again.
     */
    Reply send(String key, String correlationId, String body, Duration timeout)
            throws IOException, TimeoutException, InterruptedException {
        CompletableFuture<Reply> reply = new CompletableFuture<>();
        waiting.put(correlationId, reply);
        Channel channel = null;
        try {
            channel = publishers.get();
            channel.basicPublish(commandsExchange, "command", new AMQP.BasicProperties.Builder()
                    .messageId(key).userId(SENDER).replyTo(REPLY_QUEUE).correlationId(correlationId).deliveryMode(2).build(),
                    body.getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(timeout.toMillis());
            return reply.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException impossible) {
            throw new IllegalStateException(impossible);
        } catch (ShutdownSignalException | IllegalStateException brokerAway) {
            throw new IOException("the broker is away", brokerAway);
        } finally {
            waiting.remove(correlationId);
            // A confirm that timed out closes the channel, and so does a broker that went away for good.
            if (channel == null || !channel.isOpen()) {
                publishers.remove();
            }
        }
    }

    /** Replies that came after their copy had stopped waiting: the operation had moved on, or was settled. */
    List<LateReply> lateReplies() {
        return List.copyOf(lateReplies);
    }

    private Channel confirmingChannel() {
        try {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            return channel;
        } catch (IOException e) {
            throw new IllegalStateException("no channel to the broker", e);
        }
    }

    @Override
    public void close() throws IOException {
        connection.abort();
    }
}
