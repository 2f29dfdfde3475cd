package io.payonce.commands.intake;

/** A command that can never succeed, however often it is sent: what {@link CommandIntake} refuses. */
public final class Unprocessable extends RuntimeException {

    Unprocessable(String reason) {
        super(reason, null, false, false);
    }
}
