package io.payonce.idempotency;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The guard wraps a keyed write whole through six doors; what a caller's own transaction writes or
 * reads of a key goes through {@link KeyAnswers}. A seventh door would be a primitive slipping back
 * into the wrapper, where its callers could skip the counting, timing and logging the doors do once.
 */
class GuardDoorsTest {

    @Test
    void theGuardHasItsSixDoorsAndNoOther() {
        Set<String> doors = Arrays.stream(IdempotencyGuard.class.getDeclaredMethods())
                .filter(method -> Modifier.isPublic(method.getModifiers()) && !method.isSynthetic())
                .map(GuardDoorsTest::signature)
                .collect(Collectors.toCollection(TreeSet::new));

        assertEquals(Set.of("begin/3", "firstRead/3", "read/4", "run/2", "run/3", "run/4"), doors);
    }

    private static String signature(Method method) {
        return method.getName() + "/" + method.getParameterCount();
    }
}
