package io.payonce.payment.lookup;

import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.payment.PaymentView;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/** HTTP for following a payment: the Location of a card pay's 202 points here. */
@Path(PaymentView.PATH)
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "payments")
public class PaymentLookupResource {

    private final PaymentLookup lookup;
    private final CallerIdentity callers;

    PaymentLookupResource(PaymentLookup lookup, CallerIdentity callers) {
        this.lookup = lookup;
        this.callers = callers;
    }

    @GET
    @Path("/{id}")
    @RolesAllowed({Caller.USER, Caller.OPS})
    @Operation(operationId = "getPayment", summary = "Read a payment, its phase and its history (its owner or ops)",
            description = "A card payment answered 202 is UNKNOWN until the recovery job learns its outcome from the processor: "
                    + "read it here until its phase is SUCCEEDED (the order is PAID) or DECLINED (nothing was charged; "
                    + "the order can be paid again with a new key).")
    @APIResponse(responseCode = "200", description = "The payment")
    @APIResponse(responseCode = "404", description = "PAYMENT_NOT_FOUND, also for another user's payment")
    public Uni<PaymentDetails> get(@PathParam("id") long id) {
        return lookup.find(callers.current(), id);
    }
}
