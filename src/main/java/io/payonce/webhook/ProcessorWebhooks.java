package io.payonce.webhook;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.db.Transactions;
import io.payonce.errors.ApiException;
import io.payonce.payment.card.CardCharge;
import io.payonce.payment.operation.Notice;
import io.payonce.payment.refund.RefundToCard;
import io.payonce.processor.ChargeObject;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.RefundObject;
import io.payonce.processor.RefundOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * One delivery of a processor's webhook event, top to bottom: its signature, its envelope, then in
 * one transaction the event's row in the inbox (claimed by its unique id), its effect and what the
 * effect was. A delivery of an event already recorded changes nothing and is answered with the
 * first's outcome. The effect of a charge's or a refund's outcome is its kind's to decide
 * ({@link io.payonce.payment.operation.OperationKind#notice}): the phase
 * compare-and-set of the payment or refund, so that an event arriving late or out of order never
 * overrides an outcome payonce recorded. Nothing is written for a delivery refused.
 */
@ApplicationScoped
class ProcessorWebhooks {

    private static final Logger LOG = Logger.getLogger(ProcessorWebhooks.class);

    /**
     * A delivery whose signature and envelope were accepted; {@code type} is null for a type payonce
     * does not read; {@code outcome}, the {@link ChargeOutcome} or {@link RefundOutcome} its object
     * says, is null for a type that settles nothing.
     */
    private record Accepted(ProcessorEvent event, ProcessorEventType type, Object outcome) {
    }

    /**
     * What the event did; {@code paymentId} or {@code refundId}, and {@code phase} (where that payment
     * or refund stands now), when it named one of payonce's.
     */
    record Effect(WebhookOutcome outcome, Long paymentId, Long refundId, String phase) {

        static Effect of(WebhookOutcome outcome) {
            return new Effect(outcome, null, null, null);
        }

        /** The payment or refund it named, in words for the log. */
        String named() {
            return paymentId != null ? "payment " + paymentId : "refund " + refundId;
        }
    }

    /** The answer to a delivery: the event's effect, recorded by this delivery or, {@code repeat}, by an earlier one. */
    record Delivery(ProcessorEvent event, Effect effect, boolean repeat) {
    }

    private final Pool pool;
    private final Transactions transactions;
    private final WebhookSignature signature;
    private final ObjectMapper json;
    private final ProcessorEventInbox inbox;
    private final CardCharge charges;
    private final RefundToCard refunds;
    private final WebhookMeter meter;

    ProcessorWebhooks(Pool pool, Transactions transactions, WebhookSignature signature, ObjectMapper json, ProcessorEventInbox inbox,
                      CardCharge charges, RefundToCard refunds, WebhookMeter meter) {
        this.pool = pool;
        this.transactions = transactions;
        this.signature = signature;
        this.json = json;
        this.inbox = inbox;
        this.charges = charges;
        this.refunds = refunds;
        this.meter = meter;
    }

    /**
     * Takes one delivery: {@code body} as it arrived, which {@code signatureHeader} must sign. An
     * event recorded before is answered from its row at once, without a transaction; two deliveries
     * of a new event that race meet at its unique id, where the second waits for the first to commit.
     */
    Uni<Delivery> receive(String signatureHeader, byte[] body) {
        Accepted accepted;
        try {
            accepted = accept(signatureHeader, body);
        } catch (ApiException refused) {
            meter.refused();
            return Uni.createFrom().failure(refused);
        }
        ProcessorEvent event = accepted.event();
        return inbox.outcomeOf(pool, event.id())
                .flatMap(stored -> stored != null
                        ? Uni.createFrom().item(new Delivery(event, Effect.of(stored), true))
                        : transactions.inTransaction(tx -> record(tx, accepted)))
                .invoke(this::told);
    }

    /** The signature first: nothing of a body is read before it is known to be the processor's. */
    private Accepted accept(String signatureHeader, byte[] body) {
        signature.verify(signatureHeader, body);
        ProcessorEvent event = ProcessorEvent.read(json, body);
        ProcessorEventType type = event.known().orElse(null);
        if (type == null || (!type.settlesACharge() && !type.settlesARefund())) {
            return new Accepted(event, type, null);
        }
        Object outcome = type.settlesACharge() ? ChargeObject.outcome(event.object()) : RefundObject.outcome(event.object());
        if (!type.saysAsItsObject(outcome)) {
            throw ProcessorEvent.malformed("data.object must be a complete " + (type.settlesACharge() ? "charge" : "refund")
                    + " whose status agrees with " + event.type());
        }
        return new Accepted(event, type, outcome);
    }

    private Uni<Delivery> record(SqlConnection tx, Accepted accepted) {
        ProcessorEvent event = accepted.event();
        return inbox.claim(tx, event).flatMap(claimed -> claimed
                ? effect(tx, accepted).call(effect -> inbox.record(tx, event.id(), effect))
                        .map(effect -> new Delivery(event, effect, false))
                : inbox.outcomeOf(tx, event.id()).map(stored -> new Delivery(event, Effect.of(stored), true)));
    }

    private Uni<Effect> effect(SqlConnection tx, Accepted accepted) {
        if (accepted.type() == null) {
            return Uni.createFrom().item(Effect.of(WebhookOutcome.IGNORED_TYPE));
        }
        ProcessorEvent event = accepted.event();
        if (accepted.outcome() instanceof ChargeOutcome charge) {
            return event.payonceKey()
                    .map(key -> charges.notice(tx, key, charge, event.id())
                            .map(notice -> new Effect(outcomeOf(notice.effect(), WebhookOutcome.UNKNOWN_CHARGE), notice.id(), null, notice.phase())))
                    .orElseGet(() -> Uni.createFrom().item(Effect.of(WebhookOutcome.UNKNOWN_CHARGE)));
        }
        if (accepted.outcome() instanceof RefundOutcome refund) {
            return event.payonceKey()
                    .map(key -> refunds.notice(tx, key, refund, event.id())
                            .map(notice -> new Effect(outcomeOf(notice.effect(), WebhookOutcome.UNKNOWN_REFUND), null, notice.id(), notice.phase())))
                    .orElseGet(() -> Uni.createFrom().item(Effect.of(WebhookOutcome.UNKNOWN_REFUND)));
        }
        // charge.refunded: it names no refund of payonce's to settle (ProcessorEventType).
        return Uni.createFrom().item(Effect.of(WebhookOutcome.NOT_APPLIED));
    }

    /** {@code unknown}: the kind's word for a key no operation of the kind was made under. */
    private static WebhookOutcome outcomeOf(Notice.Effect effect, WebhookOutcome unknown) {
        return switch (effect) {
            case APPLIED -> WebhookOutcome.APPLIED;
            case ALREADY_SETTLED -> WebhookOutcome.ALREADY_SETTLED;
            case CONTRADICTING -> WebhookOutcome.CONTRADICTING;
            case UNKNOWN -> unknown;
        };
    }

    /** Counted and logged once committed: what ops must look at (an event that contradicts, or names a charge or refund payonce did not make) at WARN. */
    private void told(Delivery delivery) {
        ProcessorEvent event = delivery.event();
        Effect effect = delivery.effect();
        if (delivery.repeat()) {
            meter.repeat();
            LOG.debugf("Processor event %s (%s) delivered again: recorded before as %s, nothing changed", event.id(), event.type(), effect.outcome());
            return;
        }
        meter.recorded(effect.outcome());
        switch (effect.outcome()) {
            case APPLIED -> LOG.infof("Processor event %s (%s) settled %s: %s", event.id(), event.type(), effect.named(), effect.phase());
            case CONTRADICTING -> LOG.warnf("Processor event %s (%s) about %s contradicts %s, which is %s: kept for ops, it settled nothing",
                    event.id(), event.type(), event.objectId(), effect.named(), effect.phase());
            case UNKNOWN_CHARGE -> LOG.warnf("Processor event %s (%s) names charge %s under key %s, under which payonce made no payment: "
                    + "kept for ops, nothing created", event.id(), event.type(), event.objectId(), event.keyAsKept());
            case UNKNOWN_REFUND -> LOG.warnf("Processor event %s (%s) names refund %s under key %s, under which payonce made no refund: "
                    + "kept for ops, nothing created", event.id(), event.type(), event.objectId(), event.keyAsKept());
            case NOT_APPLIED -> LOG.infof("Processor event %s (%s) about %s kept, not applied: each refund is settled by its own refund event",
                    event.id(), event.type(), event.objectId());
            default -> LOG.debugf("Processor event %s (%s): %s", event.id(), event.type(), effect.outcome());
        }
    }
}
