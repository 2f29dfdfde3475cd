package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Refunds of card payments by command, through the same refund service as over HTTP: the reply is
 * the HTTP answer's status and body, a lost processor answer a 202 with the refund's location that a
 * resend of the same message-id follows to the refund's outcome. Real RabbitMQ, real MariaDB, the
 * processor simulator over HTTP.
 */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class CardRefundCommandTest {

    private static final Duration WITHIN = Duration.ofSeconds(15);
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(20);

    private final Database db = Database.forTests();

    @AfterEach
    void heal() {
        processor().heal();
    }

    @Test
    void aRefundCommandForACardPaymentRefundsTheCardOnce() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
            String key = "msg-" + UUID.randomUUID();
            String refund = refundCommand(order, "r-1", 400);

            GetResponse refunded = sendUntilDefinite(broker, key, replies, refund);
            GetResponse again = send(broker, key, replies, refund);

            assertEquals(201, Replies.status(refunded), Broker.text(refunded));
            JsonPath view = JsonPath.from(Broker.text(refunded));
            assertEquals("card", view.getString("method"));
            assertEquals("SUCCEEDED", view.getString("phase"));
            assertEquals(Broker.text(refunded), Broker.text(again), "the resend gets the first answer");
            assertEquals(1, processor().refunds().stream().filter(r -> r.key().equals(processorKey(view.getLong("refundId")))).count());
            assertEquals(400, db.refundedAmount(order));
        }
    }

    /** The processor refunded the card and its answer was lost: 202 with the refund's location; the same message-id sent again gets its outcome. */
    @Test
    void aLostProcessorAnswerIsReplied202WithTheLocationAndAResendGetsTheRefund() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            long order = Buyer.withBalance(0).paidByCard(700, "tok_visa");
            String key = "msg-" + UUID.randomUUID();
            String refund = refundCommand(order, "r-1", 700);
            processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);

            GetResponse accepted = send(broker, key, replies, refund);

            assertEquals(202, Replies.status(accepted), Broker.text(accepted));
            long refundId = JsonPath.from(Broker.text(accepted)).getLong("refundId");
            assertEquals("UNKNOWN", JsonPath.from(Broker.text(accepted)).getString("phase"));
            assertEquals("/refunds/" + refundId, String.valueOf(accepted.getProps().getHeaders().get(MessageSettlement.LOCATION_HEADER)));
            GetResponse settled = sendUntilDefinite(broker, key, replies, refund);
            assertEquals(201, Replies.status(settled), Broker.text(settled));
            assertEquals(refundId, JsonPath.from(Broker.text(settled)).getLong("refundId"), "the same refund");
            assertEquals(1, processor().refundRequestsUnder(processorKey(refundId)), "looked up, never sent again");
            assertEquals("REFUNDED", db.orderStatus(order));
        }
    }

    private static String refundCommand(long order, String refundNo, long amount) {
        return "{\"type\":\"refund\",\"orderId\":" + order + ",\"refundNo\":\"" + refundNo + "\",\"amount\":" + amount + "}";
    }

    private static GetResponse send(Broker broker, String key, String replies, String body) throws Exception {
        String correlation = UUID.randomUUID().toString();
        broker.publish(Broker.COMMANDS, "refund", Broker.commandProperties(key, replies, correlation), body);
        return broker.await(replies, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);
    }

    /** Sends the command again under its message-id while its reply is a 202 or a 409 to come back later. */
    private static GetResponse sendUntilDefinite(Broker broker, String key, String replies, String body) {
        return Await.until(() -> send(broker, key, replies, body), reply -> Replies.status(reply) != 202 && Replies.status(reply) != 409, RECOVERY_BOUND,
                "a definite reply to the refund command sent again");
    }

    private static String processorKey(long refund) {
        return Api.as(Tokens.ops()).get("/refunds/" + refund).jsonPath().getString("processorKey");
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
