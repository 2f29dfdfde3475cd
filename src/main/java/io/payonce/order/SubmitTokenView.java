package io.payonce.order;

import io.quarkus.runtime.annotations.RegisterForReflection;
/** A one-time token for one order form, to be sent back as the Submit-Token header. */
@RegisterForReflection
public record SubmitTokenView(String token, long expiresInSeconds) {
}
