package io.payonce.account;

/** The answer to a deposit: what was added and the balance it left. */
public record DepositView(String userId, long amount, String currency, long balance) {
}
