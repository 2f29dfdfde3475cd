package io.payonce.order;

/**
 * The life of an order, and the one table that says which moves are legal. One move lies outside
 * it, since no client may ask for it: an operator's reversal of a refund to the card the processor
 * failed after it succeeded gives a REFUNDED order back to the status it was refunded from
 * ({@code OrderRepository.reverseRefund}).
 */
public enum OrderStatus {
    UNPAID, PAYING, PAID, SHIPPED, COMPLETED, CLOSED, REFUNDED;

    public boolean canBecome(OrderStatus next) {
        return switch (this) {
            case UNPAID -> next == PAYING || next == PAID || next == CLOSED;
            // A card payment waits for its processor in PAYING: charged, or declined and payable again.
            case PAYING -> next == PAID || next == UNPAID;
            case PAID -> next == SHIPPED || next == REFUNDED;
            case SHIPPED -> next == COMPLETED || next == REFUNDED;
            case COMPLETED -> next == REFUNDED;
            case CLOSED, REFUNDED -> false;
        };
    }
}
