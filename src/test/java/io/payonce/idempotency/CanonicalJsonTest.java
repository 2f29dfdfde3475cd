package io.payonce.idempotency;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class CanonicalJsonTest {

    private final CanonicalJson canonical = new CanonicalJson();

    record Transfer(String to, Long amount, String note) {
    }

    @Test
    void fieldOrderAndNullsDoNotChangeTheFingerprint() {
        Map<String, Object> reordered = new LinkedHashMap<>();
        reordered.put("amount", 100L);
        reordered.put("to", "bob");

        String fromRecord = canonical.of(new Transfer("bob", 100L, null));
        String fromMap = canonical.of(reordered);

        assertEquals("{\"amount\":100,\"to\":\"bob\"}", fromRecord);
        assertEquals(fromRecord, fromMap);
        assertEquals(Fingerprint.of("pay", "order:1", fromRecord), Fingerprint.of("pay", "order:1", fromMap));
    }

    @Test
    void anAbsentBodyIsTheEmptyObject() {
        assertEquals("{}", canonical.of(null));
    }

    @Test
    void operationAndTargetArePartOfTheFingerprint() {
        String body = canonical.of(new Transfer("bob", 100L, null));

        assertNotEquals(Fingerprint.of("pay", "order:1", body).sha256(), Fingerprint.of("pay", "order:2", body).sha256());
        assertNotEquals(Fingerprint.of("pay", "order:1", body).sha256(), Fingerprint.of("refund", "order:1", body).sha256());
    }

    @Test
    void namesTheFieldsThatDiffer() {
        String first = canonical.of(new Transfer("bob", 100L, "rent"));
        String second = canonical.of(new Transfer("bob", 200L, null));

        assertEquals(List.of("amount", "note"), canonical.differingFields(first, second));
    }
}
