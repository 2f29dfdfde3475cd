package io.payonce.idempotency;

import io.payonce.errors.ApiException;
import io.payonce.metrics.Outcome;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.metrics.RepeatDefence;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Keeps the books on writes: each answer, or each failure that ends a write, is counted once, when
 * it is final, from what it says. The pipelines themselves hold no metrics calls, so a transaction
 * that is retried counts once, and no path can forget to count.
 */
@ApplicationScoped
public class AnswerMeter {

    private final PayonceMetrics metrics;

    AnswerMeter(PayonceMetrics metrics) {
        this.metrics = metrics;
    }

    /** Counts the answer {@code write} ends with: executed or replayed, and the defence that caught a repeat. */
    public Uni<Answer> counted(WriteOperation operation, Uni<Answer> write) {
        return write.onItemOrFailure().invoke((answer, failure) -> count(operation, answer, failure));
    }

    private void count(WriteOperation operation, Answer answer, Throwable failure) {
        if (failure == null) {
            metrics.answered(operation.tag(), answer.repeat() && answer.caughtBy().replaysStoredAnswer() ? Outcome.REPLAYED : Outcome.EXECUTED, answer.caughtBy());
        } else if (failure instanceof ApiException refused) {
            countRefusal(operation, refused);
        }
    }

    /** A request refused before it could run: no key, or a key that is not one. */
    void rejected(WriteOperation operation) {
        metrics.answered(operation.tag(), Outcome.REJECTED, null);
    }

    /** A twin in flight (on its key or on the pay lock) is a repeat that was caught; a reused key is a mismatch. */
    private void countRefusal(WriteOperation operation, ApiException refused) {
        switch (refused.code()) {
            case IDEMPOTENCY_KEY_IN_USE -> metrics.answered(operation.tag(), Outcome.CONFLICT, RepeatDefence.IDEMPOTENCY_KEY);
            case PAYMENT_IN_PROGRESS -> metrics.answered(operation.tag(), Outcome.CONFLICT, RepeatDefence.PAY_LOCK);
            case IDEMPOTENCY_KEY_REUSED -> metrics.answered(operation.tag(), Outcome.MISMATCH, null);
            default -> {
            }
        }
    }
}
