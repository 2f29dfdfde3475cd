package io.payonce.commands;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.auth.Caller;
import io.payonce.broker.ConfirmedPublisher;
import io.payonce.broker.GroupedPublisher;
import io.payonce.commands.intake.AdmittedCommand;
import io.payonce.commands.intake.Command;
import io.payonce.commands.intake.CommandIntake;
import io.payonce.commands.outcome.AckLost;
import io.payonce.commands.outcome.OutcomeTable;
import io.payonce.commands.outcome.Stopping;
import io.payonce.commands.outcome.TwinCharging;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.commands.settlement.RequeueMarks;
import io.payonce.config.PayonceConfig;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.payment.Payments;
import io.payonce.payment.refund.RefundRequest;
import io.payonce.payment.refund.RefundService;
import io.payonce.shutdown.Draining;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.validation.Validator;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.logging.Logger;

/**
 * Pay and refund commands from the queue, through the same guard and the same pipelines as HTTP.
 * This class only wires the rooms a message passes through, in order: its intake ({@link CommandIntake}:
 * a valid command from an allowed sender, under its key), the pay or refund door that runs it, the
 * one table that decides what becomes of the message ({@link OutcomeTable}), and the settlement that
 * does it ({@link MessageSettlement}). The message-id is the key, scoped to the caller the command acts
 * for, as its HTTP twin would be: the user for a pay, the sender for a refund. So a redelivery, or the
 * same command sent again, finds its claim and gets the first answer; no second effect.
 *
 * <p>One instance handles {@code PAYONCE_COMMANDS_IN_FLIGHT} commands at once: the messaging
 * library's copies of the channel, each a consumer of the queue with one command in hand, all through
 * this one method. So two commands for one order may run at the same moment, here or on two
 * instances, as two HTTP pays may: the guard, the pay lock, the order's compare-and-set and its one
 * live payment decide between them, never their order on the queue.
 */
@ApplicationScoped
public class CommandConsumer {

    static final String COMMANDS = "payonce-commands";

    private static final Logger LOG = Logger.getLogger(CommandConsumer.class);

    private final CommandIntake intake;
    private final Payments payments;
    private final RefundService refunds;
    private final OutcomeTable table;
    private final MessageSettlement settlement;
    private final Draining draining;

    CommandConsumer(ObjectMapper json, Validator validator, IdempotencyGuard guard, Payments payments, RefundService refunds,
                    ConfirmedPublisher publisher, GroupedPublisher replies, RequeueMarks marks,
                    @ConfigProperty(name = "mp.messaging.incoming." + COMMANDS + ".queue.name") String queue,
                    @ConfigProperty(name = "mp.messaging.incoming." + COMMANDS + ".dead-letter-exchange") String deadLetterExchange,
                    PayonceConfig config, PayonceMetrics metrics, Draining draining) {
        this.intake = new CommandIntake(json, validator, guard, config.commands());
        this.payments = payments;
        this.refunds = refunds;
        this.table = new OutcomeTable(draining);
        this.settlement = new MessageSettlement(json, table, publisher, replies, marks, deadLetterExchange, queue,
                config.commands().requeueAfter(), metrics, draining);
        this.draining = draining;
    }

    @Incoming(COMMANDS)
    Uni<Void> consume(Message<byte[]> message) {
        IncomingRabbitMQMetadata amqp = message.getMetadata(IncomingRabbitMQMetadata.class).orElseThrow();
        return draining.unlessStopping(() -> handle(message, amqp, Uni.createFrom().deferred(() -> execute(message.getPayload(), amqp))),
                () -> handle(message, amqp, Uni.createFrom().failure(new Stopping())));
    }

    /**
     * What becomes of {@code message}, given what its {@code command} came to: the row of
     * {@link OutcomeTable} it falls in, performed by {@link MessageSettlement}.
     */
    Uni<Void> handle(Message<byte[]> message, IncomingRabbitMQMetadata amqp, Uni<Answer> command) {
        return command.onItemOrFailure()
                .transformToUni((answer, failure) -> settlement.perform(table.outcome(failure, amqp), message, amqp, answer, failure))
                .onFailure(unsettled -> !(unsettled instanceof AckLost))
                .recoverWithUni(unsettled -> settlement.lastResort(message, amqp, unsettled))
                // A failed Uni would end the channel: a message the broker could not be told about is
                // redelivered when the channel reconnects.
                .onFailure().invoke(e -> LOG.warnf("Command %s left unsettled: %s", amqp.getMessageId().orElse("?"), e.toString()))
                .onFailure().recoverWithNull();
    }

    /** The command let in by its intake, run through the door of its kind, as its HTTP twin would be. */
    private Uni<Answer> execute(byte[] body, IncomingRabbitMQMetadata amqp) {
        AdmittedCommand admitted = intake.admit(body, amqp);
        if (admitted.command() instanceof Command.Pay pay) {
            return pay.byCard() ? payByCard(pay, admitted.keyed(), admitted.sender())
                    : payments.pay(new Caller(pay.userId(), false), pay.orderId(), admitted.keyed(), pay.payRequest());
        }
        Command.Refund refund = (Command.Refund) admitted.command();
        return refunds.refund(new Caller(admitted.sender(), true), admitted.keyed(), refund.orderId(),
                new RefundRequest(refund.refundNo(), refund.amount()));
    }

    /**
     * A card pay, logged with the broker sender that started it, so that every card charge can be
     * traced to a service (never with its card token). While a twin (the same key, by HTTP or on
     * another instance) holds the charge, its 409 PAYMENT_IN_PROGRESS means come back later, as a
     * CARD_PAYMENT_PENDING does ({@link OutcomeTable#comesBackLater}), not wait on the queue: a charge
     * lasts up to the processor's timeout, and up to its lease after a crash, and a command requeued all
     * that while would hold one of this instance's consumers. A balance pay's twin holds the pay lock
     * for moments only: that one waits on the queue.
     */
    private Uni<Answer> payByCard(Command.Pay pay, KeyedRequest keyed, String sender) {
        LOG.infof("Card pay command %s from sender %s: order %d of user %s", keyed.key().value(), sender, pay.orderId(), pay.userId());
        return payments.pay(new Caller(pay.userId(), false), pay.orderId(), keyed, pay.payRequest())
                .onFailure(CommandConsumer::inProgress).transform(twin -> new TwinCharging());
    }

    private static boolean inProgress(Throwable failure) {
        return failure instanceof ApiException refused && refused.code() == ErrorCode.PAYMENT_IN_PROGRESS;
    }
}
