package io.payonce.account;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;

/** A user's money account; {@code balance} is in minor units of {@code currency}. */
@RegisterForReflection
public record Account(String userId, long balance, String currency, Instant createdAt) {
}
