package io.payonce.order;

/** A one-time token for one order form, to be sent back as the Submit-Token header. */
public record SubmitTokenView(String token, long expiresInSeconds) {
}
