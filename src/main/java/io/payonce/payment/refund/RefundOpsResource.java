package io.payonce.payment.refund;

import io.payonce.api.ApiExamples;
import io.payonce.api.KeyHeader;
import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.payment.operation.OperatorSettlements;
import io.payonce.idempotency.WriteOperation;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.metrics.RepeatDefence.IDEMPOTENCY_KEY;
import static io.payonce.metrics.RepeatDefence.STATE_CAS;
import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/**
 * HTTP for refunds, all of it ops': following a refund (the Location of a refund's 202 points here),
 * the settlement of a refund to the card the processor cannot account for, and the reversal of one
 * the processor failed after it had succeeded, each of these two behind an Idempotency-Key.
 */
@Path(RefundView.PATH)
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "payments")
public class RefundOpsResource {

    private final RefundLookup lookup;
    private final OperatorSettlements settlements;
    private final OperatorRefundSettlement refunds;
    private final RefundReversal reversal;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;

    RefundOpsResource(RefundLookup lookup, OperatorSettlements settlements, OperatorRefundSettlement refunds, RefundReversal reversal,
                      IdempotencyGuard guard, CallerIdentity callers) {
        this.lookup = lookup;
        this.settlements = settlements;
        this.refunds = refunds;
        this.reversal = reversal;
        this.guard = guard;
        this.callers = callers;
    }

    @GET
    @Path("/{id}")
    @RolesAllowed(Caller.OPS)
    @Operation(operationId = "getRefund", summary = "Read a refund, its phase and its history (ops)",
            description = "A refund to the card answered 202 is UNKNOWN until the recovery job learns its outcome from the processor: "
                    + "read it here until its phase is SUCCEEDED (the money is back on the card) or FAILED (nothing was refunded, "
                    + "and the order's refundable amount is back).")
    @APIResponse(responseCode = "200", description = "The refund")
    @APIResponse(responseCode = "404", description = "REFUND_NOT_FOUND")
    public Uni<RefundDetails> get(@PathParam("id") long id) {
        return lookup.find(id);
    }

    @POST
    @Path("/{id}/settlement")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({IDEMPOTENCY_KEY, STATE_CAS, UNIQUE_INDEX})
    @Operation(operationId = "settleRefund", summary = "Settle a refund to the card the processor cannot account for (ops)",
            description = "For a refund to the card still UNKNOWN after the window in which payonce sends it again (resend-within, "
                    + "plus a lease), whose amount would otherwise stay reserved on its order. payonce looks the refund up at the "
                    + "processor first and settles only what the processor confirms: refunded, by the processor's refund the body "
                    + "names (its amount, currency, charge and reference are this refund's, and the refund's own key holds no other "
                    + "refund), so that the refund is SUCCEEDED; or not refunded (the processor holds no refund under the refund's "
                    + "key, and the refund's charge reports refunded exactly what payonce recorded of it), so that the refund is FAILED and its amount refundable again, the refund's key answering 402 REFUND_FAILED "
                    + "with failureCode settled_not_refunded. Each settlement writes an audit row and a refund.settled-by-operator "
                    + "event. A refusal writes nothing.")
    @APIResponse(responseCode = "201", description = "The settlement: made by this request, or, with Idempotent-Replayed: true, by an "
            + "earlier one under the same key",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundSettlementView.class),
                    examples = @ExampleObject(name = "refunded", value = ApiExamples.REFUND_SETTLEMENT)))
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED (processorRefundId, reason) or MALFORMED_REQUEST (an unknown "
            + "outcome); nothing is recorded")
    @APIResponse(responseCode = "404", description = "REFUND_NOT_FOUND: no refund has this id")
    @APIResponse(responseCode = "409", description = "ALREADY_SETTLED, NOT_OVERDUE (payonce may still learn the outcome itself) or "
            + "PROCESSOR_DISAGREES (the detail says what the processor holds), REFUND_ALREADY_RECORDED (the processor's refund "
            + "settles another refund); WORKER_HOLDS_LEASE (retry after Retry-After with the same key); none is recorded")
    @APIResponse(responseCode = "503", description = "PROCESSOR_UNAVAILABLE: the processor gave no clear answer; retry with the "
            + "same key after Retry-After")
    public Uni<Response> settle(
            @PathParam("id") long id,
            @BeanParam KeyHeader key,
            @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundSettlementRequest.class),
                    examples = @ExampleObject(name = "refunded", value = ApiExamples.REFUND_SETTLEMENT_REQUEST)))
            @Valid @NotNull RefundSettlementRequest request) {
        return settlements.settle(refunds, callers.current(), id, key.read(guard, WriteOperation.SETTLE_REFUND, id), request).map(Responses::of);
    }

    @POST
    @Path("/{id}/reversal")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({IDEMPOTENCY_KEY, STATE_CAS})
    @Operation(operationId = "reverseRefund", summary = "Reverse a refund to the card the processor failed after it succeeded (ops)",
            description = "For a refund to the card payonce recorded as SUCCEEDED that the processor failed since (its refund.failed "
                    + "event was answered CONTRADICTING): the money never went back to the card. payonce looks the refund up at the "
                    + "processor by the id it recorded, and reverses it only if the processor says that very refund failed. The refund "
                    + "becomes FAILED with the processor's failure code, its amount is refundable again, and an order that was REFUNDED "
                    + "becomes what it was refunded from (PAID for an order refunded before payonce kept that). The reversal writes an "
                    + "audit row and a refund.reversed event. The refund's own key keeps answering the 201 it answered first; "
                    + "GET /refunds/{id} shows the refund as it stands. A refusal writes nothing.")
    @APIResponse(responseCode = "201", description = "The reversal: made by this request, or, with Idempotent-Replayed: true, by an "
            + "earlier one under the same key",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = RefundReversalView.class)))
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED (reason); nothing is recorded")
    @APIResponse(responseCode = "404", description = "REFUND_NOT_FOUND: no refund has this id")
    @APIResponse(responseCode = "409", description = "REFUND_NOT_REVERSIBLE (not a refund to the card that succeeded, or reversed "
            + "already), PROCESSOR_DISAGREES (the detail says what the processor holds under the refund's id); none is recorded")
    @APIResponse(responseCode = "503", description = "PROCESSOR_UNAVAILABLE: the processor gave no clear answer; retry with the "
            + "same key after Retry-After")
    public Uni<Response> reverse(@PathParam("id") long id, @BeanParam KeyHeader key, @Valid @NotNull RefundReversalRequest request) {
        return reversal.reverse(callers.current(), id, key.read(guard, WriteOperation.REVERSE_REFUND, id), request).map(Responses::of);
    }
}
