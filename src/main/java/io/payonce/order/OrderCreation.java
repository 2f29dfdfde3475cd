package io.payonce.order;

/** The order a create request answers with, and whether an earlier request had already made it. */
public record OrderCreation(Order order, boolean replayed) {
}
