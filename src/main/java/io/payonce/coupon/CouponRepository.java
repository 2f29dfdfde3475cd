package io.payonce.coupon;

import io.payonce.db.UtcTimes;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** SQL for coupon grants. */
@ApplicationScoped
class CouponRepository {

    /** UNIQUE(user_id, activity_id): one coupon per user per activity, however often it is asked for. */
    private static final String INSERT = "INSERT INTO coupon_grant (user_id, activity_id) VALUES (?, ?)";

    private static final String SELECT = """
            SELECT id, user_id, activity_id, created_at FROM coupon_grant WHERE user_id = ? AND activity_id = ?""";

    private final Pool pool;

    CouponRepository(Pool pool) {
        this.pool = pool;
    }

    Uni<Void> insert(String userId, String activityId) {
        return pool.preparedQuery(INSERT).execute(Tuple.of(userId, activityId)).replaceWithVoid();
    }

    Uni<CouponGrant> find(String userId, String activityId) {
        return pool.preparedQuery(SELECT).execute(Tuple.of(userId, activityId)).map(rows -> {
            Row row = rows.iterator().next();
            return new CouponGrant(row.getLong("id"), row.getString("user_id"), row.getString("activity_id"),
                    UtcTimes.instant(row, "created_at"));
        });
    }
}
