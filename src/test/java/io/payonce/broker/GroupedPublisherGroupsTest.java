package io.payonce.broker;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.Optional;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How replies leave in groups, against a publisher that answers when the test says so: what comes
 * while every group is out leaves together once one is settled, and a group that fails, or cannot
 * even be sent, frees its place for the next. No broker is needed.
 */
class GroupedPublisherGroupsTest {

    private final Vertx vertx = Vertx.vertx();
    private final HeldPublisher held;
    private final GroupedPublisher grouped;

    GroupedPublisherGroupsTest() throws NoSuchAlgorithmException {
        held = new HeldPublisher(vertx);
        grouped = new GroupedPublisher(held, vertx);
    }

    @AfterEach
    void close() {
        vertx.closeAndAwait();
    }

    @Test
    void whatComesWhileEveryGroupIsOutLeavesTogetherOnceOneIsSettled() throws Exception {
        List<CompletableFuture<Void>> callers = new ArrayList<>();
        for (int i = 0; i < GroupedPublisher.GROUPS_OUT + 5; i++) {
            callers.add(grouped.publish(message(i)).subscribeAsCompletionStage());
        }
        assertEquals(List.of(1, 1, 1, 1), held.groupSizes(), "each of the first leaves at once, in a group of its own");

        held.answer(0, List.of(true));
        callers.get(0).get(5, TimeUnit.SECONDS);
        assertEquals(List.of(1, 1, 1, 1, 5), held.groupSizes(), "the five that waited leave together");

        held.answer(4, List.of(true, false, true, true, true));
        for (int group = 1; group < GroupedPublisher.GROUPS_OUT; group++) {
            held.answer(group, List.of(true));
        }
        for (int i = 0; i < callers.size(); i++) {
            if (i == GroupedPublisher.GROUPS_OUT + 1) {
                CompletableFuture<Void> nacked = callers.get(i);
                ExecutionException failed = assertThrows(ExecutionException.class, () -> nacked.get(5, TimeUnit.SECONDS));
                assertInstanceOf(ConfirmedPublisher.NotConfirmed.class, failed.getCause(), "its own message was not confirmed");
            } else {
                callers.get(i).get(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aGroupThatFailsOrCannotBeSentFreesItsPlace() throws Exception {
        held.throwOnNextCall = true;
        CompletableFuture<Void> unsent = grouped.publish(message(0)).subscribeAsCompletionStage();
        assertThrows(ExecutionException.class, () -> unsent.get(5, TimeUnit.SECONDS));

        List<CompletableFuture<Void>> failing = new ArrayList<>();
        for (int i = 0; i < GroupedPublisher.GROUPS_OUT; i++) {
            failing.add(grouped.publish(message(i)).subscribeAsCompletionStage());
            held.fail(held.groupSizes().size() - 1);
        }
        for (CompletableFuture<Void> caller : failing) {
            assertThrows(ExecutionException.class, () -> caller.get(5, TimeUnit.SECONDS));
        }

        CompletableFuture<Void> after = grouped.publish(message(9)).subscribeAsCompletionStage();
        assertEquals(1 + GroupedPublisher.GROUPS_OUT, held.groupSizes().size(), "sent at once: no place is held by a failed group");
        held.answer(held.groupSizes().size() - 1, List.of(true));
        after.get(5, TimeUnit.SECONDS);
        assertFalse(after.isCompletedExceptionally());
        assertTrue(after.isDone());
    }

    private static ConfirmedPublisher.Outgoing message(int i) {
        return new ConfirmedPublisher.Outgoing("", "replies-" + i, null, new byte[0]);
    }

    /** A publisher whose groups wait for the test's answer: which of their messages were confirmed, or a failure. */
    private static final class HeldPublisher extends ConfirmedPublisher {

        private final List<List<Outgoing>> groups = new CopyOnWriteArrayList<>();
        private final List<CompletableFuture<List<Boolean>>> answers = new CopyOnWriteArrayList<>();
        private volatile boolean throwOnNextCall;

        HeldPublisher(Vertx vertx) throws NoSuchAlgorithmException {
            super(vertx, "127.0.0.1", 1, "nobody", "none", "/", false, Optional.empty());
        }

        @Override
        public Uni<List<Boolean>> publishEach(List<Outgoing> messages) {
            if (throwOnNextCall) {
                throwOnNextCall = false;
                throw new IllegalStateException("cannot send");
            }
            CompletableFuture<List<Boolean>> answer = new CompletableFuture<>();
            groups.add(messages);
            answers.add(answer);
            return Uni.createFrom().completionStage(answer);
        }

        List<Integer> groupSizes() {
            return groups.stream().map(List::size).toList();
        }

        void answer(int group, List<Boolean> confirmed) {
            answers.get(group).complete(confirmed);
        }

        void fail(int group) {
            answers.get(group).completeExceptionally(new NotConfirmed("broker away", null));
        }
    }
}
