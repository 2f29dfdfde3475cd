package io.payonce.api;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;

import java.util.List;

/**
 * Names the running instance's {@code payonce.public-url} as the server of the document it serves.
 * A production build does not know where it will be deployed: the document it stores keeps the
 * address a variable ({@link PayonceApi}), since Quarkus stores the document without a start-time
 * filter that fails at build. A build that knows the address (dev, tests) stores it filled in.
 */
@OpenApiFilter(OpenApiFilter.RunStage.RUNTIME_STARTUP)
public class ServedAt implements OASFilter {

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        serveAt(openAPI, ConfigProvider.getConfig().getValue("payonce.public-url", String.class));
    }

    /**
     * The address as the problem types name it ({@link ProblemTypeUris#normalised}): a generated client
     * appends each path to it, so a trailing slash as configured would make {@code …/payonce//orders}.
     */
    static void serveAt(OpenAPI openAPI, String publicUrl) {
        openAPI.setServers(List.of(OASFactory.createServer().url(ProblemTypeUris.normalised(publicUrl))
                .description("payonce, where the gateway serves it")));
    }
}
