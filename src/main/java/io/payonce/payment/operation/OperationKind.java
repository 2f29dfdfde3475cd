package io.payonce.payment.operation;

import io.payonce.db.Transactions;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyAnswers;
import io.payonce.processor.ProcessorOutcome;
import io.payonce.processor.ProcessorReport;
import io.payonce.processor.ProcessorText;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * A kind of operation at the processor (a card charge, a refund to the card), as the lifecycle
 * ({@link Lifecycle}) drives it and records what the processor said. A kind gives its words, its
 * table's statements ({@link OperationRows}) and hooks: its call to the processor and its lookup
 * under the operation's key; what a definite outcome locks first; what a success and a failure do
 * once the phase has moved (the order, the event, and the answer the key is to keep); and its 202.
 * The rest is the lifecycle's. A kind is a {@code @Singleton}: the lifecycle reads what it was given.
 *
 * <p>Each outcome is recorded in one transaction, alike whoever learnt it (the request, a retry, the
 * recovery job, a webhook event), starting with a compare-and-set on the operation's phase: an
 * outcome learnt twice is recorded once, and the second answers with what the first stored. One
 * that is not this operation's ({@link Operation#isDescribedBy}) settles nothing; one that is not
 * definite leaves it UNKNOWN, answered 202 for now, for the recovery job after a backoff.
 *
 * @param <R> what the processor says of an operation of the kind
 * @param <C> what a definite outcome locks first, and hands to its recording (a refund: its order)
 */
public abstract class OperationKind<O extends Operation<O>, R extends ProcessorOutcome, C> {

    /**
     * The kind's words: its {@code name} as a log line begins with it ("Card payment"); what the
     * processor makes of it ({@code made}: "charge") and what holds that ({@code holder}: "payment"),
     * in its history and logs; the refusal a retry meets while another worker holds the operation and
     * no answer is stored yet ({@code pending}); and the gauge of its operations unsettled a minute
     * after they began, with its description.
     */
    public record Words(String name, String made, String holder, ErrorCode pending, String overdueGauge, String overdueDescription) {
    }

