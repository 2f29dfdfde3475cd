package io.payonce.coupon;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;

/** A coupon of one activity, granted to one user once. */
@RegisterForReflection
public record CouponGrant(long grantId, String userId, String activityId, Instant grantedAt) {
}
