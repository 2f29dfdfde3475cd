package io.payonce.payment.card;

import io.payonce.api.ApiExamples;
import io.payonce.api.KeyHeader;
import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.WriteOperation;
import io.payonce.payment.PaymentView;
import io.payonce.payment.operation.OperatorSettlements;
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
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.metrics.RepeatDefence.IDEMPOTENCY_KEY;
import static io.payonce.metrics.RepeatDefence.STATE_CAS;
import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/** HTTP for an operator's settlement of a card payment the processor cannot account for, behind an Idempotency-Key. */
@Path(PaymentView.PATH)
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "payments")
public class CardSettlementResource {

    private final OperatorSettlements settlements;
    private final OperatorSettlement card;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;

    CardSettlementResource(OperatorSettlements settlements, OperatorSettlement card, IdempotencyGuard guard, CallerIdentity callers) {
        this.settlements = settlements;
        this.card = card;
        this.guard = guard;
        this.callers = callers;
    }

    @POST
    @Path("/{id}/settlement")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({IDEMPOTENCY_KEY, STATE_CAS, UNIQUE_INDEX})
    @Operation(operationId = "settlePayment", summary = "Settle a card payment the processor cannot account for (ops)",
            description = "For a card payment still UNKNOWN after the window in which payonce sends its charge again (resend-within, "
                    + "plus a lease), whose order would otherwise stay PAYING. payonce looks the charge up at the processor first and "
                    + "settles only what the processor confirms: charged, by the charge the body names (its amount, currency and order "
                    + "are this payment's, and the payment's own key holds no other charge), so that the order is PAID; or not charged "
                    + "(the payment's key holds no charge that succeeded, and the processor's list of the order's charges none but declined ones), "
                    + "so that the order is UNPAID and can be paid again, the "
                    + "client's key answering 402 CARD_DECLINED with declineCode settled_not_charged. Each settlement writes an audit row, "
                    + "shown to ops in GET /payments/{id}, and a payment.settled-by-operator event. A refusal writes nothing.")
    @APIResponse(responseCode = "201", description = "The settlement: made by this request, or, with Idempotent-Replayed: true, by an "
            + "earlier one under the same key",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = SettlementView.class),
                    examples = @ExampleObject(name = "charged", value = ApiExamples.SETTLEMENT)))
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED (chargeId, reason) or MALFORMED_REQUEST (an unknown outcome); "
            + "nothing is recorded")
    @APIResponse(responseCode = "404", description = "PAYMENT_NOT_FOUND: no payment has this id")
    @APIResponse(responseCode = "409", description = "ALREADY_SETTLED, NOT_OVERDUE (payonce may still learn the outcome itself) or "
            + "PROCESSOR_DISAGREES (the detail says what the processor holds), CHARGE_ALREADY_RECORDED (the charge settles another "
            + "payment); WORKER_HOLDS_LEASE (retry after Retry-After with the same key); none is recorded")
    @APIResponse(responseCode = "503", description = "PROCESSOR_UNAVAILABLE: the processor gave no clear answer; retry with the "
            + "same key after Retry-After")
    public Uni<Response> settle(
            @PathParam("id") long id,
            @BeanParam KeyHeader key,
            @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = SettlementRequest.class),
                    examples = @ExampleObject(name = "charged", value = ApiExamples.SETTLEMENT_REQUEST)))
            @Valid @NotNull SettlementRequest request) {
        return settlements.settle(card, callers.current(), id, key.read(guard, WriteOperation.SETTLE_PAYMENT, id), request).map(Responses::of);
    }
}
