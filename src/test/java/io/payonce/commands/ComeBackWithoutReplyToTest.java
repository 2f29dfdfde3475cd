package io.payonce.commands;

import io.payonce.commands.outcome.TwinCharging;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every answer that tells a command's sender "nothing was done, come back", met by a command with
 * no reply-to: never acked, since its sender would never learn that the command did nothing. What
 * can outlast the queue's pause (a card payment waiting for its processor, a card pay's twin holding
 * its charge) goes back to the queue once and leaves it for the dead letters when it is told the
 * same again, however often it waited for a store in between, whatever the broker's redelivered flag
 * says; what lasts moments (a twin holding the pay lock or the key's row, a store down) goes back
 * to the queue on every delivery, as it does with a reply-to. The consumer's table alone
 * ({@link SettledMessages}): with no broker to copy to here, a dead-letter copy ends as a rejection
 * to the queue's own dead-letter exchange.
 */
class ComeBackWithoutReplyToTest {

    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final String NO_REPLY_TO = null;

    @ParameterizedTest
    @MethodSource("comeBackLater")
    void aComeBackLaterGoesBackToTheQueueOnceAndThenLeavesItNeverAcked(ApiException comeBack) throws Exception {
        SettledMessages messages = new SettledMessages();

        settle(messages, comeBack, false);
        settle(messages, comeBack, true);

        assertEquals(List.of("requeued", "rejected"), messages.settled);
    }

    /**
     * The broker's redelivered flag is set by payonce's own requeue for a store down: the command's
     * first "come back later" still sends it back once (red when the flag was the count).
     */
    @ParameterizedTest
    @MethodSource("comeBackLater")
    void aComeBackLaterAfterAWaitForAStoreStillGoesBackToTheQueueOnce(ApiException comeBack) throws Exception {
        SettledMessages messages = new SettledMessages();
        ApiException storeDown = notNow().findFirst().orElseThrow();

        settle(messages, storeDown, false);
        settle(messages, comeBack, true);
        settle(messages, storeDown, true);
        settle(messages, comeBack, true);

        assertEquals(List.of("requeued", "requeued", "requeued", "rejected"), messages.settled);
    }

    @ParameterizedTest
    @MethodSource("notNow")
    void aNotNowGoesBackToTheQueueOnEveryDelivery(ApiException notNow) throws Exception {
        SettledMessages messages = new SettledMessages();

        settle(messages, notNow, false);
        settle(messages, notNow, true);
        settle(messages, notNow, true);

        assertEquals(List.of("requeued", "requeued", "requeued"), messages.settled);
        assertEquals(Set.of(), messages.marks, "a wait for a store leaves no mark");
    }

    static Stream<ApiException> comeBackLater() {
        return Stream.concat(codesOf(ErrorCode.Kind.RETRY_LATER), Stream.of(new TwinCharging()));
    }

    static Stream<ApiException> notNow() {
        return codesOf(ErrorCode.Kind.NOT_NOW);
    }

    /** Enough words for every code's detail, whatever it names. */
    private static final Object[] DETAIL_ARGUMENTS = {"payment 1", "UNKNOWN", "a word", "a word", "a word"};

    private static Stream<ApiException> codesOf(ErrorCode.Kind kind) {
        return Arrays.stream(ErrorCode.values()).filter(code -> code.kind() == kind).map(code -> new ApiException(code, DETAIL_ARGUMENTS));
    }

    /** One delivery of the same command (message-id, sender), told {@code refusal}. */
    private static void settle(SettledMessages messages, ApiException refusal, boolean redelivered) throws ReflectiveOperationException {
        IncomingRabbitMQMetadata amqp = SettledMessages.delivered(redelivered, NO_REPLY_TO);
        messages.consumer.handle(messages.recorded(amqp), amqp, Uni.createFrom().failure(refusal)).await().atMost(WAIT);
    }
}
