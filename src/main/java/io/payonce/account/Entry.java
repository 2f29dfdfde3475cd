package io.payonce.account;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;

/** One ledger line: how much a payment, refund or deposit moved, and the balance it left. */
@RegisterForReflection
public record Entry(long id, long delta, long balanceAfter, String refType, String refId, Instant createdAt) {
}
