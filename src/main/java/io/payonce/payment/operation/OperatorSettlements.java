package io.payonce.payment.operation;

import io.payonce.account.EntryType;
import io.payonce.auth.Caller;
import io.payonce.config.PayonceConfig;
import io.payonce.errors.ApiException;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.KeyedWrite;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * An operator settles an operation the processor cannot account for: UNKNOWN past the window in
 * which payonce would send it again, so that only a person who looked into it can release what it
 * holds (an order PAYING, a refund's reserved amount). One flow for every kind, as a keyed write, top
 * to bottom: a finished key answers from its record; the operation must be overdue and no worker may
 * hold it; the processor is asked, outside any transaction, and must confirm what the operator says
 * ({@link OperatorSettlementKind#askProcessor}); then one transaction claims the key and records the
 * settlement by compare-and-set on all that was checked, so that a worker that took the operation
 * meanwhile, or a twin settlement, wins alone; the outcome is recorded exactly as the processor's
 * own would be ({@link OperationKind#settledByOperator}), with the kind's audit row and the settlement's event.
 * A refusal writes nothing and leaves the key free.
 */
@ApplicationScoped
public class OperatorSettlements {

    private final Pool pool;
    private final IdempotencyGuard guard;
    private final Outbox outbox;
    private final Duration window;

    OperatorSettlements(Pool pool, IdempotencyGuard guard, Outbox outbox, Lifecycle lifecycle, PayonceConfig config) {
        this.pool = pool;
        this.guard = guard;
        this.outbox = outbox;
        // A resend decided just inside the resend window may still be on its way, for one lease.
        this.window = config.processor().resendWithin().plus(lifecycle.lease());
    }

    /** Settles operation {@code id} of {@code kind} as {@code claim} says, for {@code operator}, once per key. */
    public <O extends Operation<O>, C extends OperatorClaim> Uni<Answer> settle(OperatorSettlementKind<O, C> kind, Caller operator, long id,
                                                                            KeyedRequest keyed, C claim) {
        KeyedWrite write = keyed.by(operator.userId(), claim);
        return guard.firstRead(write, kind.targets.findWithRecord(pool, id, write, kind.words.notFound()),
                target -> settle(kind, target, write, claim));
    }

    private <O extends Operation<O>, C extends OperatorClaim> Uni<Answer> settle(OperatorSettlementKind<O, C> kind, SettlementTarget<O> target,
                                                                             KeyedWrite write, C claim) {
        ApiException refusal = target.refusal(window);
        if (refusal != null) {
            return Uni.createFrom().failure(refusal);
        }
        O operation = target.operation();
        OperatorSettlementKind.Words words = kind.words;
        return kind.askProcessor(operation, claim).map(said -> Verdicts.kept(said, words.mostSaid()))
                .flatMap(said -> guard.run(write, tx -> kind.outcomes.settledByOperator(tx, operation, claim, words.settledFailureCode(), window)
                        .onFailure(ProcessorIdTaken.class).transform(taken -> new ApiException(words.recordedElsewhere(), claim.processorId()))
                        .flatMap(answer -> answer != null
                                ? kind.audit(tx, operation, claim, write, said).call(view -> outbox.recordSettlement(tx, words.settled(),
                                        operation.userId(), operation.orderId(), EntryType.referenceOf(operation.id()), operation.amount(),
                                        operation.currency(), write.key().value(), claim.outcomeText())).map(Answer::created)
                                : kind.targets.find(tx, operation.id()).map(now -> {
                                    throw now.refusalOnceMoved(window);
                                }))));
    }
}
