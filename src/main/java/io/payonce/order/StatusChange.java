package io.payonce.order;

/** The order after a transition request, and whether this request was the one that moved it. */
public record StatusChange(Order order, boolean changed) {
}
