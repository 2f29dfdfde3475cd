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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * payonce's side of the processor: one call, one outcome. Every call is bounded by
 * {@code payonce.processor.timeout} and made once: nothing here retries, so nothing can send a
 * charge or a refund again under a new key. Whatever is not a definite answer (a timeout, a 5xx, a
 * connection that failed or was reset, a reply that cannot be read) is unknown ({@link Unclear}):
 * the card may have been charged, or refunded, and only the processor can say. A call the
 * processor refused before handling it (401 or 403: payonce's API key is wrong, as after a key
 * rotation gone wrong; 404 or 405 to a charge or a refund: the processor's address is) charged or
 * refunded nothing: it is not sent, like a call that could not connect, and counted in
 * {@code payonce_processor_refused_total}, which an operator alerts on, since every card pay and
 * refund to the card waits until it is put right. Made at start, so that the counter is there, at
 * 0, before the first card pay.
 */
@Startup
@ApplicationScoped
public class Processor {

    private static final Logger LOG = Logger.getLogger(Processor.class);

    /** The most charges one search may list: far more than one order's pays, each declined, would make. */
    static final int SEARCH_LIMIT = 100;

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
                        + "404 or 405 to a charge or a refund, the processor's address is. Nothing was charged or refunded; every card "
                        + "pay and refund to the card waits")
                .tag("status", Integer.toString(status))
                .register(registry)));
    }

    /** Sends the charge under {@code key}; the same key always names the same charge at the processor. */
    public Uni<ChargeOutcome> charge(String key, ChargeRequest request) {
        return outcome("charge under key " + key, api.charge(key, authorization, request), false, null);
    }

    /** The charge the processor holds under {@code key}, or {@link ChargeOutcome.Absent} if it holds none. */
    public Uni<ChargeOutcome> chargeUnder(String key) {
        return outcome("lookup under key " + key, api.chargeUnder(key, authorization), true, null);
    }

    /**
     * The charge whose id is {@code chargeId}, whatever key it was made under, or
     * {@link ChargeOutcome.Absent} if the processor has none, or answers with a charge of another id:
     * what an operator names when settling a payment the processor can no longer find under its key.
     */
    public Uni<ChargeOutcome> chargeById(String chargeId) {
        return outcome("lookup of charge " + chargeId, api.chargeById(chargeId, authorization), true, chargeId);
    }

    /**
     * Every charge the processor holds for {@code reference}, under any key or none: the second proof,
     * beside an empty key, that a payment charged nothing. Only a 200 with the whole list answers, in
     * one page of at most {@link #SEARCH_LIMIT}: a list that says it goes on, or does not say it ends,
     * is not the whole list.
     */
    public Uni<ChargesFor> chargesFor(String reference) {
        return bounded(api.chargesFor(reference, SEARCH_LIMIT, authorization))
                .map(response -> listOf(response, reference))
                .onFailure().recoverWithItem(failure -> new ChargesFor.Unclear(unknownBecause(failure), true))
                .invoke(found -> {
                    if (found instanceof ChargesFor.Unclear unclear) {
                        LOG.warnf("Processor search of the charges for %s: no list (%s)", reference, unclear.reason());
                    }
                });
    }

    /** Sends the refund under {@code key}; the same key always names the same refund at the processor. */
    public Uni<RefundOutcome> refund(String key, RefundRequest request) {
        return refundOutcome("refund under key " + key, api.refund(key, authorization, request), false, null);
    }

    /** The refund the processor holds under {@code key}, or {@link RefundOutcome.Absent} if it holds none. */
    public Uni<RefundOutcome> refundUnder(String key) {
        return refundOutcome("refund lookup under key " + key, api.refundUnder(key, authorization), true, null);
    }

    /**
     * The refund whose id is {@code refundId}, whatever key it was made under, or
     * {@link RefundOutcome.Absent} if the processor has none, or answers with a refund of another id:
     * what an operator names when settling a refund the processor can no longer find under its key.
     */
    public Uni<RefundOutcome> refundById(String refundId) {
        return refundOutcome("lookup of refund " + refundId, api.refundById(refundId, authorization), true, refundId);
    }

    /**
     * {@code described}: the call in words for the log, which call and under which key or of which
     * charge; {@code byId}: the id a lookup by id asked for, else null.
     */
    private Uni<ChargeOutcome> outcome(String described, Uni<Response> call, boolean lookup, String byId) {
        return bounded(call)
                .map(response -> answerOf(response, lookup, byId))
                .onFailure().recoverWithItem(failure -> new Unclear(unknownBecause(failure), delivered(failure)))
                .invoke(outcome -> warnIfUnclear(described, outcome));
    }

    private Uni<RefundOutcome> refundOutcome(String described, Uni<Response> call, boolean lookup, String byId) {
        return bounded(call)
                .map(response -> refundAnswerOf(response, lookup, byId))
                .onFailure().recoverWithItem(failure -> new Unclear(unknownBecause(failure), delivered(failure)))
                .invoke(outcome -> warnIfUnclear(described, outcome));
    }

    private static void warnIfUnclear(String described, ProcessorOutcome outcome) {
        if (outcome instanceof Unclear unclear) {
            LOG.warnf("Processor %s: outcome unknown (%s)", described, unclear.reason());
        }
    }

    /** The processor's answer whatever its status, or a failure once the call's bound has passed. */
    private Uni<Response> bounded(Uni<Response> call) {
        return call
                .onFailure(WebApplicationException.class).recoverWithItem(e -> ((WebApplicationException) e).getResponse())
                .ifNoItem().after(timeout).fail();
    }

    private ChargeOutcome answerOf(Response response, boolean lookup, String byId) {
        int status = response.getStatus();
        return refusedUnhandled(status, lookup) ? new Unclear(notSent(status, "charged"), false) : read(response, lookup, byId);
    }

    private RefundOutcome refundAnswerOf(Response response, boolean lookup, String byId) {
        int status = response.getStatus();
        return refusedUnhandled(status, lookup) ? new Unclear(notSent(status, "refunded"), false) : readRefund(response, lookup, byId);
    }

    /**
     * Whether a lookup by id ({@code byId}; null for any other call) was answered with an object of
     * another id, written out in full: one the processor, or a proxy, matched loosely (a prefix, a cut
     * id). It is no object by the id asked for. payonce may not be able to keep either id, so only
     * this comparison, of the ids as written, tells them apart. An object that names no id is read as
     * any answer is: incomplete, so unclear.
     */
    private static boolean answeredAnother(String byId, String answered) {
        if (byId == null || answered == null || byId.equals(answered)) {
            return false;
        }
        LOG.warnf("Processor lookup of %s answered an object of another id: none by that id", byId);
        return true;
    }

    /**
     * 401 and 403 to any call; 404 and 405 to a charge or a refund only, since a lookup's 404 says the
     * processor holds nothing under the key.
     */
    private static boolean refusedUnhandled(int status, boolean lookup) {
        return status == 401 || status == 403 || !lookup && (status == 404 || status == 405);
    }

    /** Counts the refusal; the words for the history of the call that was not sent, and of what it did not do. */
    private String notSent(int status, String done) {
        refusals.get(status).increment();
        return "the processor refused payonce's call (" + status + ") and " + done + " nothing";
    }

    /**
     * A charge object in a 2xx or 402 to the charge's POST is an outcome, and so is a 400 that names a
     * decline code (the processor refusing the card outright, charging nothing). To a lookup only a 200
     * is: any other answer says the lookup was refused, whatever it names, as for a refund; read as a
     * decline, it would free the order of a card that may well be charged. A 404 to a lookup means no charge
     * exists under the key, or with the id. Anything else (a 400 without a decline code, which may
     * be a key the processor saw with other parameters or a proxy's refusal, a 409 for a twin
     * request still in flight at the processor, a charge still pending) is not an outcome. A charge
     * object is read as {@link ChargeObject} reads it.
     */
    private static ChargeOutcome read(Response response, boolean lookup, String byId) {
        int status = response.getStatus();
        if (lookup && status == 404) {
            return new ChargeOutcome.Absent();
        }
        if (lookup && status != 200) {
            // A lookup reads what the processor holds: 200 with the charge, whatever became of it. Any other
            // answer to it, a 402 as much as a 400, comes from something refusing the lookup itself.
            return new Unclear("the processor answered " + status + " to a lookup");
        }
        if (status != 200 && status != 201 && status != 400 && status != 402) {
            return new Unclear("the processor answered " + status);
        }
        JsonNode charge = response.readEntity(JsonNode.class);
        if (answeredAnother(byId, ChargeReply.text(charge, "id"))) {
            return new ChargeOutcome.Absent();
        }
        if (status == 400) {
            ChargeReply reply = ChargeReply.of(charge);
            String declineCode = ProcessorText.of(reply.declineCode(), ProcessorText.CODE_LENGTH);
            return declineCode != null ? ChargeObject.declined(reply, ChargeObject.id(charge), declineCode)
                    : new Unclear("the processor answered 400");
        }
        return ChargeObject.outcome(charge);
    }

    /**
     * The charges a 200 lists under {@code data}, as one whole list ({@code has_more} false) of this
     * reference's charges. A search that lists a charge of another reference searched for something
     * else (a parameter it ignores, a reference it matches loosely), and says nothing of this one's:
     * no list. A refused call (401, 403) is counted as every refused call is; one that may pass on
     * asking again (a 5xx, 408, 425, 429) is an outage.
     */
    private ChargesFor listOf(Response response, String reference) {
        int status = response.getStatus();
        if (status == 401 || status == 403) {
            refusals.get(status).increment();
        }
        if (status != 200) {
            boolean outage = status >= 500 || status == 408 || status == 425 || status == 429;
            return new ChargesFor.Unclear("the processor answered " + status + " to the search", outage);
        }
        JsonNode list = response.readEntity(JsonNode.class);
        JsonNode more = list.path("has_more");
        if (!list.path("data").isArray() || !more.isBoolean() || more.booleanValue()) {
            return new ChargesFor.Unclear("the processor's answer to the search is not one whole list", false);
        }
        List<ChargeOutcome> charges = new ArrayList<>();
        for (JsonNode charge : list.path("data")) {
            String named = ChargeObject.reference(charge);
            if (named != null && !named.equals(reference)) {
                return new ChargesFor.Unclear("the search listed a charge for " + named, false);
            }
            // A charge that names no reference, listed for this one, may be this order's: kept, as the processor listed it.
            charges.add(ChargeObject.outcome(charge));
        }
        return new ChargesFor.Listed(List.copyOf(charges));
    }

    /**
     * A refund object in a 2xx or 402 is an outcome, and so is a 400 that names a failure code (the
     * processor refusing the refund outright, refunding nothing); a 404 to a lookup means no refund
     * exists under the key, or with the id. Anything else (a 400 without a failure code, a 409 for a twin request still
     * in flight at the processor, a refund still pending) is not an outcome, as for a charge. A refund
     * reported succeeded must name its id, amount and currency to count.
     */
    private static RefundOutcome readRefund(Response response, boolean lookup, String byId) {
        int status = response.getStatus();
        if (lookup && status == 404) {
            return new RefundOutcome.Absent();
        }
        if (lookup && status != 200) {
            return new Unclear("the processor answered " + status + " to a lookup");
        }
        if (status != 200 && status != 201 && status != 400 && status != 402) {
            return new Unclear("the processor answered " + status);
        }
        JsonNode refund = response.readEntity(JsonNode.class);
        if (answeredAnother(byId, RefundReply.text(refund, "id"))) {
            return new RefundOutcome.Absent();
        }
        if (status == 400) {
            // A refusal of the refund itself, an answer to the refund's POST (a lookup's 400 was turned
            // away above), checked against the refund by whatever it names.
            RefundReply reply = RefundReply.of(refund);
            return ProcessorText.of(reply.failureCode(), ProcessorText.CODE_LENGTH) != null ? RefundObject.failed(reply, null)
                    : new Unclear("the processor answered 400");
        }
        return RefundObject.outcome(refund);
    }

    /** Words for the payment's or refund's history, which its owner reads: no class names. */
    private static String unknownBecause(Throwable failure) {
        if (failure instanceof TimeoutException) {
            return "no answer in time";
        }
        if (!delivered(failure)) {
            return "could not connect";
        }
        return "the connection failed or the answer was unreadable";
    }

    /** False only when the request certainly never reached the processor: the connection itself was refused. */
    private static boolean delivered(Throwable failure) {
        return !(failure instanceof ConnectException || failure.getCause() instanceof ConnectException);
    }
}
