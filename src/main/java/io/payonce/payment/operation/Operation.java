package io.payonce.payment.operation;

import java.time.Duration;

/**
 * One operation at the processor (a card charge, a refund to the card) as the worker that holds it
 * sees it: its row's id, the phase it has reached, its own key at the processor, how long ago a send
 * that may have reached the processor first went out (null while none did), and its attempts as this
 * worker last read or moved them. Every lease taken and every send counts one, so the attempts are
 * the worker's fencing token: a write fenced by them is not made once another worker has taken over.
 */
public interface Operation<O extends Operation<O>> {

    long id();

    Phase lifecyclePhase();

    String processorKey();

    Duration sinceFirstSent();

    int attempts();

    /** The operation once this worker's fenced write counted one more attempt (a lease taken, a resend marked). */
    O nextAttempt();

    /** The operation once this worker's first send was marked: SENT, one more attempt. */
    O sent();
}
