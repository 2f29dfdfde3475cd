package io.payonce.coupon;

import io.payonce.api.Answer;
import io.payonce.api.Caller;
import io.payonce.api.CallerIdentity;
import io.payonce.api.DuplicateKey;
import io.payonce.api.Identifiers;
import io.payonce.api.RepeatProtection;
import io.payonce.metrics.DuplicateLayer;
import io.payonce.metrics.PayonceMetrics;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.constraints.Pattern;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.api.RepeatProtection.Mechanism.UNIQUE_INDEX;

/** HTTP for coupons: a user claims the coupon of an activity, once. */
@Path("/coupons")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "coupons")
public class CouponResource {

    private static final String GRANT = "grant-coupon";

    private final CouponRepository grants;
    private final CallerIdentity callers;
    private final PayonceMetrics metrics;

    public CouponResource(CouponRepository grants, CallerIdentity callers, PayonceMetrics metrics) {
        this.grants = grants;
        this.callers = callers;
        this.metrics = metrics;
    }

    @POST
    @Path("/{activityId}/grants")
    @RolesAllowed(Caller.USER)
    @RepeatProtection(UNIQUE_INDEX)
    @Operation(summary = "Grant the caller the coupon of an activity", description = "A repeat answers with the existing grant.")
    @APIResponse(responseCode = "201", description = "Granted by this request")
    @APIResponse(responseCode = "200", description = "Granted earlier; Idempotent-Replayed: true")
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED: the activity id is malformed")
    public Uni<Response> grant(@PathParam("activityId") @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String activityId) {
        Caller caller = callers.current();
        return grants.insert(caller.userId(), activityId)
                .replaceWith(Response.Status.CREATED)
                .onFailure(DuplicateKey::is).recoverWithItem(() -> {
                    metrics.duplicateCaught(GRANT, DuplicateLayer.UNIQUE_INDEX);
                    return Response.Status.OK;
                })
                .flatMap(status -> grants.find(caller.userId(), activityId).map(grant -> {
                    Response.ResponseBuilder response = Response.status(status).entity(grant);
                    if (status == Response.Status.OK) {
                        response.header(Answer.IDEMPOTENT_REPLAYED, "true");
                    }
                    return response.build();
                }));
    }
}
