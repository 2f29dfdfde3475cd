package io.payonce.webhook;

import io.payonce.api.RepeatProtection;
import io.payonce.errors.Problem;
import io.payonce.idempotency.Answer;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.metrics.RepeatDefence.STATE_CAS;
import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/**
 * HTTP for the processor's webhook events. No bearer token: the processor has none of the gateway's,
 * and its signature is what authenticates a delivery, so this one path is public and the gateway
 * routes it without authentication.
 */
@Path("/processor/webhooks")
@Tag(name = "processor")
public class WebhookResource {

    private final ProcessorWebhooks webhooks;

    WebhookResource(ProcessorWebhooks webhooks) {
        this.webhooks = webhooks;
    }

    @POST
    @PermitAll
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    @RepeatProtection({UNIQUE_INDEX, STATE_CAS})
    @Operation(operationId = "receiveProcessorEvent", summary = "Receive a webhook event of the card processor (the processor only, by signature)",
            description = "Verifies the signature, records the event once by its id, and applies it: a charge.succeeded or charge.failed settles "
                    + "the card payment made under the charge's key, a refund.succeeded or refund.failed the refund to the card made under "
                    + "the refund's key, if it has no outcome yet, with the same checks as a lookup at the processor. A delivery of an event "
                    + "already recorded changes nothing and is answered 200 with the first outcome.")
    @APIResponse(responseCode = "200", description = "Recorded, now or (Idempotent-Replayed: true) by an earlier delivery; "
            + "outcome says what it did", content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = WebhookReceipt.class)))
    @APIResponse(responseCode = "400", description = "WEBHOOK_SIGNATURE_INVALID (missing, malformed, not matching or stale) or MALFORMED_REQUEST "
            + "(an event payonce cannot read); nothing is recorded", content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(ref = "Problem")))
    public Uni<Response> receive(
            @Parameter(description = "t=<Unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\"> (v1 repeated while a secret is rolled over)",
                    required = true, schema = @Schema(type = SchemaType.STRING, maxLength = 1024))
            @HeaderParam(WebhookSignature.HEADER) String signature,
            @RequestBody(required = true, content = @Content(mediaType = MediaType.APPLICATION_JSON,
                    schema = @Schema(implementation = ProcessorEventBody.class))) byte[] body) {
        return webhooks.receive(signature, body).map(WebhookResource::answer);
    }

    private static Response answer(ProcessorWebhooks.Delivery delivery) {
        Response.ResponseBuilder response = Response.ok(new WebhookReceipt(delivery.event().id(), delivery.effect().outcome().name()),
                MediaType.APPLICATION_JSON);
        if (delivery.repeat()) {
            response.header(Answer.REPLAYED_HEADER, "true");
        }
        return response.build();
    }
}
