package io.payonce.coupon;

import java.time.LocalDateTime;

/** A coupon of one activity, granted to one user once. */
public record CouponGrant(long grantId, String userId, String activityId, LocalDateTime grantedAt) {
}
