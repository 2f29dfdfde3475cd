package io.payonce.broker;

import io.smallrye.mutiny.Uni;

import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.function.Predicate;

/**
 * The publisher, with the broker refusing the messages {@code refuses} picks as it refuses a message
 * over its max_message_size: it closes the channel on it (406 PRECONDITION_FAILED), so nothing from
 * that message on is confirmed. The messages before it go to the real broker. A call of several
 * messages that does not begin with a refused one, and that {@code unconfirmed} picks, is not
 * confirmed in time: a test picks only its own messages, so that the events other tests left
 * behind still flow. The closed channel itself is tested against a real node in
 * {@link ConfirmingChannelTest}.
 */
public final class RefusingPublisher extends ConfirmedPublisher {

    public static final String TOO_LARGE = "PRECONDITION_FAILED - message size 4096 is larger than configured max size 2048";

    private final ConfirmedPublisher broker;
    private final Predicate<Outgoing> refuses;
    private final Predicate<List<Outgoing>> unconfirmed;

    public RefusingPublisher(ConfirmedPublisher broker, Predicate<Outgoing> refuses, Predicate<List<Outgoing>> unconfirmed)
            throws NoSuchAlgorithmException {
        super(null, "127.0.0.1", 0, "", "", "/", false);
        this.broker = broker;
        this.refuses = refuses;
        this.unconfirmed = unconfirmed;
    }

    @Override
    public Uni<Void> connect() {
        return broker.connect();
    }

    @Override
    public Uni<Confirmed> publish(String ownExchange, List<Outgoing> messages) {
        int refused = 0;
        while (refused < messages.size() && !refuses.test(messages.get(refused))) {
            refused++;
        }
        if (refused > 0 && messages.size() > 1 && unconfirmed.test(messages)) {
            return Uni.createFrom().failure(new NotConfirmed("not confirmed by RabbitMQ: the test's broker is slow", null));
        }
        if (refused == messages.size()) {
            return broker.publish(ownExchange, messages);
        }
        if (refused == 0) {
            return Uni.createFrom().item(new Confirmed(0, messages.size(), TOO_LARGE));
        }
        return broker.publish(ownExchange, messages.subList(0, refused))
                .map(before -> new Confirmed(before.count(), messages.size(), TOO_LARGE));
    }
}
