package io.payonce.api;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;

import java.util.List;

/**
 * Names the running instance's {@code payonce.public-url} as the server of the document it serves.
 * The document stored at build leaves the address a variable ({@link PayonceApi}): the build does not
 * know where it will be deployed.
 */
@OpenApiFilter(OpenApiFilter.RunStage.RUNTIME_STARTUP)
public class ServedAt implements OASFilter {

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        String publicUrl = ConfigProvider.getConfig().getValue("payonce.public-url", String.class);
        openAPI.setServers(List.of(OASFactory.createServer().url(publicUrl).description("payonce, where the gateway serves it")));
    }
}
