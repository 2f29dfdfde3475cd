package io.payonce.payment;

import io.payonce.api.ApiExamples;
import io.payonce.api.ApiException;
import io.payonce.api.ErrorCode;
import io.payonce.api.Problem;
import io.payonce.api.RepeatProtection;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.WriteOperation;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.api.RepeatProtection.Mechanism.IDEMPOTENCY_KEY;
import static io.payonce.api.RepeatProtection.Mechanism.REDIS_LOCK;
import static io.payonce.api.RepeatProtection.Mechanism.STATE_CAS;
import static io.payonce.api.RepeatProtection.Mechanism.UNIQUE_INDEX;

/** HTTP for moving money on an order: paying it and refunding it. */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "payments")
@APIResponse(responseCode = "400", description = "IDEMPOTENCY_KEY_MISSING, IDEMPOTENCY_KEY_INVALID, VALIDATION_FAILED, MALFORMED_REQUEST or "
        + "BODY_NOT_ALLOWED (a body sent to pay); nothing is recorded")
@APIResponse(responseCode = "404", description = "ORDER_NOT_FOUND (recorded under the key), also for another user's order")
@APIResponse(responseCode = "422", description = "IDEMPOTENCY_KEY_REUSED: the key was first used for another request; names the fields that differ")
public class PaymentResource {

    private final PaymentService payments;
    private final RefundService refunds;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;

    PaymentResource(PaymentService payments, RefundService refunds, IdempotencyGuard guard, CallerIdentity callers) {
        this.payments = payments;
        this.refunds = refunds;
        this.guard = guard;
        this.callers = callers;
    }

    @POST
    @Path("/{id}/pay")
    @RolesAllowed(Caller.USER)
    @RepeatProtection({IDEMPOTENCY_KEY, REDIS_LOCK, STATE_CAS, UNIQUE_INDEX})
    @Operation(summary = "Pay an order from the owner's account, once (the owner only)",
            description = "Charges the order's amount; the request has no body. Only the order's owner may pay it, whatever other "
                    + "roles the caller holds: for anyone else the order does not exist (404). Retries must reuse the Idempotency-Key: they get the first answer "
                    + "back with Idempotent-Replayed: true. Another key for a paid order is a repeat too: 201 with the order's payment and "
                    + "Idempotent-Replayed: true.")
    @APIResponse(responseCode = "201", description = "The order's payment: made by this request, or, with Idempotent-Replayed: true, by an earlier one",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PaymentView.class),
                    examples = @ExampleObject(name = "paid", value = ApiExamples.PAYMENT)))
    @APIResponse(responseCode = "402", description = "INSUFFICIENT_FUNDS (recorded under the key; pay again with a new key after a deposit)",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(ref = "Problem"),
                    examples = @ExampleObject(name = "the balance is short", value = ApiExamples.INSUFFICIENT_FUNDS)))
    @APIResponse(responseCode = "409", description = "PAYMENT_IN_PROGRESS or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After with the same key); "
            + "ILLEGAL_TRANSITION or CURRENCY_MISMATCH (recorded)")
    public Uni<Response> pay(
            @PathParam("id") long id,
            @Parameter(description = "1-64 visible ASCII characters, bare or quoted; reuse it on every retry", required = true) @HeaderParam(IdempotencyKey.HEADER) String key,
            @RequestBody(description = "None: the amount is the order's, and a body is refused with 400 BODY_NOT_ALLOWED") byte[] body,
            @Context UriInfo uri) {
        Caller caller = callers.current();
        KeyedRequest request = guard.read(WriteOperation.PAY, id, key, uri.getPath());
        if (body != null && body.length > 0) {
            throw new ApiException(ErrorCode.BODY_NOT_ALLOWED);
        }
        return payments.pay(caller, id, request).map(Answer::toResponse);
    }

    @POST
    @Path("/{id}/refunds")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({IDEMPOTENCY_KEY, UNIQUE_INDEX, STATE_CAS})
    @Operation(summary = "Refund part or all of a paid order (ops)",
            description = "A refund is an act of support or of the merchant's after-sales service: a caller with the user role alone "
                    + "gets 403. The sum of refunds never exceeds the payment; the order becomes REFUNDED at the full amount. "
                    + "A refund number refunds once: repeating it, under any key, answers with the first refund and Idempotent-Replayed: true.")
    @APIResponse(responseCode = "201", description = "The refund: made by this request, or, with Idempotent-Replayed: true, by an earlier one",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundView.class),
                    examples = @ExampleObject(name = "half refunded", value = ApiExamples.REFUND)))
    @APIResponse(responseCode = "409", description = "REFUND_EXCEEDS_PAYMENT (with refundable, the amount left), REFUND_NO_CONFLICT or ILLEGAL_TRANSITION (recorded); "
            + "IDEMPOTENCY_KEY_IN_USE (retry after Retry-After)")
    public Uni<Response> refund(
            @PathParam("id") long id,
            @Parameter(description = "1-64 visible ASCII characters, bare or quoted; reuse it on every retry", required = true) @HeaderParam(IdempotencyKey.HEADER) String key,
            @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundRequest.class),
                    examples = @ExampleObject(name = "half of 19.99", value = ApiExamples.REFUND_REQUEST)))
            @Valid @NotNull RefundRequest request,
            @Context UriInfo uri) {
        Caller caller = callers.current();
        return refunds.refund(caller, guard.read(WriteOperation.REFUND, id, key, uri.getPath()), id, request).map(Answer::toResponse);
    }
}
