package io.payonce.api;

import io.payonce.metrics.RepeatDefence;
import io.payonce.support.ApplicationClasses;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;
import org.junit.jupiter.api.Test;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every write endpoint of the application declares what makes a repeat harmless. A new POST, PUT,
 * PATCH or DELETE without {@link RepeatProtection} fails this test.
 */
class RepeatProtectionTest {

    private static final List<Class<? extends Annotation>> WRITES = List.of(POST.class, PUT.class, PATCH.class, DELETE.class);

    @Test
    void everyWriteEndpointDeclaresItsRepeatProtection() throws Exception {
        List<Method> writes = writeEndpoints(ApplicationClasses.all());

        List<String> undeclared = writes.stream().filter(m -> !declared(m)).map(RepeatProtectionTest::name).toList();

        System.out.printf("write endpoints checked: %d%n", writes.size());
        assertTrue(writes.size() >= 9, "found the application's write endpoints: " + writes.stream().map(RepeatProtectionTest::name).toList());
        assertEquals(List.of(), undeclared, "write endpoints without @RepeatProtection");
    }

    @Test
    void theCheckNoticesAnUndeclaredEndpoint() {
        List<Method> writes = writeEndpoints(List.of(UnprotectedResource.class));

        assertEquals(List.of("UnprotectedResource.transfer"), writes.stream().filter(m -> !declared(m)).map(RepeatProtectionTest::name).toList());
    }

    private static List<Method> writeEndpoints(List<Class<?>> classes) {
        List<Method> writes = new ArrayList<>();
        for (Class<?> type : classes) {
            // A REST client describes another service's API (the card processor's), not an endpoint of payonce.
            if (!type.isAnnotationPresent(Path.class) || type.isAnnotationPresent(RegisterRestClient.class)) {
                continue;
            }
            for (Method method : type.getDeclaredMethods()) {
                if (WRITES.stream().anyMatch(method::isAnnotationPresent)) {
                    writes.add(method);
                }
            }
        }
        return writes;
    }

    private static boolean declared(Method method) {
        RepeatProtection protection = method.getAnnotation(RepeatProtection.class);
        return protection != null && protection.value().length > 0;
    }

    private static String name(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName();
    }

    /** Endpoints of this test alone, left out of the API document. */
    @Path("/transfers")
    static class UnprotectedResource {
        @POST
        @Operation(hidden = true)
        public void transfer() {
        }

        @POST
        @Path("/safe")
        @RepeatProtection(RepeatDefence.IDEMPOTENCY_KEY)
        @Operation(hidden = true)
        public void safeTransfer() {
        }
    }
}
