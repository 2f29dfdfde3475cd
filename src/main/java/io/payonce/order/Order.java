package io.payonce.order;

import java.time.LocalDateTime;

/** An order as stored. Amounts are minor units of {@code currency}. */
public record Order(
        long id,
        String orderSn,
        String userId,
        long amount,
        String currency,
        OrderStatus status,
        String submitToken,
        long refundedAmount,
        LocalDateTime createdAt,
        LocalDateTime updatedAt) {

    /** Whether a resubmission with this order number describes this very order. */
    public boolean sameContentAs(NewOrder other) {
        return userId.equals(other.userId()) && amount == other.amount() && currency.equals(other.currency());
    }
}
