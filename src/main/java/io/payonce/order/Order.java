package io.payonce.order;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.time.Instant;
import java.util.Map;

/**
 * An order as stored, and as the API shows it: the submit token it was created with stays in its
 * row. Amounts are minor units of {@code currency}; times are instants of the database's clock,
 * written in UTC. The API document names it OrderView, as clients generated from it know it.
 */
@RegisterForReflection
@Schema(name = "OrderView")
public record Order(
        long id,
        String orderSn,
        String userId,
        long amount,
        String currency,
        OrderStatus status,
        long refundedAmount,
        Instant createdAt,
        Instant updatedAt) {

    /**
     * The 409 for asking this order to become {@code target} from where it stands. While a card
     * payment waits for its processor (PAYING) the answer is to retry later, not a refusal stored
     * under the key: in a moment the order is PAID, or UNPAID again.
     */
    public ApiException illegalTransitionTo(OrderStatus target) {
        if (status == OrderStatus.PAYING) {
            return new ApiException(ErrorCode.CARD_PAYMENT_PENDING);
        }
        return new ApiException(ErrorCode.ILLEGAL_TRANSITION, Map.of("currentStatus", status.name()), status, target);
    }

    /** Whether a resubmission with this order number describes this very order. */
    public boolean sameContentAs(NewOrder other) {
        return userId.equals(other.userId()) && amount == other.amount() && currency.equals(other.currency());
    }
}
