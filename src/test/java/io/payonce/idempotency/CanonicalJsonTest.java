package io.payonce.idempotency;

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
