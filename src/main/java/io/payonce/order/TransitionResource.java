package io.payonce.order;

import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.IdempotencyKey;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
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
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.metrics.RepeatDefence.IDEMPOTENCY_KEY;
import static io.payonce.metrics.RepeatDefence.STATE_CAS;

/**
 * HTTP for the status changes a client asks for by name: ship, complete and cancel. Each is its own
 * endpoint, with its own roles; they answer alike, which is documented here once, and run as one,
 * {@link OrderTransitions#apply}.
 */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "orders")
@APIResponse(responseCode = "200", description = "The order; Idempotent-Replayed: true when it was already there",
        content = @Content(schema = @Schema(implementation = Order.class)))
@APIResponse(responseCode = "404", description = "ORDER_NOT_FOUND: no order has this id, or, for a user cancelling, it is not theirs")
@APIResponse(responseCode = "409", description = "ILLEGAL_TRANSITION, with currentStatus")
public class TransitionResource {

    private final OrderTransitions transitions;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;

    TransitionResource(OrderTransitions transitions, IdempotencyGuard guard, CallerIdentity callers) {
        this.transitions = transitions;
        this.guard = guard;
        this.callers = callers;
    }

    @POST
    @Path("/{id}/ship")
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({STATE_CAS, IDEMPOTENCY_KEY})
    @Operation(operationId = "shipOrder", summary = "PAID → SHIPPED (ops)", description = "Repeating it on a SHIPPED order changes nothing and answers with the order and Idempotent-Replayed: true.")
    public Uni<Response> ship(@PathParam("id") long id, @HeaderParam(IdempotencyKey.HEADER) String key, @Context UriInfo uri) {
        return apply(id, Transition.SHIP, key, uri);
    }

    @POST
    @Path("/{id}/complete")
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({STATE_CAS, IDEMPOTENCY_KEY})
    @Operation(operationId = "completeOrder", summary = "SHIPPED → COMPLETED (ops)", description = "Repeating it on a COMPLETED order changes nothing and answers with the order and Idempotent-Replayed: true.")
    public Uni<Response> complete(@PathParam("id") long id, @HeaderParam(IdempotencyKey.HEADER) String key, @Context UriInfo uri) {
        return apply(id, Transition.COMPLETE, key, uri);
    }

    @POST
    @Path("/{id}/cancel")
    @RolesAllowed({Caller.USER, Caller.OPS})
    @RepeatProtection({STATE_CAS, IDEMPOTENCY_KEY})
    @Operation(operationId = "cancelOrder", summary = "UNPAID → CLOSED (owner or ops)", description = "Repeating it on a CLOSED order changes nothing and answers with the order and Idempotent-Replayed: true.")
    public Uni<Response> cancel(@PathParam("id") long id, @HeaderParam(IdempotencyKey.HEADER) String key, @Context UriInfo uri) {
        return apply(id, Transition.CANCEL, key, uri);
    }

    /** A key is optional here: the compare-and-set alone makes a transition safe to repeat. */
    private Uni<Response> apply(long id, Transition transition, String key, UriInfo uri) {
        Caller caller = callers.current();
        var request = key == null ? null : guard.read(transition.operation(), id, key, uri.getPath());
        return transitions.apply(caller, id, transition, request).map(Responses::of);
    }
}
