package io.payonce.commands;

import io.payonce.commands.outcome.OnceRule;
import io.payonce.commands.outcome.Outcome;
import io.payonce.commands.outcome.OutcomeTable;
import io.payonce.commands.outcome.TwinCharging;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.shutdown.Draining;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The rows of {@link OutcomeTable} that send a command back to the queue once ask the rule's own mark
 * ({@link OnceRule}), never the broker's redelivered flag, which payonce's requeue for a store down
 * sets too; a store down sends it back every time.
 */
class OutcomeTableTest {

    private static final String NO_REPLY_TO = null;

    private final OutcomeTable table = new OutcomeTable(new Draining(Optional.of(Duration.ofSeconds(1))));
    private final ApiException comeBack = new TwinCharging();
    private final RuntimeException unforeseen = new IllegalStateException("a bug");

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aComeBackLaterWithoutReplyToAndAnUnforeseenFailureGoBackOnceWhateverTheRedeliveredFlagSays(boolean redelivered) throws Exception {
        assertEquals(Outcome.REQUEUE_ONCE, table.outcome(comeBack, SettledMessages.delivered(redelivered, NO_REPLY_TO)));
        assertEquals(Outcome.REQUEUE_ONCE, table.outcome(unforeseen, SettledMessages.delivered(redelivered, NO_REPLY_TO)));
        assertEquals(Outcome.REQUEUE, table.outcome(new ApiException(ErrorCode.DEPENDENCY_UNAVAILABLE),
                SettledMessages.delivered(redelivered, NO_REPLY_TO)));
    }

    @Test
    void eachOnceRowIsItsOwnRule() {
        assertEquals(OnceRule.COME_BACK_LATER, OutcomeTable.onceRuleOf(comeBack));
        assertEquals(OnceRule.UNFORESEEN, OutcomeTable.onceRuleOf(unforeseen));
    }
}
