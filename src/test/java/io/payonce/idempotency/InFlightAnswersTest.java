package io.payonce.idempotency;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.RedisCli;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Each "a twin is in flight" answer, forced by holding what the twin would hold: the order's pay
 * lock in Redis, or the key's claim row in the database. Each is a 409 with Retry-After that is
 * never stored under the key, so that once the twin lets go the same key executes afresh.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class InFlightAnswersTest {

    private final Database db = Database.forTests();

    @Test
    void aPayWhileAnotherHoldsTheOrdersLockIsPaymentInProgressAndNotRecorded() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.newOrder(300);
        String key = Api.newKey();
        String lock = RedisCli.payLockKey(order);
        assertEquals("OK", RedisCli.run("SET", lock, "someone-else", "PX", "5000"));

        Response inFlight = Api.pay(buyer.bearer(), order, key);

        assertInFlightAnswer(inFlight, "PAYMENT_IN_PROGRESS");
        assertEquals("someone-else", RedisCli.run("GET", lock), "the lock is left to its holder");
        assertEquals(0, records(buyer.userId(), key), "nothing is stored under the key");
        assertEquals(0, db.payments(order));
        assertEquals(1000, db.balance(buyer.userId()));

        assertEquals("1", RedisCli.run("DEL", lock));
        Response afresh = Api.pay(buyer.bearer(), order, key);

        assertExecuted(afresh);
        assertNull(afresh.header("Idempotent-Replayed"));
        assertEquals(1, db.payments(order));
        assertEquals(700, db.balance(buyer.userId()));
        assertEquals(1, doneRecords(buyer.userId(), key));
    }

    @Test
    void aCreateWhileAnotherHoldsTheKeysClaimIsKeyInUseAndNotRecorded() throws SQLException {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String key = Api.newKey();
        String sn = "sn-" + UUID.randomUUID();

        Response inFlight;
        try (HeldClaim twin = HeldClaim.of(user, key)) {
            inFlight = createWithKey(bearer, key, sn);
        }

        assertInFlightAnswer(inFlight, "IDEMPOTENCY_KEY_IN_USE");
        assertEquals(0, records(user, key), "nothing is stored under the key");
        assertEquals(0, orders(user));

        Response afresh = createWithKey(bearer, key, sn);

        assertExecuted(afresh);
        assertEquals(1, orders(user));
        assertEquals(1, doneRecords(user, key));
    }

    @Test
    void aSubmitWhileAnotherHoldsTheTokensClaimIsTokenInUseAndNotRecorded() throws SQLException {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);
        String sn = "sn-" + UUID.randomUUID();
        String key = submissionKey(token);

        Response inFlight;
        try (HeldClaim twin = HeldClaim.of(user, key)) {
            inFlight = Api.createOrder(bearer, token, sn, 500);
        }

        assertInFlightAnswer(inFlight, "SUBMIT_TOKEN_IN_USE");
        assertEquals(0, records(user, key), "nothing is stored under the submission's key");
        assertEquals(0, orders(user));

        Response afresh = Api.createOrder(bearer, token, sn, 500);

        assertExecuted(afresh);
        assertEquals(sn, afresh.jsonPath().getString("orderSn"));
        assertEquals(1, orders(user));
        assertEquals(1, doneRecords(user, key));
    }

    /** The key a submit token stands for, as OrderService derives it: a digest, so that no record holds a token. */
    private static String submissionKey(String token) {
        return Fingerprint.of("submit-token", "", token).sha256();
    }

    private static void assertInFlightAnswer(Response response, String code) {
        assertEquals(409, response.statusCode(), response.asString());
        assertEquals(code, response.jsonPath().getString("code"), response.asString());
        assertNotNull(response.header("Retry-After"), "an in-flight answer says when to retry");
        assertNull(response.header("Idempotent-Replayed"));
    }

    private static void assertExecuted(Response response) {
        assertEquals(201, response.statusCode(), response.asString());
        assertNull(response.header("Idempotent-Replayed"), "executed afresh, not replayed");
    }

    private static Response createWithKey(String bearer, String key, String sn) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("orderSn", sn, "amount", 500, "currency", "EUR")).post("/orders");
    }

    private long records(String scope, String key) {
        return db.count("SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND idem_key = ?", scope, key);
    }

    private long doneRecords(String scope, String key) {
        return db.count("SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND idem_key = ? AND status = 'DONE'", scope, key);
    }

    private long orders(String user) {
        return db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user);
    }

    /**
     * A twin's claim on a create-order key, inserted and left uncommitted in a session of its own: a
     * request with the same key waits on the row for the lock wait (1 s in tests), then answers that
     * the key is in use. Closing rolls the claim back, as a twin that died before COMMIT would.
     */
    private static final class HeldClaim implements AutoCloseable {

        private final Connection connection;

        private HeldClaim(Connection connection) {
            this.connection = connection;
        }

        static HeldClaim of(String scope, String key) throws SQLException {
            Connection connection = Database.forTests().connect();
            try {
                connection.setAutoCommit(false);
                Fingerprint fingerprint = Fingerprint.of("create-order", "orders", "{}");
                try (PreparedStatement claim = connection.prepareStatement("""
                        INSERT INTO idempotency_record (scope, idem_key, operation, target, fingerprint, request_body, status)
                        VALUES (?, ?, ?, ?, ?, ?, 'PROCESSING')""")) {
                    claim.setString(1, scope);
                    claim.setString(2, key);
                    claim.setString(3, fingerprint.operation());
                    claim.setString(4, fingerprint.target());
                    claim.setString(5, fingerprint.sha256());
                    claim.setString(6, fingerprint.canonicalRequest());
                    claim.executeUpdate();
                }
                return new HeldClaim(connection);
            } catch (SQLException e) {
                connection.close();
                throw e;
            }
        }

        @Override
        public void close() throws SQLException {
            try {
                connection.rollback();
            } finally {
                connection.close();
            }
        }
    }
}
