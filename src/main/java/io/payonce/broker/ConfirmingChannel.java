package io.payonce.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * A channel in confirm mode that knows which of its messages the broker acked, so that a caller
 * learns how many of a call's messages, from the first on, are confirmed: a nack or a timeout in the
 * middle of a batch leaves the part before it confirmed. It tells a refusal (the broker will never
 * take this message) from a broker that did not take it now: one that did not answer in time, or
 * nacked it (a full queue that rejects what overflows it refuses every message routed to it, not
 * this one). One caller uses it at a time.
 */
final class ConfirmingChannel implements ConfirmListener {

    private final Channel channel;
    private final NavigableSet<Long> unconfirmed = new ConcurrentSkipListSet<>();
    private final Map<Long, Boolean> acked = new ConcurrentHashMap<>();

    private ConfirmingChannel(Channel channel) {
        this.channel = channel;
    }

    /** {@code pooled} if there is one on {@code connection} still open, else a new channel there in confirm mode. */
    static ConfirmingChannel on(ConfirmingChannel pooled, Connection connection) throws IOException {
        if (pooled != null && pooled.channel.isOpen() && pooled.channel.getConnection() == connection) {
            return pooled;
        }
        ConfirmingChannel created = new ConfirmingChannel(connection.createChannel());
        created.channel.confirmSelect();
        created.channel.addConfirmListener(created);
        return created;
    }

    Channel channel() {
        return channel;
    }

    /**
     * Publishes in order and waits up to {@code timeout}; answers how many, from the first on, were
     * acked, and why the broker refused a message after them, if it did: it closed the channel on that
     * one or one behind it (406 PRECONDITION_FAILED, a message it never takes: over its
     * max_message_size, say). A nack is no refusal: the nacked message and those behind it are merely
     * not confirmed. Any other end of the channel is no refusal, and fails.
     */
    ConfirmedPublisher.Confirmed publishAll(List<ConfirmedPublisher.Outgoing> messages, Duration timeout)
            throws IOException, InterruptedException {
        Sent sent = send(messages, timeout);
        int confirmed = 0;
        while (confirmed < messages.size() && sent.acked(confirmed)) {
            confirmed++;
        }
        return new ConfirmedPublisher.Confirmed(confirmed, messages.size(), sent.refusal());
    }

    /**
     * Publishes in order and waits up to {@code timeout}; answers, message by message, whether the
     * broker acked it: messages that are nothing to each other (replies to different senders), each
     * confirmed or not on its own account. A refusal leaves those the broker acked before it confirmed.
     */
    List<Boolean> publishEach(List<ConfirmedPublisher.Outgoing> messages, Duration timeout) throws IOException, InterruptedException {
        Sent sent = send(messages, timeout);
        return IntStream.range(0, messages.size()).mapToObj(sent::acked).toList();
    }

    /** A call's messages on the wire: their publish sequence numbers, and the broker's words if it refused one. */
    private final class Sent {
        private final long[] sequence;
        private final String refusal;

        Sent(long[] sequence, String refusal) {
            this.sequence = sequence;
            this.refusal = refusal;
        }

        boolean acked(int message) {
            return Boolean.TRUE.equals(acked.get(sequence[message]));
        }

        String refusal() {
            return refusal;
        }
    }

    private Sent send(List<ConfirmedPublisher.Outgoing> messages, Duration timeout) throws IOException, InterruptedException {
        acked.clear();
        long[] sequence = new long[messages.size()];
        String refusal = null;
        try {
            for (int i = 0; i < messages.size(); i++) {
                ConfirmedPublisher.Outgoing message = messages.get(i);
                sequence[i] = channel.getNextPublishSeqNo();
                unconfirmed.add(sequence[i]);
                channel.basicPublish(message.exchange(), message.routingKey(), message.properties(), message.body());
            }
            channel.waitForConfirms(timeout.toMillis());
        } catch (TimeoutException late) {
            // What was acked in time counts; the rest is not confirmed.
        } catch (ShutdownSignalException closed) {
            refusal = refusalIn(closed);
            if (refusal == null) {
                throw closed;
            }
        }
        return new Sent(sequence, refusal);
    }

    /** The broker's words, when it closed the channel on a message it will never take; null when the channel ended otherwise. */
    private static String refusalIn(ShutdownSignalException closed) {
        if (!closed.isHardError() && closed.getReason() instanceof AMQP.Channel.Close close && close.getReplyCode() == AMQP.PRECONDITION_FAILED) {
            return close.getReplyText();
        }
        return null;
    }

    @Override
    public void handleAck(long deliveryTag, boolean multiple) {
        settle(deliveryTag, multiple, true);
    }

    @Override
    public void handleNack(long deliveryTag, boolean multiple) {
        settle(deliveryTag, multiple, false);
    }

    private void settle(long deliveryTag, boolean multiple, boolean ack) {
        NavigableSet<Long> settled = multiple ? unconfirmed.headSet(deliveryTag, true) : unconfirmed.subSet(deliveryTag, true, deliveryTag, true);
        for (Long sequence : settled) {
            acked.put(sequence, ack);
        }
        settled.clear();
    }

    /** Closes the channel at once, without waiting for the broker: a channel that failed is never reused. */
    void abort() {
        try {
            channel.abort();
        } catch (IOException | RuntimeException alreadyGone) {
            // The connection is gone, and the channel with it.
        }
    }
}
