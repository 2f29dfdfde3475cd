package io.payonce.payment.refund;

import io.payonce.api.ApiExamples;
import io.payonce.api.KeyHeader;
import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.errors.Problem;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.WriteOperation;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.metrics.RepeatDefence.IDEMPOTENCY_KEY;
import static io.payonce.metrics.RepeatDefence.STATE_CAS;
import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/** HTTP for refunding a paid order, behind an Idempotency-Key. */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "payments")
public class RefundResource {

    private final RefundService refunds;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;

    RefundResource(RefundService refunds, IdempotencyGuard guard, CallerIdentity callers) {
        this.refunds = refunds;
        this.guard = guard;
        this.callers = callers;
    }

    @POST
    @Path("/{id}/refunds")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({IDEMPOTENCY_KEY, UNIQUE_INDEX, STATE_CAS})
    @Operation(operationId = "refundOrder", summary = "Refund part or all of a paid order (ops)",
            description = "A refund is an act of support or of the merchant's after-sales service: a caller with the user role alone "
                    + "gets 403. The money goes back where it came from: to the buyer's balance for a balance payment, to the card "
                    + "through the processor for a card payment. The sum of refunds never exceeds the payment, refunds to the card still "
                    + "in flight included; the order becomes REFUNDED once refunds of the full amount have succeeded. "
                    + "A refund number refunds once: repeating it, under any key, answers with the first refund and Idempotent-Replayed: true.")
    @APIResponse(responseCode = "201", description = "The refund: made by this request, or, with Idempotent-Replayed: true, by an earlier one",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundView.class),
                    examples = @ExampleObject(name = "half refunded", value = ApiExamples.REFUND)))
    @APIResponse(responseCode = "202", description = "A refund to the card whose outcome is not known: the processor's answer was lost. "
            + "Location names the refund (ops read it there); its phase is UNKNOWN until the recovery job learns the outcome from the "
            + "processor. Resending the same request with the same key resumes it and answers 201 or 402 once the outcome is known",
            headers = @Header(name = "Location", description = "/refunds/{refundId}", schema = @Schema(type = SchemaType.STRING, maxLength = 28)),
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundView.class),
                    examples = @ExampleObject(name = "outcome unknown", value = ApiExamples.REFUND_UNKNOWN)))
    @APIResponse(responseCode = "402", description = "REFUND_FAILED (recorded under the key): the processor refused or failed the refund to "
            + "the card; nothing was refunded, the amount is refundable again, and the refund number is spent",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(ref = "Problem"),
                    examples = @ExampleObject(name = "the card cannot be refunded", value = ApiExamples.REFUND_FAILED)))
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED (refundNo, amount) or MALFORMED_REQUEST; nothing is recorded")
    @APIResponse(responseCode = "404", description = "ORDER_NOT_FOUND (recorded under the key): no order has this id")
    @APIResponse(responseCode = "409", description = "REFUND_EXCEEDS_PAYMENT (with refundable, the amount left), REFUND_NO_CONFLICT, ILLEGAL_TRANSITION or CHARGE_NOT_RECORDED (the card was charged under an id payonce could not keep: refund it at the processor) (recorded); "
            + "CARD_PAYMENT_PENDING or REFUND_PENDING (a refund to the card with this refund number waits for "
            + "its processor; retry after Retry-After with the same key)")
    public Uni<Response> refund(
            @PathParam("id") long id,
            @BeanParam KeyHeader key,
            @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundRequest.class),
                    examples = @ExampleObject(name = "half of 19.99", value = ApiExamples.REFUND_REQUEST)))
            @Valid @NotNull RefundRequest request) {
        return refunds.refund(callers.current(), key.read(guard, WriteOperation.REFUND, id), id, request).map(Responses::of);
    }
}
