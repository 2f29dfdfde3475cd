package io.payonce.broker;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Publishes messages that are nothing to each other (the replies to commands handled at once) one
 * call per caller, but many at a time to the broker: while the groups out wait for their confirms,
 * the messages that come meanwhile wait for the next group, which leaves as soon as one is settled.
 * A message that finds a group free leaves at once, so nothing waits for a timer; under load, one
 * worker thread's hop and one wait for confirms serve a group instead of each message. A few groups
 * may be out at once, each on a channel of its own, so that one slow confirm (a sender's reply queue
 * on a node in trouble) holds back its own group, not every reply.
 *
 * <p>Each caller learns of its own message only: it is confirmed, or its call fails with
 * {@link ConfirmedPublisher.NotConfirmed}. A neighbour's nack or missing confirm is no failure of
 * another message; a group whose channel closes fails those of its messages not yet confirmed, and a
 * refusal (the broker closes the channel on a message it never takes) fails the messages behind the
 * refused one too, which the broker dropped with the channel. The item comes on the caller's own
 * Vert.x context, as a call to {@link ConfirmedPublisher} would bring it.
 */
@ApplicationScoped
public class GroupedPublisher {

    /** Groups out at once: each holds a worker thread while it waits for its confirms. */
    static final int GROUPS_OUT = 4;
    /** The most messages in a group; more waiting go in the next. */
    static final int MAX_GROUP = 64;
    /**
     * Longer than any call to the publisher may take (its connect, calls and confirms are each bounded
     * by 2 s): a group not settled by then is failed, so that a worker stuck on a blocked socket never
     * holds its commands, or the groups behind it, for ever.
     */
    static final Duration GROUP_BOUND = Duration.ofSeconds(10);

    private final ConfirmedPublisher publisher;
    private final Vertx vertx;
    private final Queue<Waiting> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger groupsOut = new AtomicInteger();

    GroupedPublisher(ConfirmedPublisher publisher, Vertx vertx) {
        this.publisher = publisher;
        this.vertx = vertx;
    }

    /** Publishes {@code message} with the next group; the item comes once the broker has confirmed it. */
    public Uni<Void> publish(ConfirmedPublisher.Outgoing message) {
        return Uni.createFrom().emitter(emitter -> {
            waiting.add(new Waiting(message, vertx.getDelegate().getOrCreateContext(), emitter));
            sendGroups();
        });
    }

    /** A message and the caller waiting for it. */
    private record Waiting(ConfirmedPublisher.Outgoing message, Context context, UniEmitter<? super Void> caller) {

        void settle(boolean confirmed, Throwable failure) {
            Throwable outcome = failure != null ? failure
                    : confirmed ? null : new ConfirmedPublisher.NotConfirmed("not confirmed by RabbitMQ, nacked, or refused", null);
            try {
                context.runOnContext(settled -> {
                    if (outcome == null) {
                        caller.complete(null);
                    } else {
                        caller.fail(outcome);
                    }
                });
            } catch (RuntimeException contextGone) {
                // The caller's context is closing with the instance: the caller hears it on this thread.
                caller.fail(contextGone);
            }
        }
    }

    /**
     * Sends what waits, in as many groups as may be out. The count is looked at again after each group
     * is settled, so that a message added while every group was out is never stranded.
     */
    private void sendGroups() {
        while (!waiting.isEmpty() && takeGroupSlot()) {
            List<Waiting> group = new ArrayList<>();
            for (Waiting next = waiting.poll(); next != null; next = group.size() < MAX_GROUP ? waiting.poll() : null) {
                group.add(next);
            }
            if (group.isEmpty()) {
                groupsOut.decrementAndGet();
                continue;
            }
            send(group);
        }
    }

    private boolean takeGroupSlot() {
        for (int out = groupsOut.get(); out < GROUPS_OUT; out = groupsOut.get()) {
            if (groupsOut.compareAndSet(out, out + 1)) {
                return true;
            }
        }
        return false;
    }

    private void send(List<Waiting> group) {
        Uni<List<Boolean>> confirms;
        try {
            confirms = publisher.publishEach(group.stream().map(Waiting::message).toList());
        } catch (RuntimeException cannotSend) {
            settle(group, null, cannotSend);
            return;
        }
        confirms.ifNoItem().after(GROUP_BOUND)
                .failWith(() -> new ConfirmedPublisher.NotConfirmed("no confirms within " + GROUP_BOUND.toSeconds() + " s", null))
                .subscribe().with(confirmed -> settle(group, confirmed, null), failure -> settle(group, null, failure));
    }

    /** Tells each caller of the group its own outcome, then frees the group's place, whatever happens on the way. */
    private void settle(List<Waiting> group, List<Boolean> confirmed, Throwable failure) {
        try {
            for (int i = 0; i < group.size(); i++) {
                group.get(i).settle(failure == null && confirmed.get(i), failure);
            }
        } finally {
            groupsOut.decrementAndGet();
            sendGroups();
        }
    }
}
