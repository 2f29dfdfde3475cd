package io.payonce.broker;

import io.smallrye.mutiny.Uni;

import java.util.Optional;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.function.Predicate;

/**
 * The publisher, with the broker refusing the messages {@code refuses} picks as it refuses a message
 * over its max_message_size: it closes the channel on it (406 PRECONDITION_FAILED), so nothing from
 * that message on is confirmed. In a call of several messages, nothing from the first one
 * {@code unconfirmed} picks on is confirmed in time, as by a broker slow to confirm it. The messages
 * before the first refused or unconfirmed one go to the real broker, which confirms them: a test picks
 * only its own messages, so the events other tests left ahead of them in the outbox still flow. A pick
 * of whole calls could not promise that: the relay's batch that begins with those events and holds
 * the test's would never be confirmed, and the relay would never reach the test's events. The closed
 * channel itself is tested against a real node in {@link ConfirmingChannelTest}.
 */
public final class RefusingPublisher extends ConfirmedPublisher {

    public static final String TOO_LARGE = "PRECONDITION_FAILED - message size 4096 is larger than configured max size 2048";

    private final ConfirmedPublisher broker;
    private final Predicate<Outgoing> refuses;
    private final Predicate<Outgoing> unconfirmed;

    public RefusingPublisher(ConfirmedPublisher broker, Predicate<Outgoing> refuses, Predicate<Outgoing> unconfirmed)
            throws NoSuchAlgorithmException {
        super(null, "127.0.0.1", 0, "", "", "/", false, Optional.empty());
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
        int refused = firstPicked(refuses, messages);
        int slow = messages.size() > 1 ? firstPicked(unconfirmed, messages) : messages.size();
        if (slow < refused) {
            // As the real publisher answers: nothing confirmed at all is a failure, some is a count short of the call.
            return slow == 0
                    ? Uni.createFrom().failure(new NotConfirmed("not confirmed by RabbitMQ: the test's broker is slow", null))
                    : broker.publish(ownExchange, messages.subList(0, slow)).map(before -> new Confirmed(before.count(), messages.size(), null));
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

    /** The index of the first of {@code messages} that {@code picks} picks, or their number if it picks none. */
    private static int firstPicked(Predicate<Outgoing> picks, List<Outgoing> messages) {
        int index = 0;
        while (index < messages.size() && !picks.test(messages.get(index))) {
            index++;
        }
        return index;
    }
}
