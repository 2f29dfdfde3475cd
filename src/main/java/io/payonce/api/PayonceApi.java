package io.payonce.api;

import jakarta.ws.rs.core.Application;
import org.eclipse.microprofile.openapi.annotations.Components;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The API as a whole, for its OpenAPI document: the one problem schema every error answer refers to. */
@OpenAPIDefinition(
        info = @Info(title = "payonce", version = "1.0",
                description = "A payment service whose one promise is that a payment happens once."),
        components = @Components(schemas = @Schema(name = "Problem", implementation = Problem.class)))
public class PayonceApi extends Application {
}
