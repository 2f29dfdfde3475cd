package io.payonce.support;

import io.restassured.response.Response;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A replay is the first answer again, byte for byte: status, content type, Location and the raw body,
 * marked with Idempotent-Replayed: true, the one way payonce says that an answer repeats an earlier one.
 */
public final class Replays {

    private Replays() {
    }

    /** {@code replay} is marked as a replay and is {@code first} byte for byte. */
    public static void assertReplayOf(Response first, Response replay) {
        assertEquals("true", replay.header("Idempotent-Replayed"), "not marked as a replay: " + replay.asString());
        assertSameAnswer(first, replay);
    }

    /** Whether the answer says it repeats an earlier one. */
    public static boolean isRepeat(Response answer) {
        return "true".equals(answer.header("Idempotent-Replayed"));
    }

    /** The two answers are identical byte for byte, whichever of them was the replay. */
    public static void assertSameAnswer(Response first, Response other) {
        String both = "first: " + first.statusCode() + " " + first.asString() + "\nother: " + other.statusCode() + " " + other.asString();
        assertEquals(first.statusCode(), other.statusCode(), both);
        assertEquals(first.contentType(), other.contentType(), "Content-Type; " + both);
        assertEquals(first.header("Location"), other.header("Location"), "Location; " + both);
        assertArrayEquals(first.asByteArray(), other.asByteArray(), "body bytes; " + both);
    }
}
