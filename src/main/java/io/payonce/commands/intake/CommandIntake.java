package io.payonce.commands.intake;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.config.PayonceConfig;
import io.payonce.errors.ApiException;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.WriteOperation;
import io.payonce.input.Identifiers;
import io.payonce.metrics.RepeatDefence;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;

import java.io.IOException;
import java.util.Comparator;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A command message's way in, up to "here is a valid command from an allowed sender under this key":
 * its body read and validated, its sender allowed, its reply-to the sender's own, its message-id read
 * as the key. All it refuses is {@link Unprocessable}, since no second sending would make it pass.
 *
 * <p>The sender is the AMQP user-id, which the broker checks against the login of the connection that
 * published: only the senders that payonce.commands allows for a command's kind (a pay from a
 * balance, a card pay, a refund) are heard.
 */
public final class CommandIntake {

    /** A command is a few short fields; anything larger is not one, and is not parsed. */
    private static final int MAX_BODY_BYTES = 4096;
    /** The broker's direct reply-to: replies to the very connection that sent the command. */
    private static final String DIRECT_REPLY_TO = "amq.rabbitmq.reply-to";
    private static final Pattern SENDER = Pattern.compile(Identifiers.USER_ID);

    private final ObjectMapper json;
    private final Validator validator;
    private final IdempotencyGuard guard;
    private final Set<String> paySenders;
    private final Set<String> cardPaySenders;
    private final Set<String> refundSenders;

    public CommandIntake(ObjectMapper json, Validator validator, IdempotencyGuard guard, PayonceConfig.Commands config) {
        this.json = json;
        this.validator = validator;
        this.guard = guard;
        this.paySenders = config.paySenders().orElse(Set.of());
        this.cardPaySenders = config.cardPaySenders().orElse(Set.of());
        this.refundSenders = config.refundSenders().orElse(Set.of());
    }

    /** The command in {@code body}, from the sender {@code amqp} names, under its message-id; {@link Unprocessable} if not. */
    public AdmittedCommand admit(byte[] body, IncomingRabbitMQMetadata amqp) {
        Command command = read(body);
        String key = amqp.getMessageId().orElse(null);
        String sender = allowedSender(amqp, command);
        requireOwnReplyQueue(amqp, sender);
        return new AdmittedCommand(command, sender, keyOf(command, key));
    }

    private Command read(byte[] body) {
        if (body.length > MAX_BODY_BYTES) {
            throw new Unprocessable("the body is over " + MAX_BODY_BYTES + " bytes");
        }
        Command command;
        try {
            command = json.readValue(body, Command.class);
        } catch (IOException unreadable) {
            throw new Unprocessable("the body is not a pay or refund command: " + unreadable.getClass().getSimpleName());
        }
        if (command == null) {
            throw new Unprocessable("the body is empty");
        }
        requireValid(validator.validate(command));
        if (command instanceof Command.Pay pay) {
            requireValid(validator.validate(pay.payRequest()));
        }
        return command;
    }

    private static void requireValid(Set<? extends ConstraintViolation<?>> violations) {
        if (!violations.isEmpty()) {
            throw new Unprocessable("invalid " + violations.stream()
                    .map(v -> v.getPropertyPath() + " " + v.getMessage())
                    .sorted(Comparator.naturalOrder())
                    .collect(Collectors.joining(", ")));
        }
    }

    /**
     * The broker-checked user-id of the sender, if it may send this kind of command: a pay from a
     * balance, a card pay and a refund each have their own list of senders.
     */
    private String allowedSender(IncomingRabbitMQMetadata amqp, Command command) {
        String sender = amqp.getUserId().orElseThrow(() -> new Unprocessable("user-id missing: it names the sender"));
        boolean pay = command instanceof Command.Pay;
        boolean byCard = pay && ((Command.Pay) command).byCard();
        Set<String> allowed = byCard ? cardPaySenders : pay ? paySenders : refundSenders;
        if (!SENDER.matcher(sender).matches() || !allowed.contains(sender)) {
            throw new Unprocessable("sender " + sender + " may not send " + (byCard ? "card pay" : pay ? "pay" : "refund") + " commands");
        }
        return sender;
    }

    /**
     * A reply goes only where the sender can read it: the broker's direct reply-to, or a queue named
     * {@code <sender>.replies} or {@code <sender>.replies.<anything>}; never into another service's queue.
     */
    private static void requireOwnReplyQueue(IncomingRabbitMQMetadata amqp, String sender) {
        amqp.getReplyTo().ifPresent(replyTo -> {
            boolean own = replyTo.startsWith(DIRECT_REPLY_TO) || replyTo.equals(sender + ".replies")
                    || replyTo.startsWith(sender + ".replies.");
            if (!own) {
                throw new Unprocessable("reply-to " + replyTo + " is not a reply queue of " + sender);
            }
        });
    }

    /** The key of the write the command is, on the same target and instance as its HTTP twin's. */
    private KeyedRequest keyOf(Command command, String messageId) {
        if (command instanceof Command.Pay pay) {
            return keyed(WriteOperation.PAY, pay.orderId(), messageId, "/orders/" + pay.orderId() + "/pay");
        }
        Command.Refund refund = (Command.Refund) command;
        return keyed(WriteOperation.REFUND, refund.orderId(), messageId, "/orders/" + refund.orderId() + "/refunds");
    }

    /** The key as HTTP reads it, a missing or malformed one refused alike; a repeat counts as caught by the message id. */
    private KeyedRequest keyed(WriteOperation operation, long orderId, String messageId, String instance) {
        try {
            return guard.read(operation, orderId, messageId, instance).caughtAs(RepeatDefence.MESSAGE_ID);
        } catch (ApiException invalidKey) {
            throw new Unprocessable("message-id: " + invalidKey.detail());
        }
    }
}
