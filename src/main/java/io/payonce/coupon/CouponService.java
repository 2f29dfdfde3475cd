package io.payonce.coupon;

import io.payonce.db.UniqueKey;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.AnswerMeter;
import io.payonce.idempotency.WriteOperation;
import io.payonce.metrics.RepeatDefence;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/** Grants coupons: one per user per activity, however often it is asked for. */
@ApplicationScoped
public class CouponService {

    private final CouponRepository grants;
    private final AnswerMeter meter;

    CouponService(CouponRepository grants, AnswerMeter meter) {
        this.grants = grants;
        this.meter = meter;
    }

    /** The grant, made by this request, or by an earlier one: then a repeat with the first answer's status. */
    public Uni<Answer> grant(String userId, String activityId) {
        Uni<Answer> granted = UniqueKey.insertOr(
                grants.insert(userId, activityId).flatMap(inserted -> grantOf(userId, activityId)),
                () -> grantOf(userId, activityId).map(answer -> answer.repeatCaughtBy(RepeatDefence.UNIQUE_INDEX)));
        return meter.counted(WriteOperation.GRANT_COUPON, granted);
    }

    private Uni<Answer> grantOf(String userId, String activityId) {
        return grants.find(userId, activityId).map(Answer::created);
    }
}
