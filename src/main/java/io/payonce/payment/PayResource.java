package io.payonce.payment;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.api.ApiExamples;
import io.payonce.api.KeyHeader;
import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.WriteOperation;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.Validator;
import jakarta.ws.rs.BeanParam;
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

import java.io.IOException;
import java.util.Set;

import static io.payonce.metrics.RepeatDefence.IDEMPOTENCY_KEY;
import static io.payonce.metrics.RepeatDefence.PAY_LOCK;
import static io.payonce.metrics.RepeatDefence.STATE_CAS;
import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/** HTTP for paying an order: the pay door, {@link Payments}, behind an Idempotency-Key. */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "payments")
@APIResponse(responseCode = "400", description = "VALIDATION_FAILED or MALFORMED_REQUEST; nothing is recorded")
@APIResponse(responseCode = "404", description = "ORDER_NOT_FOUND (recorded under the key), also for another user's order")
public class PayResource {

    private final Payments payments;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;
    private final ObjectMapper json;
    private final Validator validator;

    PayResource(Payments payments, IdempotencyGuard guard, CallerIdentity callers, ObjectMapper json, Validator validator) {
        this.payments = payments;
        this.guard = guard;
        this.callers = callers;
        this.json = json;
        this.validator = validator;
    }

    @POST
    @Path("/{id}/pay")
    @RolesAllowed(Caller.USER)
    @RepeatProtection({IDEMPOTENCY_KEY, PAY_LOCK, STATE_CAS, UNIQUE_INDEX})
    @Operation(operationId = "payOrder", summary = "Pay an order, from the owner's balance or by card, once (the owner only)",
            description = "Charges the order's amount: from the owner's balance (no body, or method balance) or on a card through the "
                    + "processor (method card with the processor's cardToken). Only the order's owner may pay it, whatever other roles the "
                    + "caller holds: for anyone else the order does not exist (404). Retries must reuse the Idempotency-Key: they get the "
                    + "first answer back with Idempotent-Replayed: true, and a retry of a card pay whose outcome is not known yet resumes it. "
                    + "Another key for a paid order is a repeat too: 201 with the order's payment and Idempotent-Replayed: true.")
    @APIResponse(responseCode = "201", description = "The order's payment: made by this request, or, with Idempotent-Replayed: true, by an earlier one",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PaymentView.class),
                    examples = @ExampleObject(name = "paid", value = ApiExamples.PAYMENT)))
    @APIResponse(responseCode = "202", description = "A card payment whose charge may or may not have been made: the processor's answer was "
            + "lost. Location names the payment; its phase is UNKNOWN until the recovery job learns the outcome from the processor. "
            + "Resending the same request with the same key resumes it and answers 201 or 402 once the outcome is known",
            headers = @Header(name = "Location", description = "/payments/{paymentId}", schema = @Schema(type = SchemaType.STRING, maxLength = 29)),
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PaymentView.class),
                    examples = @ExampleObject(name = "outcome unknown", value = ApiExamples.PAYMENT_UNKNOWN)))
    @APIResponse(responseCode = "402", description = "INSUFFICIENT_FUNDS or CARD_DECLINED (recorded under the key; pay again with a new key "
            + "after a deposit, or with another card)",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(ref = "Problem"),
                    examples = {@ExampleObject(name = "the balance is short", value = ApiExamples.INSUFFICIENT_FUNDS),
                            @ExampleObject(name = "the card is declined", value = ApiExamples.CARD_DECLINED)}))
    @APIResponse(responseCode = "409", description = "PAYMENT_IN_PROGRESS or CARD_PAYMENT_PENDING (retry after Retry-After with the "
            + "same key); ILLEGAL_TRANSITION or CURRENCY_MISMATCH (recorded)")
    public Uni<Response> pay(
            @PathParam("id") long id,
            @BeanParam KeyHeader key,
            @RequestBody(description = "How to pay; none pays from the balance. The amount is always the order's.",
                    content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = PayRequest.class),
                            examples = @ExampleObject(name = "by card", value = ApiExamples.CARD_PAY_REQUEST))) byte[] body) throws IOException {
        Caller caller = callers.current();
        KeyedRequest keyed = key.read(guard, WriteOperation.PAY, id);
        PayRequest request = payRequest(body);
        return payments.pay(caller, id, keyed, request).map(Responses::of);
    }

    /** An empty body pays from the balance; a body is read as strictly as every other and validated. */
    private PayRequest payRequest(byte[] body) throws IOException {
        if (body == null || body.length == 0) {
            return PayRequest.BALANCE;
        }
        PayRequest request = json.readValue(body, PayRequest.class);
        if (request == null) {
            throw new ApiException(ErrorCode.MALFORMED_REQUEST, "the body is null");
        }
        Set<ConstraintViolation<PayRequest>> violations = validator.validate(request);
        if (!violations.isEmpty()) {
            throw new ConstraintViolationException(violations);
        }
        return request;
    }
}
