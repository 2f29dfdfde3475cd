package io.payonce.api;

import io.payonce.support.ApplicationClasses;
import jakarta.annotation.security.DenyAll;
import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;
import org.junit.jupiter.api.Test;

import java.lang.annotation.Annotation;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Who may call each endpoint is declared on it (or its class): roles, or everyone. Everyone may
 * call exactly these: the problem pages, the dev-mode token (built in dev mode only) and the
 * processor's webhook, which its signature authenticates; the gateway routes these, and only
 * these, without a token. A new endpoint that declares nothing would be open to anyone: it fails here.
 */
class PublicEndpointsTest {

    private static final List<Class<? extends Annotation>> HTTP_METHODS = List.of(GET.class, POST.class, PUT.class, PATCH.class, DELETE.class);

    private static final Set<String> PUBLIC = Set.of(
            "DevTokenResource.token", "ProblemTypes.describe", "ProblemTypes.index", "WebhookResource.receive");

    @Test
    void everyEndpointSaysWhoMayCallItAndOnlyTheseAreOpenToEveryone() throws Exception {
        Set<String> undeclared = new TreeSet<>();
        Set<String> open = new TreeSet<>();
        for (Class<?> type : ApplicationClasses.all()) {
            if (!type.isAnnotationPresent(Path.class) || type.isAnnotationPresent(RegisterRestClient.class)) {
                continue;
            }
            for (Method method : type.getDeclaredMethods()) {
                if (HTTP_METHODS.stream().noneMatch(method::isAnnotationPresent)) {
                    continue;
                }
                String name = type.getSimpleName() + "." + method.getName();
                if (method.isAnnotationPresent(PermitAll.class) || (type.isAnnotationPresent(PermitAll.class) && !declaresRoles(method))) {
                    open.add(name);
                } else if (!declaresRoles(method) && !declaresRoles(type)) {
                    undeclared.add(name);
                }
            }
        }

        assertEquals(Set.of(), undeclared, "endpoints that say nothing of who may call them");
        assertEquals(PUBLIC, open);
    }

    private static boolean declaresRoles(AnnotatedElement element) {
        return element.isAnnotationPresent(RolesAllowed.class) || element.isAnnotationPresent(DenyAll.class);
    }
}
