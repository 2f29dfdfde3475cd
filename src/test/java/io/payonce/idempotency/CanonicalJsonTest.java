package io.payonce.idempotency;

import io.payonce.payment.card.SettlementRequest;
import io.payonce.payment.refund.RefundSettlementRequest;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class CanonicalJsonTest {

    record Transfer(String to, Long amount, String note) {
    }

    @Test
    void fieldOrderAndNullsDoNotChangeTheFingerprint() {
        Map<String, Object> reordered = new LinkedHashMap<>();
        reordered.put("amount", 100L);
        reordered.put("to", "bob");

        String fromRecord = CanonicalJson.of(new Transfer("bob", 100L, null));
        String fromMap = CanonicalJson.of(reordered);

        assertEquals("{\"amount\":100,\"to\":\"bob\"}", fromRecord);
        assertEquals(fromRecord, fromMap);
        assertEquals(Fingerprint.of("pay", "order:1", fromRecord), Fingerprint.of("pay", "order:1", fromMap));
    }

    /**
     * A settlement's key is fingerprinted by its body alone: what a request type answers beside its
     * fields (the claim it makes) must not change the fingerprint a stored key was written with.
     */
    @Test
    void anOperatorsClaimIsFingerprintedByItsBodyAlone() {
        assertEquals("{\"chargeId\":\"ch_1\",\"outcome\":\"charged\",\"reason\":\"seen at the processor\"}",
                CanonicalJson.of(new SettlementRequest(SettlementRequest.Outcome.CHARGED, "ch_1", "seen at the processor")));
        assertEquals("{\"acknowledged\":[\"re_9\"],\"outcome\":\"not_refunded\",\"reason\":\"none\"}",
                CanonicalJson.of(new RefundSettlementRequest(RefundSettlementRequest.Outcome.NOT_REFUNDED, null, "none", List.of("re_9"))));
    }

    @Test
    void anAbsentBodyIsTheEmptyObject() {
        assertEquals("{}", CanonicalJson.of(null));
    }

    @Test
    void operationAndTargetArePartOfTheFingerprint() {
        String body = CanonicalJson.of(new Transfer("bob", 100L, null));

        assertNotEquals(Fingerprint.of("pay", "order:1", body).sha256(), Fingerprint.of("pay", "order:2", body).sha256());
        assertNotEquals(Fingerprint.of("pay", "order:1", body).sha256(), Fingerprint.of("refund", "order:1", body).sha256());
    }

    @Test
    void namesTheFieldsThatDiffer() {
        String first = CanonicalJson.of(new Transfer("bob", 100L, "rent"));
        String second = CanonicalJson.of(new Transfer("bob", 200L, null));

        assertEquals(List.of("amount", "note"), CanonicalJson.differingFields(first, second));
    }
}
