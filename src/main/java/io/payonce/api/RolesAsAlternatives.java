package io.payonce.api;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.security.SecurityRequirement;

import java.util.ArrayList;
import java.util.List;

/**
 * States the roles an operation allows as roles: any one of them will do. Quarkus derives each
 * operation's security from {@code @RolesAllowed} as one requirement listing every role as a scope,
 * which OpenAPI reads as all of them required; here each role becomes a requirement of its own, the
 * alternatives OpenAPI offers, and the extension {@value #ROLES} lists them for a reader. An operation
 * that allows everyone (the problem pages) says so with an empty list, as linters expect.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class RolesAsAlternatives implements OASFilter {

    public static final String ROLES = "x-roles-any-of";

    @Override
    public Operation filterOperation(Operation operation) {
        if (operation.getSecurity() == null) {
            operation.setSecurity(new ArrayList<>());
            return operation;
        }
        List<SecurityRequirement> alternatives = new ArrayList<>();
        List<String> roles = new ArrayList<>();
        for (SecurityRequirement requirement : operation.getSecurity()) {
            requirement.getSchemes().forEach((scheme, scopes) -> {
                if (scopes == null || scopes.isEmpty()) {
                    alternatives.add(OASFactory.createSecurityRequirement().addScheme(scheme, List.of()));
                }
                for (String role : scopes == null ? List.<String>of() : scopes) {
                    alternatives.add(OASFactory.createSecurityRequirement().addScheme(scheme, List.of(role)));
                    roles.add(role);
                }
            });
        }
        operation.setSecurity(alternatives);
        if (!roles.isEmpty()) {
            operation.addExtension(ROLES, List.copyOf(roles));
        }
        return operation;
    }
}