    /** The first wait before the recovery job asks again; each attempt doubles it, up to the configured most. */
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);

    private final Logger log = Logger.getLogger(getClass());
    private final Pool pool;
    private final Transactions transactions;
    private final KeyAnswers keys;
    private final Duration maxBackoff;
    final Words words;
    final OperationRows<O> rows;

    protected OperationKind(Words words, Pool pool, Transactions transactions, OperationRows<O> rows, KeyAnswers keys, Duration maxBackoff) {
        this.words = words;
        this.pool = pool;
        this.transactions = transactions;
        this.rows = rows;
        this.keys = keys;
        this.maxBackoff = maxBackoff;
    }

    /** The call itself, under the operation's processor key. */
    protected abstract Uni<R> send(O operation);

    /** What the processor holds under the operation's key. */
    protected abstract Uni<R> lookUp(O operation);

    /** What a definite outcome locks first in its transaction (a refund: its order), and hands to the recording of the outcome. */
    protected abstract Uni<C> lockFor(SqlConnection tx, O operation);

    /**
     * Records a definite {@code outcome} (its report not null) of {@code operation} in {@code tx}, holding {@code locked}: the
     * phase's compare-and-set first, then the rest of the outcome. Returns the key's new answer, or
     * null when the compare-and-set moved nothing (another worker settled the operation first).
     * {@code eventId} names the processor's webhook event that told the outcome, null when payonce's
     * own call learnt it.
     *
     * @throws ProcessorIdTaken when another operation recorded the processor's object already: nothing was written
     */
    private Uni<Answer> record(SqlConnection tx, O operation, C locked, R outcome, String eventId) {
        ProcessorReport said = outcome.report();
        if (!said.succeeded()) {
            String code = outcome.failureCode();
            return ifMoved(rows.fail(tx, operation.id(), said.id(), code), () -> settled(tx, operation, Phase.FAILED, code, eventId,
                    () -> failed(tx, operation, locked, code)));
        }
        if (said.id() == null) {
            log.warnf("%s %d succeeded at the processor under an id payonce cannot keep: find the %s there by its reference %s",
                    words.name(), operation.id(), words.made(), operation.reference());
        }
        return ifMoved(rows.succeed(tx, operation.id(), said.id()), () -> settled(tx, operation, Phase.SUCCEEDED,
                words.made() + " " + ProcessorText.shown(said.id()), eventId, () -> succeeded(tx, operation, locked)));
    }

    /**
     * The kind's part of a success, once its compare-and-set moved {@code operation} to SUCCEEDED in
     * {@code tx}, holding {@code locked}, and its history line is written: what it does to the order,
     * its event, and the answer its key is to keep, which the lifecycle stores.
     */
    protected abstract Uni<Answer> succeeded(SqlConnection tx, O operation, C locked);

    /** As {@link #succeeded}, for a failure with {@code failureCode}: nothing was made, and the key is to answer 402. */
    protected abstract Uni<Answer> failed(SqlConnection tx, O operation, C locked, String failureCode);

    /** The kind's 202 for {@code operation} as it stands: where to follow it. */
    protected abstract Uni<Answer> accepted(SqlClient client, O operation);

    /**
     * Applies a definite {@code outcome} that payonce learnt from outside its own calls (the
     * processor's webhook event {@code eventId}) to the operation made under {@code processorKey}, in
     * {@code tx}, which the caller commits with whatever else it records. An unlocked read finds the
     * operation (a refund's order), the kind's lock is taken, then the operation's row, in the order
     * every definite outcome takes them, so that no two wait on each other; both stay locked until
     * {@code tx} ends, so the notice is judged against the phase it meets ({@link Notice#of}) and
     * settles it, if at all, as a lookup's answer would.
     */
    public Uni<Notice> notice(SqlConnection tx, String processorKey, R outcome, String eventId) {
        if (outcome.report() == null) {
            throw new IllegalArgumentException("Only a definite outcome settles a " + words.holder() + ": " + outcome);
        }
        return rows.findByProcessorKey(tx, processorKey, false).flatMap(found -> found == null
                ? Notice.of(null, outcome.report(), Uni.createFrom()::nullItem)
                : lockFor(tx, found).flatMap(locked -> rows.findByProcessorKey(tx, processorKey, true)
                        .flatMap(operation -> Notice.of(operation, outcome.report(), () -> record(tx, operation, locked, outcome, eventId)))));
    }

    /** Records {@code outcome}, learnt by payonce's own call to the processor, and answers with the key's answer after it. */
    public Uni<Answer> settle(O operation, R outcome) {
        if (!operation.isDescribedBy(outcome.report())) {
            log.errorf("Processor said %s under %s %d's key, not of its %d %s for %s%s: left UNKNOWN for an operator",
                    outcome, words.holder(), operation.id(), operation.amount(), operation.currency(), operation.reference(),
                    operation.actsOn() == null ? "" : " of " + operation.actsOn());
            return leaveUnknown(operation, "the processor reported another " + words.made() + " under this key");
        }
        if (outcome.report() != null) {
            return definite(operation, outcome);
        }
        if (outcome.unclear() != null) {
            boolean neverSent = !outcome.delivered() && operation.sinceFirstSent() == null;
            return transactions.inTransaction(tx -> unknown(tx, operation, outcome.unclear(), neverSent));
        }
        return leaveUnknown(operation, "no " + words.made() + " found yet");
    }

    /**
     * An operator's settlement, recorded in {@code tx} exactly as the processor's own outcome would be:
     * the kind's lock, the compare-and-set on all the operator checked (UNKNOWN, overdue past
     * {@code window}, no lease, no worker that took it since it was read), then the rest of the
     * outcome. The key's new answer, or null when the compare-and-set moved nothing.
     *
     * @throws ProcessorIdTaken when another operation recorded the processor's object the claim names: nothing was written
     */
    Uni<Answer> settledByOperator(SqlConnection tx, O operation, OperatorClaim claim, String failureCode, Duration window) {
        String detail = (claim.succeeded() ? words.made() + " " + ProcessorText.shown(claim.processorId()) : failureCode) + ", settled by an operator";
        return lockFor(tx, operation).flatMap(locked -> ifMoved(rows.settleByOperator(tx, operation, claim, failureCode, window),
                () -> claim.succeeded() ? settled(tx, operation, Phase.SUCCEEDED, detail, null, () -> succeeded(tx, operation, locked))
                        : settled(tx, operation, Phase.FAILED, detail, null, () -> failed(tx, operation, locked, failureCode))));
    }

    /** Leaves {@code operation} UNKNOWN for {@code reason}, for the recovery job after a backoff, and answers with the key's answer. */
    public Uni<Answer> leaveUnknown(O operation, String reason) {
        return transactions.inTransaction(tx -> unknown(tx, operation, reason, false));
    }

    /** What the operation's key answers now, for a worker that found it taken over or settled by another. */
    public Uni<Answer> answerSoFar(O operation) {
        return answerSoFar(pool, operation);
    }

    /**
     * One definite outcome, one transaction. A processor object that another operation recorded
     * already is not this one's, as one of another amount is not: the operation is left UNKNOWN, in
     * the same transaction, since the refused compare-and-set wrote nothing.
     */
    private Uni<Answer> definite(O operation, R outcome) {
        return transactions.inTransaction(tx -> lockFor(tx, operation)
                .flatMap(locked -> record(tx, operation, locked, outcome, null))
                .onFailure(ProcessorIdTaken.class).recoverWithUni(taken -> {
                    log.errorf("Processor %s %s under %s %d's key is recorded on another %s already: left UNKNOWN for an operator",
                            words.made(), ((ProcessorIdTaken) taken).processorId(), words.holder(), operation.id(), words.holder());
                    return unknown(tx, operation, "the processor reported a " + words.made() + " already recorded on another " + words.holder(), false);
                })
                .flatMap(answer -> answer != null ? Uni.createFrom().item(answer) : answerSoFar(tx, operation)));
    }

    /**
     * A definite outcome once its compare-and-set moved the phase: its history line ({@code detail},
     * and {@code eventId}, the webhook event that told it, if one did), the kind's part
     * ({@code kindsPart}), and the answer that returns, kept under the operation's key.
     */
    private Uni<Answer> settled(SqlConnection tx, O operation, Phase phase, String detail, String eventId, Supplier<Uni<Answer>> kindsPart) {
        return rows.recordPhase(tx, operation.id(), operation.phaseNamed(phase), detail, eventId)
                .flatMap(v -> kindsPart.get())
                .flatMap(answer -> keys.settle(tx, operation.scope(), operation.key(), answer));
    }

    /**
     * UNKNOWN, with its history line, and a 202 for now under its key; the key's answer so far when
     * another worker moved it first. {@code neverSent}: the resend window has not started.
     */
    private Uni<Answer> unknown(SqlConnection tx, O operation, String reason, boolean neverSent) {
        return rows.markUnknown(tx, operation, FIRST_BACKOFF, maxBackoff, neverSent).flatMap(moved -> !moved ? answerSoFar(tx, operation)
                : (operation.lifecyclePhase() == Phase.UNKNOWN ? Uni.createFrom().voidItem()
                        : rows.recordPhase(tx, operation.id(), operation.phaseNamed(Phase.UNKNOWN), reason, null))
                        .flatMap(v -> accepted(tx, operation.at(Phase.UNKNOWN)))
                        .flatMap(accepted -> keys.answerForNow(tx, operation.scope(), operation.key(), accepted)));
    }

    /**
     * The key's stored answer; should retention have deleted it, a 202 that sends the caller to the
     * operation itself, which always tells where it stands.
     */
    protected Uni<Answer> answerSoFar(SqlClient client, O operation) {
        return keys.storedAnswer(client, operation.scope(), operation.key())
                .flatMap(stored -> stored != null ? Uni.createFrom().item(stored) : accepted(client, operation));
    }

    /** The rest of an outcome once its compare-and-set moved the phase; null when it moved nothing. */
    private static Uni<Answer> ifMoved(Uni<Boolean> compareAndSet, Supplier<Uni<Answer>> rest) {
        return compareAndSet.flatMap(moved -> moved ? rest.get() : Uni.createFrom().nullItem());
    }
}
