package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The client's half of "a payment happens once": every operation goes under one key, made once (or
 * given by the caller, derived from its own order or message, so that a restart of the caller reuses
 * it) and carried by every retry; a lost answer, a busy server and a 202 are retried or followed
 * under that key until the answer is definite or the caller's deadline passes, and then the caller
 * is told {@link Outcome.Pending} with the key to resume with, never that it failed.
 *
 * <p>Each call blocks its thread until its outcome (up to the {@link RetryPolicy}'s deadline). The
 * client holds no state between calls and may be shared by threads.
 *
 * <pre>{@code
 * PayonceClient payonce = new PayonceClient(URI.create("https://payments.internal"), gateway::tokenForAlice);
 * Outcome<Payment> paid = payonce.pay(orderId, "pay-" + orderSn);
 * }</pre>
 */
public final class PayonceClient {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The keys payonce accepts: 1 to 64 characters from '!' to '~', quotes and backslashes aside. */
    private static final Pattern KEY = Pattern.compile("[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,64}");
    private static final Pattern USER_ID = Pattern.compile("[A-Za-z0-9._@:-]{1,64}");
    private static final Pattern SUBMIT_TOKEN = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private final HttpClient http;
    private final List<URI> addresses;
    private final Supplier<String> tokens;
    private final RetryPolicy policy;
    private final ClientListener listener;

    /** A client of payonce at {@code address}, calling with the bearer tokens {@code tokens} supplies (one per request), with {@link RetryPolicy#DEFAULT}. */
    public PayonceClient(URI address, Supplier<String> tokens) {
        this(List.of(address), tokens, RetryPolicy.DEFAULT, ClientListener.NONE);
    }

    /**
     * A client of payonce at {@code addresses} (each operation starts at one at random and moves to the
     * next after no answer or a 5xx), with {@code policy}, telling {@code listener} of every request and
     * outcome. Requests time out by the policy; redirects are not followed.
     */
    public PayonceClient(List<URI> addresses, Supplier<String> tokens, RetryPolicy policy, ClientListener listener) {
        // HTTP/1.1, as a gateway forwards it: no cleartext HTTP/2 upgrade riding on a keyed POST.
        this(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(policy.attemptTimeout())
                .followRedirects(HttpClient.Redirect.NEVER).build(), addresses, tokens, policy, listener);
    }

    private PayonceClient(HttpClient http, List<URI> addresses, Supplier<String> tokens, RetryPolicy policy, ClientListener listener) {
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("a client needs an address of payonce");
        }
        this.http = http;
        // Paths resolve beneath each address: https://gateway/payonce reaches https://gateway/payonce/orders.
        this.addresses = addresses.stream().map(address -> address.getPath().endsWith("/") ? address : URI.create(address + "/")).toList();
        this.tokens = tokens;
        this.policy = policy;
        this.listener = listener;
    }

    /**
     * This client calling as the caller whose tokens {@code callerTokens} supplies (a buyer, an operator),
     * on the same connections: a backend that acts for many buyers keeps one client and takes a view per buyer.
     */
    public PayonceClient as(Supplier<String> callerTokens) {
        return new PayonceClient(http, addresses, callerTokens, policy, listener);
    }

    /** This client with {@code retries} (a deadline of its own for one call, say), on the same connections. */
    public PayonceClient with(RetryPolicy retries) {
        return new PayonceClient(http, addresses, tokens, retries, listener);
    }

    /** A new key, for an operation the caller has no key of its own for. */
    public static String newKey() {
        return UUID.randomUUID().toString();
    }

    /** Pays order {@code orderId} from the buyer's balance, under a new key. */
    public Outcome<Payment> pay(long orderId) {
        return pay(orderId, newKey());
    }

    /** Pays order {@code orderId} from the buyer's balance, under {@code key}: again with the same key, it is the same payment. */
    public Outcome<Payment> pay(long orderId, String key) {
        return run(keyed("pay", key, "orders/" + orderId + "/pay", body().put("method", "balance").toString(), Payment::of,
                json -> Payment.of(json).definite()));
    }

    /** Pays order {@code orderId} by the card {@code cardToken} names, under a new key. */
    public Outcome<Payment> payByCard(long orderId, String cardToken) {
        return payByCard(orderId, cardToken, newKey());
    }

    /**
     * Pays order {@code orderId} by the card {@code cardToken} names, under {@code key}. Where the
     * processor's answer was lost, payonce answers 202: the client reads the payment until its outcome
     * is known, within the deadline, and then answers with it; past the deadline it is {@link Outcome.Pending}.
     */
    public Outcome<Payment> payByCard(long orderId, String cardToken, String key) {
        return run(keyed("card-pay", key, "orders/" + orderId + "/pay", body().put("method", "card").put("cardToken", cardToken).toString(),
                Payment::of, json -> Payment.of(json).definite()));
    }

    /** Refunds {@code amount} of order {@code orderId} as refund {@code refundNo}, under a new key (an operator's token). */
    public Outcome<Refund> refund(long orderId, String refundNo, long amount) {
        return refund(orderId, refundNo, amount, newKey());
    }

    /** Refunds {@code amount} of order {@code orderId} as refund {@code refundNo} under {@code key}, the way the order was paid. */
    public Outcome<Refund> refund(long orderId, String refundNo, long amount, String key) {
        return run(keyed("refund", key, "orders/" + orderId + "/refunds", body().put("refundNo", refundNo).put("amount", amount).toString(),
                Refund::of, json -> Refund.of(json).definite()));
    }

    /**
     * Creates order {@code orderSn} of the buyer under a submit token the client asks for first: the
     * order form's own key, which makes a double submit one order. The outcome's key is that token.
     */
    public Outcome<Order> createOrder(String orderSn, long amount, String currency) {
        // Both steps share the one deadline of the call.
        Retrying retrying = retrying();
        Instant deadline = Instant.now().plus(policy.deadline());
        Outcome<SubmitToken> token = retrying.run(Operation.read("submit-token", "orders/token", SubmitToken::of), deadline);
        if (!(token instanceof Outcome.Succeeded<SubmitToken> issued)) {
            return token instanceof Outcome.Refused<SubmitToken> refused ? new Outcome.Refused<>(null, refused.problem())
                    : new Outcome.Pending<>(null, null, "no submit token");
        }
        String submitToken = issued.value().token();
        return retrying.run(new Operation<>("create-order", submitToken, "POST", "orders", Map.of("Submit-Token", submitToken),
                order(orderSn, amount, currency), Order::of, json -> true), deadline);
    }

    /** Creates order {@code orderSn} of the buyer under {@code key}, for a caller that keeps its own keys across restarts. */
    public Outcome<Order> createOrder(String orderSn, long amount, String currency, String key) {
        return run(keyed("create-order", key, "orders", order(orderSn, amount, currency), Order::of, json -> true));
    }

    /** Deposits {@code amount} to {@code userId}'s balance, once per {@code reference} (the money's own reference), under {@code key} (an operator's token). */
    public Outcome<Deposit> deposit(String userId, long amount, String currency, String reference, String key) {
        return run(keyed("deposit", key, "accounts/" + userIdSegment(userId) + "/deposits",
                body().put("amount", amount).put("currency", currency).put("reference", reference).toString(), Deposit::of, json -> true));
    }

    /** Payment {@code paymentId} as it is now: the buyer's own, or any with an operator's token. */
    public Outcome<Payment> readPayment(long paymentId) {
        return run(Operation.read("read-payment", "payments/" + paymentId, Payment::of));
    }

    /** Refund {@code refundId} as it is now (an operator's token). */
    public Outcome<Refund> readRefund(long refundId) {
        return run(Operation.read("read-refund", "refunds/" + refundId, Refund::of));
    }

    private <T> Outcome<T> run(Operation<T> operation) {
        return retrying().run(operation);
    }

    private Retrying retrying() {
        return new Retrying(http, addresses, tokens, policy, listener);
    }

    private static <T> Operation<T> keyed(String name, String key, String path, String body, Function<JsonNode, T> value,
                                          Predicate<JsonNode> definite) {
        if (key == null || !KEY.matcher(key).matches()) {
            throw new IllegalArgumentException("an Idempotency-Key is 1 to 64 visible ASCII characters, without '\"' or '\\'");
        }
        return new Operation<>(name, key, "POST", path, Map.of("Idempotency-Key", key), body, value, definite);
    }

    /** A user id as payonce takes it, which is also a path segment that leads nowhere else ("." and ".." would). */
    private static String userIdSegment(String userId) {
        if (userId == null || !USER_ID.matcher(userId).matches() || userId.equals(".") || userId.equals("..")) {
            throw new IllegalArgumentException("a payonce user id is 1 to 64 of A-Z a-z 0-9 . _ @ : -");
        }
        return userId;
    }

    private static ObjectNode body() {
        return JSON.createObjectNode();
    }

    private static String order(String orderSn, long amount, String currency) {
        return body().put("orderSn", orderSn).put("amount", amount).put("currency", currency).toString();
    }

    /** The order form's token, as {@code GET /orders/token} answers it. */
    private record SubmitToken(String token) {
        static SubmitToken of(JsonNode json) {
            if (!json.path("token").isTextual() || !SUBMIT_TOKEN.matcher(json.path("token").asText()).matches()) {
                throw new IllegalArgumentException("no submit token in it");
            }
            return new SubmitToken(json.path("token").asText());
        }
    }
}
