package io.payonce.processor;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.quarkus.runtime.Startup;
import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RestClient;
import org.jboss.logging.Logger;

import java.net.ConnectException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * payonce's side of the processor: one call, one outcome. Every call is bounded by
 * {@code payonce.processor.timeout} and made once: nothing here retries, so nothing can send a
 * charge again under a new key. Whatever is not a definite answer (a timeout, a 5xx, a connection
 * that failed or was reset, a reply that cannot be read) is {@link ChargeOutcome.Unknown}: the card
 * may have been charged, and only the processor can say. A call the processor refused before
 * handling it (401 or 403: payonce's API key is wrong, as after a key rotation gone wrong; 404 or 405
 * to a charge: the processor's address is) charged nothing: it is not sent, like a call that could
 * not connect, and counted in {@code payonce_processor_refused_total}, which an operator alerts on,
 * since every card pay waits until it is put right. Made at start, so that the counter is there,
 * at 0, before the first card pay.
 */
@Startup
@ApplicationScoped
public class Processor {

    private static final Logger LOG = Logger.getLogger(Processor.class);

    private final ProcessorApi api;
    private final Duration timeout;
    private final String authorization;
    private final Map<Integer, Counter> refusals;

    Processor(@RestClient ProcessorApi api, PayonceConfig config, MeterRegistry registry) {
        this.api = api;
        this.timeout = config.processor().timeout();
        this.authorization = config.processor().apiKey().map(key -> "Bearer " + key).orElse(null);
        // Each status counted from 0 at start, so that the first refusal is an increase an alert sees.
        this.refusals = Stream.of(401, 403, 404, 405).collect(Collectors.toMap(Function.identity(), status -> Counter
                .builder("payonce.processor.refused")
                .description("Calls the processor refused before handling them, by status: 401 or 403, payonce's API key is wrong; "
                        + "404 or 405 to a charge, the processor's address is. Nothing was charged; every card pay waits")
                .tag("status", Integer.toString(status))
                .register(registry)));
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
                .map(response -> answerOf(response, lookup))
                .onFailure().recoverWithItem(Processor::unknown)
                .invoke(outcome -> {
                    if (outcome instanceof ChargeOutcome.Unknown unknown) {
                        LOG.warnf("Processor %s: outcome unknown (%s)", described, unknown.reason());
                    }
                });
    }

    private ChargeOutcome answerOf(Response response, boolean lookup) {
        int status = response.getStatus();
        return refusedUnhandled(status, lookup) ? notSent(status) : read(response, lookup);
    }

    /** 401 and 403 to any call; 404 and 405 to a charge only, since a lookup's 404 says the processor holds no charge under the key. */
    private static boolean refusedUnhandled(int status, boolean lookup) {
        return status == 401 || status == 403 || !lookup && (status == 404 || status == 405);
    }

    private ChargeOutcome notSent(int status) {
        refusals.get(status).increment();
        return new ChargeOutcome.Unknown("the processor refused payonce's call (" + status + ") and charged nothing", false);
    }

    /**
     * A charge object in a 2xx or 402 is an outcome, and so is a 400 that names a decline code (the
     * processor refusing the card outright, charging nothing); a 404 to a lookup means no charge
     * exists under the key, or with the id. Anything else (a 400 without a decline code, which may
     * be a key the processor saw with other parameters or a proxy's refusal, a 409 for a twin
     * request still in flight at the processor, a charge still pending) is not an outcome. A charge
     * object is read as {@link ChargeObject} reads it.
     */
    private static ChargeOutcome read(Response response, boolean lookup) {
        int status = response.getStatus();
        if (lookup && status == 404) {
            return new ChargeOutcome.Absent();
        }
        if (status != 200 && status != 201 && status != 400 && status != 402) {
            return new ChargeOutcome.Unknown("the processor answered " + status);
        }
        JsonNode charge = response.readEntity(JsonNode.class);
        if (status == 400) {
            String declineCode = ProcessorText.of(ChargeReply.of(charge).declineCode(), ProcessorText.CODE_LENGTH);
            return declineCode != null ? new ChargeOutcome.Declined(ChargeObject.id(charge), declineCode)
                    : new ChargeOutcome.Unknown("the processor answered 400");
        }
        return ChargeObject.outcome(charge);
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
