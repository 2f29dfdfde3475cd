package io.payonce.coupon;

import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.input.Identifiers;
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

import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/** HTTP for coupons: a user claims the coupon of an activity, once. */
@Path("/coupons")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "coupons")
public class CouponResource {

    private final CouponService coupons;
    private final CallerIdentity callers;

    CouponResource(CouponService coupons, CallerIdentity callers) {
        this.coupons = coupons;
        this.callers = callers;
    }

    @POST
    @Path("/{activityId}/grants")
    @RolesAllowed(Caller.USER)
    @RepeatProtection(UNIQUE_INDEX)
    @Operation(operationId = "grantCoupon", summary = "Grant the caller the coupon of an activity",
            description = "A repeat answers 201 with the existing grant and Idempotent-Replayed: true.")
    @APIResponse(responseCode = "201", description = "The grant; Idempotent-Replayed: true when it was granted earlier")
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED: the activity id is malformed")
    public Uni<Response> grant(@PathParam("activityId") @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String activityId) {
        return coupons.grant(callers.current().userId(), activityId).map(Responses::of);
    }
}
