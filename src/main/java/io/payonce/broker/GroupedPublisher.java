package io.payonce.broker;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.core.Context;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Publishes messages that are nothing to each other (the replies to commands handled at once) one
 * call per caller, but many at a time to the broker: while one group waits for its confirms, the
 * messages that come meanwhile wait for the next group, which leaves as soon as the first is
 * settled. A message alone leaves at once, so nothing waits for a timer; under load, one worker
 * thread's hop and one wait for confirms serve a group instead of each message.
 *
 * <p>Each caller learns of its own message only: it is confirmed, or its call fails with
 * {@link ConfirmedPublisher.NotConfirmed}, whatever became of its neighbours. The item comes on the
 * caller's own Vert.x context, as a call to {@link ConfirmedPublisher} would bring it.
 */
@ApplicationScoped
public class GroupedPublisher {

    /** More than the commands an instance may handle at once: a group never leaves one of them behind. */
    static final int MAX_GROUP = 128;

    private final ConfirmedPublisher publisher;
    private final Vertx vertx;
    private final Queue<Waiting> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean groupOut = new AtomicBoolean();

    GroupedPublisher(ConfirmedPublisher publisher, Vertx vertx) {
        this.publisher = publisher;
        this.vertx = vertx;
    }

    /** Publishes {@code message} with the next group; the item comes once the broker has confirmed it. */
    public Uni<Void> publish(ConfirmedPublisher.Outgoing message) {
        return Uni.createFrom().emitter(emitter -> {
            waiting.add(new Waiting(message, vertx.getDelegate().getOrCreateContext(), emitter));
            sendNextGroup();
        });
    }

    /** A message and the caller waiting for it. */
    private record Waiting(ConfirmedPublisher.Outgoing message, Context context, UniEmitter<? super Void> caller) {

        void confirmed(boolean confirmed) {
            context.runOnContext(settled -> {
                if (confirmed) {
                    caller.complete(null);
                } else {
                    caller.fail(new ConfirmedPublisher.NotConfirmed("not confirmed by RabbitMQ, or nacked", null));
                }
            });
        }

        void failed(Throwable failure) {
            context.runOnContext(settled -> caller.fail(failure));
        }
    }

    /**
     * Sends what waits, unless a group is out: the one out sends the next when it is settled. The flag
     * is looked at again after it is let go, so that a message added in between is never stranded.
     */
    private void sendNextGroup() {
        while (!waiting.isEmpty() && groupOut.compareAndSet(false, true)) {
            List<Waiting> group = new ArrayList<>();
            for (Waiting next = waiting.poll(); next != null; next = group.size() < MAX_GROUP ? waiting.poll() : null) {
                group.add(next);
            }
            if (group.isEmpty()) {
                groupOut.set(false);
                continue;
            }
            publisher.publishEach(group.stream().map(Waiting::message).toList()).subscribe().with(
                    confirmed -> settle(group, confirmed, null),
                    failure -> settle(group, null, failure));
            return;
        }
    }

    private void settle(List<Waiting> group, List<Boolean> confirmed, Throwable failure) {
        for (int i = 0; i < group.size(); i++) {
            if (failure == null) {
                group.get(i).confirmed(confirmed.get(i));
            } else {
                group.get(i).failed(failure);
            }
        }
        groupOut.set(false);
        sendNextGroup();
    }
}
