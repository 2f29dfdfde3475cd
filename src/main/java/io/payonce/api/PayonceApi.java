package io.payonce.api;

import io.payonce.errors.Problem;
import jakarta.ws.rs.core.Application;
import org.eclipse.microprofile.openapi.annotations.Components;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.servers.Server;
import org.eclipse.microprofile.openapi.annotations.servers.ServerVariable;

/**
 * The API as a whole, for its OpenAPI document: where it is served, and the one problem schema every
 * error answer refers to.
 */
@OpenAPIDefinition(
        info = @Info(title = "payonce", version = "1.0",
                description = "A payment service whose one promise is that a payment happens once. Every write answers a repeat "
                        + "the same way, whatever recognised it (the same Idempotency-Key, the same submit token, or the same natural "
                        + "key: an order number, a refund number, an account, a coupon, an order already in the state asked for): "
                        + "the first answer's status and Location, and the header Idempotent-Replayed: true, which a first answer "
                        + "never carries. Under the same key the replay is the stored answer, byte for byte."),
        servers = @Server(url = "{publicUrl}", description = "payonce, where the gateway serves it",
                variables = @ServerVariable(name = "publicUrl", defaultValue = "http://localhost:8080",
                        description = "The deployment's PAYONCE_PUBLIC_URL; a running instance serves its document with its own")),
        components = @Components(schemas = @Schema(name = "Problem", implementation = Problem.class)))
public class PayonceApi extends Application {
}
