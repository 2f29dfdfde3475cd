package io.payonce.payment.refund;

import io.payonce.auth.Caller;
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

/** HTTP for following a refund: the Location of a refund's 202 points here. Refunds are ops' acts, and ops' to read. */
@Path(RefundView.PATH)
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "payments")
public class RefundLookupResource {

    private final RefundLookup lookup;

    RefundLookupResource(RefundLookup lookup) {
        this.lookup = lookup;
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
}
