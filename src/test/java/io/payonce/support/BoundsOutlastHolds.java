package io.payonce.support;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;

/**
 * For the tests that hold what payonce waits for while they set a race up: a row lock from a session
 * of their own ({@link RowHolder}), a statement stopped at a trigger of theirs on a {@link UserLock}
 * (shut {@link UserLock#GATE_SECONDS} at most, less than this lock wait), or a call the processor simulator
 * keeps in flight until they release it. payonce's bounds outlast the hold, so that what waits is
 * still waiting, in the same statement or the same call, when the test lets go. The test profile's
 * bounds (a lock wait of 1 s, then a retry; 2 s a statement; a processor call given up after 1 s)
 * would let go first on a slow machine, and the race the test judged would not be the one it set up.
 * One profile for all of them, so that Quarkus starts it once. Quarkus reads {@code @TestProfile} from
 * the test class itself, not from its superclass: a subclass run elsewhere (an {@code *IT} against the
 * packaged app, an {@code *OnRedisClusterTest}) needs these bounds of its own.
 */
public final class BoundsOutlastHolds implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("payonce.processor.timeout", "30s",
                "payonce.database.lock-wait-timeout-seconds", "20",
                "payonce.database.statement-timeout-seconds", "30");
    }
}
