package io.payonce.account;

import io.quarkus.runtime.annotations.RegisterForReflection;
/** The answer to a deposit: what was added and the balance it left. */
@RegisterForReflection
public record DepositView(String userId, long amount, String currency, long balance) {
}
