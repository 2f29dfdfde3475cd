package io.payonce.client;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client's half of the promise, against a server that answers as scripted: what the client
 * sends again, under which key, after which answer, and what it tells its caller.
 */
class ClientRetriesTest {

    private static final String PAID = "{\"paymentId\":7,\"orderId\":3,\"amount\":1999,\"currency\":\"EUR\",\"method\":\"card\",\"phase\":\"SUCCEEDED\"}";
    private static final String UNKNOWN = PAID.replace("SUCCEEDED", "UNKNOWN");
    private static final RetryPolicy QUICK = new RetryPolicy(6, Duration.ofSeconds(10), Duration.ofSeconds(2), Duration.ofMillis(10),
            Duration.ofMillis(40));

    private final ScriptedServer server = new ScriptedServer();
    private final List<ClientListener.Attempt> attempts = new CopyOnWriteArrayList<>();
    private final List<Outcome<?>> outcomes = new CopyOnWriteArrayList<>();
    private final ClientListener listener = new ClientListener() {
        @Override
        public void attempted(Attempt attempt) {
            attempts.add(attempt);
        }

        @Override
        public void ended(String operation, Outcome<?> outcome) {
            outcomes.add(outcome);
        }
    };

    @AfterEach
    void stop() {
        server.close();
    }

    private PayonceClient client(RetryPolicy policy) {
        return new PayonceClient(List.of(server.address()), () -> "a-token", policy, listener);
    }

    /** The rule everything rests on: a retry that made a key of its own would be a second payment. */
    @Test
    void everyRetryCarriesTheOperationsOneKey() {
        server.thenNoAnswer()
                .then(503, problem(503, "DEPENDENCY_UNAVAILABLE"))
                .then(409, problem(409, "IDEMPOTENCY_KEY_IN_USE"))
                .then(409, problem(409, "PAYMENT_IN_PROGRESS"))
                .then(201, PAID);

        Outcome<Payment> paid = client(QUICK).payByCard(3, "tok_visa");

        Outcome.Succeeded<Payment> succeeded = assertInstanceOf(Outcome.Succeeded.class, paid);
        assertEquals(7, succeeded.value().id());
        assertEquals(5, server.received().size());
        assertTrue(server.received().stream().allMatch(request -> succeeded.key().equals(request.header("Idempotency-Key"))),
                "one key, the outcome's, on every request: " + server.received());
        assertTrue(server.received().stream().allMatch(request -> request.body().equals("{\"method\":\"card\",\"cardToken\":\"tok_visa\"}")));
        assertEquals(List.of(1, 2, 3, 4, 5), attempts.stream().map(ClientListener.Attempt::number).toList());
        assertEquals(List.of(paid), outcomes);
    }

    @Test
    void theCallersOwnKeyIsTheOneSent() {
        server.thenNoAnswer().then(201, PAID);

        Outcome<Payment> paid = client(QUICK).pay(3, "order-sn-1-pay");

        assertEquals("order-sn-1-pay", paid.key());
        assertEquals(List.of("order-sn-1-pay", "order-sn-1-pay"), server.received().stream().map(request -> request.header("Idempotency-Key")).toList());
    }

