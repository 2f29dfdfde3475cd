package io.payonce.payment;

import com.fasterxml.jackson.annotation.JsonProperty;

/** How an order is paid: from the owner's payonce balance, or by card through the processor. */
public enum PaymentMethod {
    @JsonProperty("balance") BALANCE,
    @JsonProperty("card") CARD
}
