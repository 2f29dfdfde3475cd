package io.payonce.client;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client against payonce itself: its MariaDB, Redis and the processor simulator, over real HTTP. */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class PayonceClientTest {

    @TestHTTPResource("/")
    URI payonce;

    private final Database db = Database.forTests();
    private final ExecutorService callers = Executors.newFixedThreadPool(2);

    @AfterEach
    void heal() {
        callers.shutdownNow();
        processor().heal();
    }

    private PayonceClient clientOf(Buyer buyer, RetryPolicy policy) {
        return new PayonceClient(List.of(payonce), buyer::bearer, policy, ClientListener.NONE);
    }

    @Test
    void aPayRepeatedUnderItsKeyIsOnePaymentAndOneDebit() {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1999);
        PayonceClient client = clientOf(buyer, RetryPolicy.DEFAULT);

        Outcome.Succeeded<Payment> first = assertInstanceOf(Outcome.Succeeded.class, client.pay(order, "pay-" + order));
        Outcome.Succeeded<Payment> repeat = assertInstanceOf(Outcome.Succeeded.class, client.pay(order, "pay-" + order));

        assertEquals(first.value(), repeat.value());
        assertTrue(repeat.replayed() && !first.replayed());
        assertEquals(3001, db.balance(buyer.userId()));
    }

    /**
     * Two clicks under one key, the first held mid-pay (its debit waits for the account row the test
     * holds): the second is told its twin is in flight, waits as told, and then gets the first's payment.
     */
    @Test
    void aDoubleClickIsOnePayment() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1999);
        List<String> answers = new CopyOnWriteArrayList<>();
        PayonceClient client = new PayonceClient(List.of(payonce), buyer::bearer, RetryPolicy.DEFAULT, new ClientListener() {
            @Override
            public void attempted(Attempt attempt) {
                answers.add(attempt.status() + " " + attempt.body());
            }
        });
        String key = PayonceClient.newKey();
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);

        CompletableFuture<Outcome<Payment>> one = CompletableFuture.supplyAsync(() -> client.pay(order, key), callers);
        db.awaitDebitWaitingFor(buyer.userId());
        CompletableFuture<Outcome<Payment>> other = CompletableFuture.supplyAsync(() -> client.pay(order, key), callers);
        // Its twin in flight, the second click is told so (the key in use, or the order being paid) and waits as told.
        Await.until(() -> answers.stream().anyMatch(answer -> answer.contains("IDEMPOTENCY_KEY_IN_USE") || answer.contains("PAYMENT_IN_PROGRESS")),
                Duration.ofSeconds(10), "the second click told its twin is in flight: " + answers);
        release.complete(null);
        rowReleased.get(10, TimeUnit.SECONDS);

        Outcome.Succeeded<?> oneClick = assertInstanceOf(Outcome.Succeeded.class, one.get(30, TimeUnit.SECONDS));
        Outcome.Succeeded<?> otherClick = assertInstanceOf(Outcome.Succeeded.class, other.get(30, TimeUnit.SECONDS));
        assertEquals(oneClick.value(), otherClick.value());
        assertEquals(3001, db.balance(buyer.userId()));
    }

    @Test
    void aPayWithoutTheMoneyIsDeclinedAndAnotherUsersOrderRefused() {
        Buyer poor = Buyer.withBalance(100);
        long order = poor.newOrder(1999);

        Outcome.Declined<Payment> declined = assertInstanceOf(Outcome.Declined.class, clientOf(poor, RetryPolicy.DEFAULT).pay(order));
        Outcome.Refused<Payment> refused = assertInstanceOf(Outcome.Refused.class, clientOf(Buyer.withBalance(5000), RetryPolicy.DEFAULT).pay(order));

        assertEquals("INSUFFICIENT_FUNDS", declined.problem().code());
        assertEquals("ORDER_NOT_FOUND", refused.problem().code());
    }

    /**
     * The processor answers nothing (its charge request held): payonce answers 202, the client reads
     * the payment until its deadline and says "not known yet", with the key and the payment. Once the
     * processor answers, the same call with the same key is told the payment, and the processor holds one charge.
     */
    @Test
    void aCardPayWhoseProcessorAnswersNothingIsPendingThenPaidUnderTheSameKey() {
        Buyer buyer = Buyer.withBalance(0);
        long order = buyer.newOrder(1999);
        processor().failNextChargeOf(order, ProcessorSimulator.Fault.HELD);

        Outcome<Payment> unknown = clientOf(buyer, RetryPolicy.DEFAULT.withDeadline(Duration.ofSeconds(4))).payByCard(order, "tok_visa");

        Outcome.Pending<Payment> pending = assertInstanceOf(Outcome.Pending.class, unknown, unknown.toString());
        assertTrue(pending.id() != null && processor().heldChargesOf(order) >= 1, pending + ": the payment is named and its charge held");
        processor().release(order);

        Outcome<Payment> later = clientOf(buyer, RetryPolicy.DEFAULT).payByCard(order, "tok_visa", pending.key());

        Outcome.Succeeded<Payment> paid = assertInstanceOf(Outcome.Succeeded.class, later, later.toString());
        assertEquals(pending.id(), paid.value().id());
        assertEquals("SUCCEEDED", paid.value().phase());
        assertEquals(1, processor().charges().stream().filter(charge -> charge.reference().equals("order-" + order)).count(), "one charge");
        assertEquals("PAID", db.orderStatus(order));
    }

    @Test
    void anOperatorRefundsAndReadsItBack() {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.paidOrder(1999);
        PayonceClient operator = new PayonceClient(payonce, Tokens::ops);

        Outcome.Succeeded<Refund> refunded = assertInstanceOf(Outcome.Succeeded.class, operator.refund(order, "r-" + order, 500));
        Outcome.Succeeded<Refund> read = assertInstanceOf(Outcome.Succeeded.class, operator.readRefund(refunded.value().id()));

        assertEquals(refunded.value(), read.value());
        assertEquals(3501, db.balance(buyer.userId()));
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
