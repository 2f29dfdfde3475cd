package io.payonce.order;

import io.payonce.api.Caller;
import io.payonce.api.CallerIdentity;
import io.payonce.api.Problem;
import io.payonce.config.PayonceConfig;
import io.payonce.token.SubmitTokens;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.resteasy.reactive.RestResponse;

import java.net.URI;

/** HTTP for orders: tokens, creation, reading and the ship, complete and cancel transitions. */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "orders")
@APIResponse(responseCode = "401", description = "UNAUTHENTICATED: no valid bearer token",
        content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
@APIResponse(responseCode = "403", description = "FORBIDDEN: the caller's role may not do this",
        content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
@APIResponse(responseCode = "503", description = "DEPENDENCY_UNAVAILABLE: MariaDB or Redis unreachable; retry after Retry-After",
        content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
public class OrderResource {

    static final String SUBMIT_TOKEN = "Submit-Token";
    static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";

    private final OrderService orders;
    private final SubmitTokens tokens;
    private final CallerIdentity callers;
    private final PayonceConfig config;

    public OrderResource(OrderService orders, SubmitTokens tokens, CallerIdentity callers, PayonceConfig config) {
        this.orders = orders;
        this.tokens = tokens;
        this.callers = callers;
        this.config = config;
    }

    @GET
    @Path("/token")
    @RolesAllowed(Caller.USER)
    @Operation(summary = "Issue a one-time submit token for an order form",
            description = "Send it back as the Submit-Token header of POST /orders; it is consumed once.")
    @APIResponse(responseCode = "200", description = "A new token; never cached")
    public Uni<RestResponse<SubmitTokenView>> issueToken() {
        Caller caller = callers.current();
        long ttlSeconds = config.submitToken().ttl().toSeconds();
        return tokens.issue(caller.userId())
                .map(token -> RestResponse.ResponseBuilder.ok(new SubmitTokenView(token, ttlSeconds))
                        .header(HttpHeaders.CACHE_CONTROL, "no-store")
                        .build());
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.USER)
    @Operation(summary = "Create an order from a submitted form",
            description = "A repeat with the same submit token answers with the same order and Idempotent-Replayed: true.")
    @APIResponse(responseCode = "201", description = "Created, or the replay of the first answer; Location names the order",
            headers = @Header(name = IDEMPOTENT_REPLAYED, description = "true when this answer repeats an earlier one",
                    schema = @Schema(type = SchemaType.BOOLEAN)))
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED, MALFORMED_REQUEST, SUBMIT_TOKEN_MISSING or SUBMIT_TOKEN_MALFORMED",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "409", description = "SUBMIT_TOKEN_INVALID (reload the form), SUBMIT_TOKEN_IN_USE (retry shortly) or ORDER_SN_CONFLICT",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "415", description = "UNSUPPORTED_MEDIA_TYPE",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    public Uni<RestResponse<OrderView>> create(
            @Parameter(description = "The one-time token from GET /orders/token") @HeaderParam(SUBMIT_TOKEN) String submitToken,
            @Valid @NotNull NewOrderRequest request) {
        Caller caller = callers.current();
        SubmitTokens.requireWellFormed(submitToken);
        return orders.create(submitToken, request.forUser(caller.userId()))
                .map(OrderResource::created);
    }

    @GET
    @Path("/{id}")
    @RolesAllowed({Caller.USER, Caller.OPS})
    @Operation(summary = "Read an order (its owner or ops)")
    @APIResponse(responseCode = "200", description = "The order")
    @APIResponse(responseCode = "404", description = "ORDER_NOT_FOUND, also for another user's order",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    public Uni<OrderView> get(@PathParam("id") long id) {
        return orders.find(callers.current(), id).map(OrderView::of);
    }

    @POST
    @Path("/{id}/ship")
    @RolesAllowed(Caller.OPS)
    @Operation(summary = "PAID → SHIPPED (ops)", description = "Repeating it on a SHIPPED order is a no-op with changed: false.")
    @APIResponse(responseCode = "200", description = "The order, and whether this request moved it")
    @APIResponse(responseCode = "409", description = "ILLEGAL_TRANSITION, with currentStatus",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    public Uni<StatusChangeView> ship(@PathParam("id") long id) {
        return moveTo(id, OrderStatus.SHIPPED);
    }

    @POST
    @Path("/{id}/complete")
    @RolesAllowed(Caller.OPS)
    @Operation(summary = "SHIPPED → COMPLETED (ops)", description = "Repeating it on a COMPLETED order is a no-op with changed: false.")
    @APIResponse(responseCode = "200", description = "The order, and whether this request moved it")
    @APIResponse(responseCode = "409", description = "ILLEGAL_TRANSITION, with currentStatus",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    public Uni<StatusChangeView> complete(@PathParam("id") long id) {
        return moveTo(id, OrderStatus.COMPLETED);
    }

    @POST
    @Path("/{id}/cancel")
    @RolesAllowed({Caller.USER, Caller.OPS})
    @Operation(summary = "UNPAID → CLOSED (owner or ops)", description = "Repeating it on a CLOSED order is a no-op with changed: false.")
    @APIResponse(responseCode = "200", description = "The order, and whether this request moved it")
    @APIResponse(responseCode = "404", description = "ORDER_NOT_FOUND",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    @APIResponse(responseCode = "409", description = "ILLEGAL_TRANSITION, with currentStatus",
            content = @Content(mediaType = Problem.MEDIA_TYPE, schema = @Schema(implementation = Problem.class)))
    public Uni<StatusChangeView> cancel(@PathParam("id") long id) {
        return moveTo(id, OrderStatus.CLOSED);
    }

    private Uni<StatusChangeView> moveTo(long id, OrderStatus target) {
        return orders.moveTo(callers.current(), id, target).map(StatusChangeView::of);
    }

    /** A replay repeats the first answer, 201 and all, and says that it is one. */
    private static RestResponse<OrderView> created(OrderCreation creation) {
        var response = RestResponse.ResponseBuilder.create(RestResponse.Status.CREATED, OrderView.of(creation.order()))
                .location(URI.create("/orders/" + creation.order().id()));
        if (creation.replayed()) {
            response.header(IDEMPOTENT_REPLAYED, "true");
        }
        return response.build();
    }
}
