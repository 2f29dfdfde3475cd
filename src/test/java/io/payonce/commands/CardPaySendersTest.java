package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A card pay command is heard only from payonce.commands.card-pay-senders: a sender trusted to pay
 * from balances (pay-senders) is not by that alone trusted to charge the card it names for the user it
 * names. An instance of its own, whose card-pay senders leave out the tests' broker user.
 */
@QuarkusTest
@TestProfile(CardPaySendersTest.CardPaysFromAnotherService.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class CardPaySendersTest {

    private static final Duration WITHIN = Duration.ofSeconds(15);

    private final Database db = Database.forTests();

    @Test
    void aCardPayFromASenderAllowedOnlyBalancePaysIsDeadLetteredNeverCharged() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            Buyer buyer = Buyer.withBalance(5000);
            String user = buyer.userId();
            long order = buyer.newOrder(700);
            String byCard = "msg-" + UUID.randomUUID();
            String fromTheBalance = "msg-" + UUID.randomUUID();

            broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(byCard, replies, byCard),
                    "{\"type\":\"pay\",\"userId\":\"" + user + "\",\"orderId\":" + order + ",\"method\":\"card\",\"cardToken\":\"tok_visa\"}");
            GetResponse dead = broker.await(Broker.DEAD_LETTERS, m -> byCard.equals(m.getProps().getMessageId()), WITHIN);

            String reason = String.valueOf(dead.getProps().getHeaders().get(MessageSettlement.REASON_HEADER));
            assertTrue(reason.contains("sender " + Broker.USER + " may not send card pay commands"), reason);
            assertEquals(0, broker.messageCount(replies), "no reply for a command never heard");
            assertEquals("UNPAID", db.orderStatus(order));
            assertEquals(0, ProcessorSimulatorResource.simulator().charges().stream()
                    .filter(c -> c.reference().equals("order-" + order)).count(), "nothing reached the processor");

            broker.sendPay(fromTheBalance, replies, fromTheBalance, user, order);
            GetResponse paid = broker.await(replies, m -> fromTheBalance.equals(m.getProps().getCorrelationId()), WITHIN);
            assertEquals(201, ((Number) paid.getProps().getHeaders().get(MessageSettlement.STATUS_HEADER)).intValue(), Broker.text(paid));
            assertEquals(4300, db.balance(user), "the same sender still pays from balances");
        }
    }

    /** Card pays are another service's to send: the tests' broker user may send pay commands, but not by card. */
    public static final class CardPaysFromAnotherService implements QuarkusTestProfile {

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("payonce.commands.card-pay-senders", "payments-desk");
        }
    }
}
