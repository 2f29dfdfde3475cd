package io.payonce.commands;

import com.rabbitmq.client.AMQP;
import io.payonce.commands.outcome.OnceRule;
import io.payonce.commands.settlement.RequeueMarks.Meeting;
import io.payonce.commands.settlement.StoredRequeueMarks;
import io.payonce.support.Database;
import io.payonce.support.GatedStores;
import io.payonce.support.GatedStores.Outage;
import io.payonce.support.GatedStores.Store;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The rules' marks in MariaDB: one per sender, message-id and rule, whichever instance meets the
 * command; the broker's flag only where a command names nothing to key a mark by; and with the
 * database away, no meeting is counted, so that a wait for a store never uses a rule up.
 */
@QuarkusTest
@TestProfile(GatedStores.class)
class StoredRequeueMarksTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final Database db = Database.forTests();

    @Inject
    StoredRequeueMarks marks;

    @Test
    void aRuleMeetsACommandFirstOnceAndAgainAfterWhateverTheFlagSays() throws Exception {
        String messageId = "cmd-" + UUID.randomUUID();

        assertEquals(Meeting.FIRST, meet(command("orders-service", messageId, true), OnceRule.COME_BACK_LATER));
        assertEquals(Meeting.AGAIN, meet(command("orders-service", messageId, false), OnceRule.COME_BACK_LATER));
        assertEquals(Meeting.FIRST, meet(command("orders-service", messageId, true), OnceRule.UNREPLIED), "another rule's mark is its own");
        assertEquals(Meeting.FIRST, meet(command("refund-desk", messageId, true), OnceRule.COME_BACK_LATER),
                "the same message-id from another sender is another command");
        assertEquals(1, db.count("SELECT COUNT(*) FROM command_requeue WHERE sender = 'orders-service' AND message_id = ? "
                + "AND rule_name = 'COME_BACK_LATER'", messageId));
    }

    /** A sender or message-id the columns cannot hold whole is never cut into another command's mark. */
    @Test
    void aCommandWithNothingToKeyAMarkByIsBoundByTheFlagAndLeavesNoMark() throws Exception {
        String tooLong = "m".repeat(256);
        String unprintable = "cmd " + UUID.randomUUID();

        for (String messageId : new String[]{tooLong, unprintable}) {
            assertEquals(Meeting.FIRST, meet(command("orders-service", messageId, false), OnceRule.UNFORESEEN));
            assertEquals(Meeting.FIRST, meet(command("orders-service", messageId, false), OnceRule.UNFORESEEN));
            assertEquals(Meeting.AGAIN, meet(command("orders-service", messageId, true), OnceRule.UNFORESEEN));
        }
        assertEquals(0, db.count("SELECT COUNT(*) FROM command_requeue WHERE message_id LIKE 'mmmm%' OR message_id LIKE 'cmd %'"));
    }

    @Test
    void withTheDatabaseAwayNoMeetingIsCountedAndTheRuleIsNotUsedUp() throws Exception {
        String messageId = "cmd-" + UUID.randomUUID();

        try (Outage databaseAway = GatedStores.away(Store.MARIADB)) {
            assertEquals(Meeting.UNKNOWN, meet(command("orders-service", messageId, true), OnceRule.COME_BACK_LATER));
        }

        assertEquals(0, db.count("SELECT COUNT(*) FROM command_requeue WHERE message_id = ?", messageId));
    }

    private Meeting meet(IncomingRabbitMQMetadata command, OnceRule rule) {
        return marks.meet(command, rule).await().atMost(WAIT);
    }

    private static IncomingRabbitMQMetadata command(String sender, String messageId, boolean redelivered) throws ReflectiveOperationException {
        return SettledMessages.delivered(new AMQP.BasicProperties.Builder().messageId(messageId).userId(sender).build(), redelivered);
    }
}
