package io.payonce.commands.outcome;

/** A command that reached an instance already stopping: never begun. */
public final class Stopping extends RuntimeException {

    public Stopping() {
        super("the instance is stopping", null, false, false);
    }
}
