package io.payonce.order;

import io.payonce.api.ApiExamples;
import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.config.PayonceConfig;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.idempotency.WriteOperation;
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
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
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
import org.jboss.resteasy.reactive.RestResponse;

import static io.payonce.metrics.RepeatDefence.IDEMPOTENCY_KEY;
import static io.payonce.metrics.RepeatDefence.SUBMIT_TOKEN;
import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/** HTTP for orders: submit tokens, creation and reading. Ship, complete and cancel are {@link TransitionResource}'s. */
@Path("/orders")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "orders")
public class OrderResource {

    static final String SUBMIT_TOKEN_HEADER = "Submit-Token";

    private final OrderCreation creation;
    private final OrderAccess access;
    private final SubmitTokens tokens;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;
    private final PayonceConfig config;

    OrderResource(OrderCreation creation, OrderAccess access, SubmitTokens tokens, IdempotencyGuard guard,
                  CallerIdentity callers, PayonceConfig config) {
        this.creation = creation;
        this.access = access;
        this.tokens = tokens;
        this.guard = guard;
        this.callers = callers;
        this.config = config;
    }

    @GET
    @Path("/token")
    @RolesAllowed(Caller.USER)
    @Operation(operationId = "issueSubmitToken", summary = "Issue a one-time submit token for an order form",
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
    @RepeatProtection({SUBMIT_TOKEN, IDEMPOTENCY_KEY, UNIQUE_INDEX})
    @Operation(operationId = "createOrder", summary = "Create an order from a submitted form",
            description = "Send either the Submit-Token of the form or an Idempotency-Key. A repeat of the same submission answers with "
                    + "the first answer, byte for byte, and Idempotent-Replayed: true; the caller's own orderSn with the same content "
                    + "answers with its order. Order numbers belong to their user. An order in a currency the caller's account does "
                    + "not hold is refused.")
    @APIResponse(responseCode = "201", description = "Created, or the replay of the first answer; Location names the order",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Order.class),
                    examples = @ExampleObject(name = "created", value = ApiExamples.ORDER)))
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED, MALFORMED_REQUEST, SUBMIT_TOKEN_MISSING or "
            + "SUBMIT_TOKEN_MALFORMED")
    @APIResponse(responseCode = "409", description = "SUBMIT_TOKEN_INVALID (reload the form), SUBMIT_TOKEN_IN_USE "
            + "(retry shortly), ORDER_SN_CONFLICT or CURRENCY_MISMATCH (recorded)")
    @APIResponse(responseCode = "415", description = "UNSUPPORTED_MEDIA_TYPE")
    public Uni<Response> create(
            @Parameter(description = "The one-time token from GET /orders/token") @HeaderParam(SUBMIT_TOKEN_HEADER) String submitToken,
            @Parameter(description = "Instead of a submit token: 1-64 visible ASCII characters") @HeaderParam(IdempotencyKey.HEADER) String key,
            @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = NewOrderRequest.class),
                    examples = @ExampleObject(name = "an order form", value = ApiExamples.NEW_ORDER)))
            @Valid @NotNull NewOrderRequest request,
            @Context UriInfo uri) {
        Caller caller = callers.current();
        if (submitToken == null && key != null) {
            return creation.withKey(caller.userId(), guard.read(WriteOperation.CREATE_ORDER, null, key, uri.getPath()), request)
                    .map(Responses::of);
        }
        SubmitTokens.requireWellFormed(submitToken);
        return creation.withToken(caller.userId(), submitToken, request, uri.getPath()).map(Responses::of);
    }

    @GET
    @Path("/{id}")
    @RolesAllowed({Caller.USER, Caller.OPS})
    @Operation(operationId = "getOrder", summary = "Read an order (its owner or ops)")
    @APIResponse(responseCode = "200", description = "The order")
    @APIResponse(responseCode = "404", description = "ORDER_NOT_FOUND, also for another user's order")
    public Uni<Order> get(@PathParam("id") long id) {
        return access.find(callers.current(), id);
    }
}
