package io.payonce.commands.intake;

import io.payonce.idempotency.KeyedRequest;

/**
 * What {@link CommandIntake} lets in: a valid command from a sender allowed to send its kind, under
 * the key its message-id makes.
 */
public record AdmittedCommand(Command command, String sender, KeyedRequest keyed) {
}
