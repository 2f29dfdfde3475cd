package io.payonce.db;

import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code PAYONCE_DB_PIPELINED_PAY=false}, for a proxy that cannot pipeline or a database short of
 * connections: no second pool is opened, and a first pay runs one statement at a time.
 */
@QuarkusTest
@TestProfile(PipeliningOffTest.Off.class)
@ExtendWith(LedgerInvariants.class)
class PipeliningOffTest {

    private final Database db = Database.forTests();

    @Inject
    Pool shared;

    @Inject
    SessionSettingsPoolCreator pools;

    @Inject
    Meters meters;

    @Test
    void aFirstPayRunsOneStatementAtATimeWithNoPipelinedPoolOpened() {
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        double attemptsBefore = meters.count(PipelinedMeter.NAME);

        Response answer = payer.pay();

        assertEquals(201, answer.statusCode(), answer.asString());
        assertEquals(1, db.payments(payer.order()));
        assertEquals(3500, db.balance(payer.userId()));
        assertEquals(attemptsBefore, meters.count(PipelinedMeter.NAME), "no pipelined attempt");
        assertTrue(pools.pipelinedBeside(shared).isEmpty(), "no pipelined pool");
    }

    public static final class Off implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("payonce.database.pipelined-pay", "false");
        }
    }
}
