package io.payonce.processor;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A processor key names one operation of one environment: the same fields always give the same key,
 * and any other field, however its text is cut between fields, another.
 */
class ProcessorKeysTest {

    private final ProcessorKeys keys = new ProcessorKeys("production");

    @Test
    void theSameChargeAlwaysHasTheSameKey() {
        String key = keys.charge("alice", "key-1", 42);

        assertEquals(key, new ProcessorKeys("production").charge("alice", "key-1", 42));
        // Pinned: a key must never change from one version of payonce to the next, or a retry after
        // an upgrade would meet no charge where its first send made one.
        assertEquals("po_DQsBTuJ8vyrWtq_B06t4FnwvB4X827LnQukscGy2Pgs", key);
    }

    @Test
    void everyFieldOfAChargeChangesItsKey() {
        String key = keys.charge("alice", "key-1", 42);

        assertNotEquals(key, keys.charge("bob", "key-1", 42));
        assertNotEquals(key, keys.charge("alice", "key-2", 42));
        assertNotEquals(key, keys.charge("alice", "key-1", 43));
        assertNotEquals(key, new ProcessorKeys("staging").charge("alice", "key-1", 42));
    }

    @Test
    void everyFieldOfARefundChangesItsKey() {
        String key = keys.refund("ops", "key-1", "ch_1", "r-1");

        assertEquals(key, keys.refund("ops", "key-1", "ch_1", "r-1"), "a retry names the same refund");
        assertNotEquals(key, keys.refund("support", "key-1", "ch_1", "r-1"));
        assertNotEquals(key, keys.refund("ops", "key-2", "ch_1", "r-1"));
        assertNotEquals(key, keys.refund("ops", "key-1", "ch_2", "r-1"), "refund r-1 of another charge, whatever its order's id");
        assertNotEquals(key, keys.refund("ops", "key-1", "ch_1", "r-2"));
        assertNotEquals(key, new ProcessorKeys("staging").refund("ops", "key-1", "ch_1", "r-1"));
    }

    /** Text moved from one field to its neighbour is another request, never the same key. */
    @Test
    void noTextMovedAcrossAFieldBoundaryGivesTheSameKey() {
        assertNotEquals(keys.charge("ab", "c", 1), keys.charge("a", "bc", 1));
        assertNotEquals(keys.charge("a", "b1", 2), keys.charge("a", "b", 12));
        assertNotEquals(keys.charge("a", "", 1), keys.charge("", "a", 1));
        assertNotEquals(new ProcessorKeys("ns-a").charge("lice", "k", 1), new ProcessorKeys("ns-").charge("alice", "k", 1));
        assertNotEquals(keys.refund("ops", "k", "ch_12", "3"), keys.refund("ops", "k", "ch_1", "23"));
    }

    /** A charge and a refund never share a key, whatever their fields. */
    @Test
    void aChargeAndARefundNeverShareAKey() {
        assertNotEquals(keys.charge("ops", "key-1", 7), keys.refund("ops", "key-1", "7", ""));
    }

    @Test
    void aKeyFitsTheColumnsAndTheProcessorsLimits() {
        String longest = "k".repeat(64);
        for (String key : List.of(keys.charge(longest, longest, Long.MAX_VALUE), keys.refund(longest, longest, "c".repeat(255), longest), keys.charge("", "", 0))) {
            assertEquals(46, key.length(), key);
            assertTrue(key.length() <= 64, key);
            assertTrue(key.matches("po_[A-Za-z0-9_-]{43}"), key);
        }
    }
}
