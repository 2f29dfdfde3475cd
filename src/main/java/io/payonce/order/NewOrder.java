package io.payonce.order;

/** An order to create, for the caller named by the token, never by the body. */
public record NewOrder(String orderSn, String userId, long amount, String currency) {
}