    /** A stored answer is the operation's outcome: sending it again would only be told the same. */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
            "402, INSUFFICIENT_FUNDS, Declined",
            "402, CARD_DECLINED, Declined",
            "404, ORDER_NOT_FOUND, Refused",
            "409, ILLEGAL_TRANSITION, Refused",
            "422, IDEMPOTENCY_KEY_REUSED, Refused",
            "400, VALIDATION_FAILED, Refused"})
    void aDefiniteAnswerIsNotSentAgain(int status, String code, String outcome) {
        server.then(status, problem(status, code));

        Outcome<Payment> answered = client(QUICK).pay(3);

        assertEquals(outcome, answered.getClass().getSimpleName());
        Problem problem = answered instanceof Outcome.Declined<Payment> declined ? declined.problem() : ((Outcome.Refused<Payment>) answered).problem();
        assertEquals(code, problem.code());
        assertEquals(status, problem.status());
        assertEquals(1, server.received().size(), "sent once");
    }

    @Test
    void aReplayedAnswerSaysSo() {
        server.then(201, PAID, Map.of("Idempotent-Replayed", "true"));

        Outcome.Succeeded<?> replayed = assertInstanceOf(Outcome.Succeeded.class, client(QUICK).pay(3));

        assertTrue(replayed.replayed());
    }

    /** payonce names how long to wait; a client that hammered a busy key would only keep it busy. */
    @Test
    void retryAfterIsWaited() {
        server.then(409, problem(409, "IDEMPOTENCY_KEY_IN_USE"), Map.of("Retry-After", "1")).then(201, PAID);

        client(QUICK).pay(3);

        long waitedMillis = Duration.ofNanos(server.received().get(1).nanos() - server.received().get(0).nanos()).toMillis();
        assertTrue(waitedMillis >= 1000, "the second request came " + waitedMillis + " ms after the first");
    }

    /**
     * A 202 is no failure: the card may have been charged. The client reads the payment until the
     * processor's outcome is known, then asks once more under the key for the answer every repeat gets.
     */
    @Test
    void a202IsFollowedUntilTheOutcomeIsKnownAndThenAnsweredUnderTheKey() {
        server.then(202, UNKNOWN, Map.of("Location", "/payments/7"))
                .then(200, UNKNOWN)
                .then(200, PAID)
                .then(201, PAID, Map.of("Idempotent-Replayed", "true"));

        Outcome<Payment> paid = client(QUICK).payByCard(3, "tok_visa");

        Outcome.Succeeded<Payment> succeeded = assertInstanceOf(Outcome.Succeeded.class, paid, paid.toString());
        assertEquals("SUCCEEDED", succeeded.value().phase());
        assertEquals(List.of("POST /orders/3/pay", "GET /payments/7", "GET /payments/7", "POST /orders/3/pay"),
                server.received().stream().map(request -> request.method() + " " + request.path()).toList());
        assertEquals(succeeded.key(), server.received().get(3).header("Idempotency-Key"));
    }

    /** Past the deadline the caller is told what is known: not yet, the key to resume with, and the payment's id. */
    @Test
    void anOutcomeStillUnknownAtTheDeadlineIsPendingWithTheKeyAndThePayment() {
        server.then(202, UNKNOWN, Map.of("Location", "/payments/7"));
        for (int read = 0; read < 200; read++) {
            server.then(200, UNKNOWN);
        }

        Outcome<Payment> unknown = client(QUICK.withDeadline(Duration.ofMillis(600)).withMaxAttempts(2)).payByCard(3, "tok_visa", "pay-sn-3");

        Outcome.Pending<Payment> pending = assertInstanceOf(Outcome.Pending.class, unknown, unknown.toString());
        assertEquals("pay-sn-3", pending.key());
        assertEquals(7L, pending.id());
        assertTrue(server.received().stream().filter(request -> request.method().equals("GET")).count() > 2,
                "reads of the payment are bounded by the deadline, not by the attempts: " + server.received().size());
    }

    @Test
    void attemptsAreBounded() {
        for (int answer = 0; answer < 10; answer++) {
            server.then(503, problem(503, "DEPENDENCY_UNAVAILABLE"));
        }

        Outcome<Payment> unknown = client(QUICK.withMaxAttempts(3)).pay(3);

        Outcome.Pending<Payment> pending = assertInstanceOf(Outcome.Pending.class, unknown);
        assertEquals("503 DEPENDENCY_UNAVAILABLE", pending.lastAnswer());
        assertEquals(3, server.received().size());
    }

    @Test
    void aRequestWithoutAnAnswerMovesToTheNextAddress() {
        try (ScriptedServer other = new ScriptedServer()) {
            server.thenNoAnswer().thenNoAnswer();
            other.thenNoAnswer().thenNoAnswer();
            PayonceClient client = new PayonceClient(List.of(server.address(), other.address()), () -> "a-token",
                    QUICK.withMaxAttempts(4), listener);

            assertInstanceOf(Outcome.Pending.class, client.pay(3));

            assertEquals(2, server.received().size());
            assertEquals(2, other.received().size());
            for (int each = 1; each < attempts.size(); each++) {
                assertTrue(!attempts.get(each).uri().getAuthority().equals(attempts.get(each - 1).uri().getAuthority()), "alternates: " + attempts);
            }
        }
    }

    @Test
    void anOrderFormTakesASubmitTokenAndCarriesItOnEveryRetry() {
        server.then(200, "{\"token\":\"st_1\",\"expiresInSeconds\":600}")
                .thenNoAnswer()
                .then(201, "{\"id\":3,\"orderSn\":\"sn-1\",\"amount\":1999,\"currency\":\"EUR\",\"status\":\"UNPAID\"}");

        Outcome<Order> created = client(QUICK).createOrder("sn-1", 1999, "EUR");

        Outcome.Succeeded<Order> order = assertInstanceOf(Outcome.Succeeded.class, created);
        assertEquals(3, order.value().id());
        assertEquals("st_1", order.key());
        assertEquals(List.of("st_1", "st_1"), server.received().subList(1, 3).stream().map(request -> request.header("Submit-Token")).toList());
        assertNotNull(server.received().get(1).header("Authorization"));
    }

    /** The caller's token goes to payonce's address only: a Location that leads elsewhere is not followed. */
    @Test
    void aLocationThatLeadsElsewhereIsNotFollowed() {
        try (ScriptedServer elsewhere = new ScriptedServer()) {
            server.then(202, UNKNOWN, Map.of("Location", elsewhere.address() + "/payments/7")).then(201, PAID);

            assertInstanceOf(Outcome.Succeeded.class, client(QUICK).payByCard(3, "tok_visa"));

            assertEquals(List.of(), elsewhere.received(), "nothing sent to " + elsewhere.address());
            assertEquals(List.of("POST", "POST"), server.received().stream().map(ScriptedServer.Received::method).toList());
        }
    }

    /** Nothing a caller passes reaches payonce as something else: a user id that would leave its path, a key the server would refuse. */
    @Test
    void aUserIdOrKeyPayonceWouldNotTakeIsRefusedBeforeAnythingIsSent() {
        PayonceClient client = client(QUICK);

        for (String userId : List.of("..", ".", "alice/../../orders/3/refunds", "alice?x=1", "", "a".repeat(65))) {
            assertThrows(IllegalArgumentException.class, () -> client.deposit(userId, 100, "EUR", "ref-1", "key-1"), userId);
        }
        for (String key : List.of("", "a b", "quote\"d", "line\nbreak", "k".repeat(65))) {
            assertThrows(IllegalArgumentException.class, () -> client.pay(3, key), key);
        }
        assertEquals(List.of(), server.received());
    }

    /**
     * Once a request may have paid, only an answer payonce stores under the key settles the pay: a
     * token that expired between two retries is no refusal of the payment, which may have happened.
     */
    @Test
    void aRefusalStoredNowhereAfterARequestThatMayHavePaidIsPendingNotRefused() {
        server.thenNoAnswer().then(401, problem(401, "UNAUTHENTICATED"));

        Outcome<Payment> unknown = client(QUICK).pay(3, "pay-sn-3");

        Outcome.Pending<Payment> pending = assertInstanceOf(Outcome.Pending.class, unknown, unknown.toString());
        assertEquals("pay-sn-3", pending.key());
        assertEquals("401 UNAUTHENTICATED", pending.lastAnswer());
    }

    @Test
    void aRecordedRefusalAfterARequestThatMayHavePaidSettlesIt() {
        server.thenNoAnswer().then(409, problem(409, "ILLEGAL_TRANSITION"));

        Outcome.Refused<?> refused = assertInstanceOf(Outcome.Refused.class, client(QUICK).pay(3));

        assertEquals("ILLEGAL_TRANSITION", refused.problem().code());
    }

    /** A 2xx that is not payonce's (a gateway's page) is as good as no answer: the pay is asked again, never taken for paid. */
    @Test
    void a2xxThatIsNotPayoncesIsSentAgain() {
        server.then(200, "<html>maintenance</html>").then(200, "{}").then(201, PAID);

        Outcome.Succeeded<Payment> paid = assertInstanceOf(Outcome.Succeeded.class, client(QUICK).pay(3));

        assertEquals(7, paid.value().id());
        assertEquals(3, server.received().size());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"408", "429"})
    void aGatewayThatTurnedTheRequestAwayForNowIsAskedAgain(int status) {
        server.then(status, "").then(201, PAID);

        assertInstanceOf(Outcome.Succeeded.class, client(QUICK).pay(3));
        assertEquals(2, server.received().size());
    }

    @Test
    void aRetryAfterBeyondTheDeadlineEndsTheCallPendingAndNothingElse() {
        server.then(409, problem(409, "PAYMENT_IN_PROGRESS"), Map.of("Retry-After", "99999999999999999"));

        Outcome<Payment> unknown = client(QUICK).pay(3, "pay-sn-3");

        assertEquals("409 PAYMENT_IN_PROGRESS", assertInstanceOf(Outcome.Pending.class, unknown).lastAnswer());
        assertEquals(1, server.received().size());
    }

    @Test
    void anInterruptedCallIsPendingWithItsKey() {
        server.then(201, PAID);
        Thread.currentThread().interrupt();
        Outcome<Payment> interrupted;
        try {
            interrupted = client(QUICK).pay(3, "pay-sn-3");
        } finally {
            Thread.interrupted();
        }

        assertEquals("pay-sn-3", assertInstanceOf(Outcome.Pending.class, interrupted, interrupted.toString()).key());
    }

    /** A listener's bug is the caller's, and never costs it the outcome or the key. */
    @Test
    void aListenerThatThrowsCostsNothing() {
        server.thenNoAnswer().then(201, PAID);
        ClientListener throwing = new ClientListener() {
            @Override
            public void attempted(Attempt attempt) {
                throw new IllegalStateException("a metrics registry that is not there");
            }
        };

        Outcome<Payment> paid = new PayonceClient(List.of(server.address()), () -> "a-token", QUICK, throwing).pay(3);

        assertInstanceOf(Outcome.Succeeded.class, paid);
    }

    /** A token the caller's supplier cannot give after the first request went out: the caller still gets the key. */
    @Test
    void aFailureOfTheCallersOwnAfterTheFirstRequestIsPendingWithTheKey() {
        server.thenNoAnswer();
        AtomicInteger asked = new AtomicInteger();
        Supplier<String> tokens = () -> {
            if (asked.incrementAndGet() > 1) {
                throw new IllegalStateException("the token service is down");
            }
            return "a-token";
        };

        Outcome<Payment> unknown = new PayonceClient(List.of(server.address()), tokens, QUICK, listener).pay(3, "pay-sn-3");

        assertEquals("pay-sn-3", assertInstanceOf(Outcome.Pending.class, unknown, unknown.toString()).key());
    }

    @Test
    void anAddressWithAPathKeepsIt() {
        server.then(201, PAID);

        new PayonceClient(URI.create(server.address() + "/payonce"), () -> "a-token").pay(3);

        assertEquals("/payonce/orders/3/pay", server.received().get(0).path());
    }

    private static String problem(int status, String code) {
        return "{\"type\":\"about:blank\",\"title\":\"t\",\"status\":" + status + ",\"code\":\"" + code + "\"}";
    }
}
