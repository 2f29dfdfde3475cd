package io.payonce.processor;

import com.fasterxml.jackson.databind.JsonNode;
import io.payonce.config.PayonceConfig;
import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.jboss.logging.Logger;

import java.net.ConnectException;
import java.time.Duration;

/**
 * payonce's side of the processor: one call, one outcome. Every call is bounded by
 * {@code payonce.processor.timeout} and made once: nothing here retries, so nothing can send a
 * charge again under a new key. Whatever is not a definite answer (a timeout, a 5xx, a connection
 * that failed or was reset, a reply that cannot be read) is {@link ChargeOutcome.Unknown}: the card
 * may have been charged, and only the processor can say.
 */
@ApplicationScoped
public class Processor {

    private static final Logger LOG = Logger.getLogger(Processor.class);

    private final ProcessorApi api;
    private final Duration timeout;
    private final String authorization;

    Processor(@RestClient ProcessorApi api, PayonceConfig config) {
        this.api = api;
        this.timeout = config.processor().timeout();
        this.authorization = config.processor().apiKey().map(key -> "Bearer " + key).orElse(null);
    }

    /** Sends the charge under {@code key}; the same key always names the same charge at the processor. */
    public Uni<ChargeOutcome> charge(String key, ChargeRequest request) {
        return outcome("charge under key " + key, api.charge(key, authorization, request), false);
    }

    /** The charge the processor holds under {@code key}, or {@link ChargeOutcome.Absent} if it holds none. */
    public Uni<ChargeOutcome> chargeUnder(String key) {
        return outcome("lookup under key " + key, api.chargeUnder(key, authorization), true);
    }

    /**
     * The charge whose id is {@code chargeId}, whatever key it was made under, or
     * {@link ChargeOutcome.Absent} if the processor has none: what an operator names when settling a
     * payment the processor can no longer find under its key.
     */
    public Uni<ChargeOutcome> chargeById(String chargeId) {
        return outcome("lookup of charge " + chargeId, api.chargeById(chargeId, authorization), true);
    }

    /** {@code described}: the call in words for the log, which call and under which key or of which charge. */
    private Uni<ChargeOutcome> outcome(String described, Uni<Response> call, boolean lookup) {
        return call
                .onFailure(WebApplicationException.class).recoverWithItem(e -> ((WebApplicationException) e).getResponse())
                .ifNoItem().after(timeout).fail()
                .map(response -> read(response, lookup))
                .onFailure().recoverWithItem(Processor::unknown)
                .invoke(outcome -> {
                    if (outcome instanceof ChargeOutcome.Unknown unknown) {
                        LOG.warnf("Processor %s: outcome unknown (%s)", described, unknown.reason());
                    }
                });
    }

    /**
     * A charge object in a 2xx or 402 is an outcome, and so is a 400 that names a decline code (the
     * processor refusing the card outright, charging nothing); a 404 to a lookup means no charge
     * exists under the key, or with the id. Anything else (a 400 without a decline code, which may
     * be a key the processor saw with other parameters or a proxy's refusal, a 409 for a twin
     * request still in flight at the processor, a charge still pending) is not an outcome. What the
     * processor says is reduced to the characters payonce stores, at the lengths it stores.
     */
    private static ChargeOutcome read(Response response, boolean lookup) {
        int status = response.getStatus();
        if (lookup && status == 404) {
            return new ChargeOutcome.Absent();
        }
        if (status != 200 && status != 201 && status != 400 && status != 402) {
            return new ChargeOutcome.Unknown("the processor answered " + status);
        }
        ChargeReply reply = ChargeReply.of(response.readEntity(JsonNode.class));
        String chargeId = ProcessorText.of(reply.id(), ProcessorText.CHARGE_ID_LENGTH);
        String declineCode = ProcessorText.of(reply.declineCode(), ProcessorText.CODE_LENGTH);
        if (status == 400) {
            return declineCode != null ? new ChargeOutcome.Declined(chargeId, declineCode) : new ChargeOutcome.Unknown("the processor answered 400");
        }
        return switch (String.valueOf(reply.status())) {
            case "succeeded" -> chargeId == null || reply.amount() == null || reply.currency() == null
                    ? new ChargeOutcome.Unknown("the processor's charge is incomplete")
                    : new ChargeOutcome.Succeeded(chargeId, reply.amount(), ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH),
                    ProcessorText.of(reply.reference(), ProcessorText.CODE_LENGTH));
            case "declined", "failed" -> new ChargeOutcome.Declined(chargeId, declineCode == null ? "declined" : declineCode);
            default -> new ChargeOutcome.Unknown("the charge is " + ProcessorText.of(reply.status(), ProcessorText.CODE_LENGTH));
        };
    }

    /** Words for the payment's history, which its owner reads: no class names. */
    private static ChargeOutcome unknown(Throwable failure) {
        if (failure instanceof TimeoutException) {
            return new ChargeOutcome.Unknown("no answer in time");
        }
        if (failure instanceof ConnectException || failure.getCause() instanceof ConnectException) {
            return new ChargeOutcome.Unknown("could not connect", false);
        }
        return new ChargeOutcome.Unknown("the connection failed or the answer was unreadable");
    }
}
