package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Sends an operation until its answer is definite, or its deadline or attempts run out, always the
 * same request under the same key: after no answer, a 5xx, a gateway's 408 or 429, or a code of
 * {@link Codes#RETRY_WITH_THE_SAME_KEY}, it waits as the answer's {@code Retry-After} says, or backs
 * off, and sends it again, to the next address after no answer or a 5xx. A 202 is no failure: it
 * reads the {@code Location} the answer names until the state there is definite, then sends the
 * operation once more to be told its stored answer, the one every repeat gets.
 *
 * <p>Once a request may have taken effect (it went unanswered, or was answered 5xx, 202 or "later"),
 * only an answer payonce stores under the key ends the operation: a success, a 402, a recorded
 * refusal ({@link Codes#RECORDED}), a 422. Any other (a token that expired meanwhile, a gateway's
 * page) leaves it {@link Outcome.Pending}, never refused, and so does a failure of the client's own
 * after the first request went out: the caller keeps the key either way.
 */
final class Retrying {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final System.Logger LOG = System.getLogger(Retrying.class.getName());
    /** The longest Retry-After taken as said; past the deadline the call ends anyway. */
    private static final Duration LONGEST_RETRY_AFTER = Duration.ofHours(1);

    private final HttpClient http;
    private final List<URI> addresses;
    private final Supplier<String> tokens;
    private final RetryPolicy policy;
    private final ClientListener listener;

    Retrying(HttpClient http, List<URI> addresses, Supplier<String> tokens, RetryPolicy policy, ClientListener listener) {
        this.http = http;
        this.addresses = addresses;
        this.tokens = tokens;
        this.policy = policy;
        this.listener = listener;
    }

    /** An answer: status 0 for none. */
    private record Answer(int status, String body, JsonNode json, boolean replayed, Optional<Duration> retryAfter, Optional<String> location) {

        static final Answer NONE = new Answer(0, "", MissingNode.getInstance(), false, Optional.empty(), Optional.empty());

        Optional<String> code() {
            JsonNode code = json.path("code");
            return code.isTextual() ? Optional.of(code.asText()) : Optional.empty();
        }

        /** Sent again under the key: nothing settled it, or something in front of payonce turned it away for now. */
        boolean later() {
            return status == 0 || status >= 500 || status == 408 || status == 429 || code().filter(Codes.RETRY_WITH_THE_SAME_KEY::contains).isPresent();
        }

        /** An answer payonce stores under the key, or a key bound to another request: what every repeat is told. */
        boolean stored() {
            return status == 402 || status == 422 || code().filter(Codes.RECORDED::contains).isPresent();
        }

        String said() {
            return status == 0 ? "no answer" : status + code().map(code -> " " + code).orElse("");
        }
    }

    <T> Outcome<T> run(Operation<T> operation) {
        return run(operation, Instant.now().plus(policy.deadline()));
    }

    <T> Outcome<T> run(Operation<T> operation, Instant deadline) {
        Call<T> call = new Call<>(operation, deadline);
        Outcome<T> outcome;
        try {
            outcome = call.attempts();
        } catch (RuntimeException failure) {
            if (call.requestsOut == 0) {
                throw failure;
            }
            outcome = new Outcome.Pending<>(operation.key(), call.id, "the client failed: " + failure);
        }
        Outcome<T> told = outcome;
        tell(() -> listener.ended(operation.name(), told));
        return outcome;
    }

    /** One call of an operation: what was sent, what it named, and whether it may have taken effect. */
    private final class Call<T> {
        private final Operation<T> operation;
        private final Instant deadline;
        private int address = ThreadLocalRandom.current().nextInt(addresses.size());
        private int sent;
        private int reads;
        private int requestsOut;
        private boolean mayHaveHappened;
        private Long id;
        private String lastAnswer = "none";

        Call(Operation<T> operation, Instant deadline) {
            this.operation = operation;
            this.deadline = deadline;
        }

        Outcome<T> attempts() {
            URI watching = null;
            boolean collecting = false;
            while (true) {
                if (watching == null && !collecting && sent >= policy.maxAttempts()) {
                    return pending();
                }
                Answer answer;
                if (watching != null) {
                    reads++;
                    answer = send("GET", watching, null, policy.timeoutOf(sent + reads), false);
                    if (answer.status == 200 && operation.definite().test(answer.json)) {
                        // Known now: one more request, whatever the deadline, collects the answer stored under the key.
                        watching = null;
                        collecting = true;
                        continue;
                    }
                    if (answer.status != 200) {
                        // The read is refused or unanswered (a gateway that maps the path otherwise): ask the operation itself again.
                        watching = null;
                        address = answer.status == 0 || answer.status >= 500 ? next(address) : address;
                    }
                } else {
                    sent++;
                    answer = send(operation.method(), addresses.get(address).resolve(operation.path()), operation.body(),
                            collecting ? policy.timeoutOf(1) : policy.timeoutOf(sent), !collecting);
                    collecting = false;
                    lastAnswer = answer.said();
                    Optional<Outcome<T>> settled = settled(answer);
                    if (settled.isPresent()) {
                        return settled.get();
                    }
                    if (answer.status == 202) {
                        URI answeredBy = addresses.get(address);
                        watching = answer.location.flatMap(location -> sameOrigin(answeredBy, location)).orElse(null);
                    } else if (answer.status == 0 || answer.status >= 500) {
                        address = next(address);
                    }
                }
                Duration pause = answer.retryAfter.orElseGet(() -> policy.backoffAfter(sent + reads));
                if (Thread.currentThread().isInterrupted() || !pausedBefore(pause, deadline)) {
                    return pending();
                }
            }
        }

        /** The outcome {@code answer} settles, if it settles one; notes what an answer that settles nothing names. */
        private Optional<Outcome<T>> settled(Answer answer) {
            boolean read = operation.key() == null;
            if (answer.status / 100 == 2 && answer.status != 202) {
                try {
                    return Optional.of(new Outcome.Succeeded<>(operation.key(), operation.value().apply(answer.json), answer.replayed));
                } catch (IllegalArgumentException notItsAnswer) {
                    // A 2xx whose body is not what payonce answers (a gateway's page): as good as no answer.
                    mayHaveHappened = !read;
                    lastAnswer = answer.status + " that is not payonce's: " + notItsAnswer.getMessage();
                    return Optional.empty();
                }
            }
            if (answer.status == 402) {
                return Optional.of(new Outcome.Declined<>(operation.key(), Problem.of(402, answer.json)));
            }
            if (answer.status == 202 || answer.later()) {
                mayHaveHappened = !read;
                id = answer.status == 202 ? idOf(answer.json) : id;
                return Optional.empty();
            }
            if (answer.stored() || !mayHaveHappened) {
                return Optional.of(new Outcome.Refused<>(operation.key(), Problem.of(answer.status, answer.json)));
            }
            return Optional.of(pending());
        }

        private Outcome<T> pending() {
            return new Outcome.Pending<>(operation.key(), id, Thread.currentThread().isInterrupted() ? "interrupted after " + lastAnswer : lastAnswer);
        }

        private Answer send(String method, URI uri, String body, Duration timeout, boolean withinDeadline) {
            Duration left = Duration.between(Instant.now(), deadline);
            Duration bound = withinDeadline && left.compareTo(timeout) < 0 ? left : timeout;
            HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                    .header("Authorization", "Bearer " + tokens.get())
                    .header("Accept", "application/json, application/problem+json");
            if (method.equals("GET")) {
                request.GET();
            } else {
                operation.headers().forEach(request::header);
                request.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
                if (body != null) {
                    request.header("Content-Type", "application/json");
                }
            }
            HttpRequest built = request.build();
            Instant start = Instant.now();
            requestsOut++;
            Answer answer = Answer.NONE;
            Exception failure = null;
            // The whole exchange, body included, within the bound: a request's own timeout stops at the headers.
            CompletableFuture<HttpResponse<String>> exchange = http.sendAsync(built, HttpResponse.BodyHandlers.ofString());
            try {
                answer = answer(exchange.get(Math.max(1, bound.toMillis()), TimeUnit.MILLISECONDS));
            } catch (TimeoutException | ExecutionException e) {
                exchange.cancel(true);
                failure = e instanceof ExecutionException && e.getCause() instanceof Exception cause ? cause : e;
            } catch (InterruptedException e) {
                exchange.cancel(true);
                Thread.currentThread().interrupt();
                failure = e;
            }
            ClientListener.Attempt attempt = new ClientListener.Attempt(operation.name(), operation.key(), sent, method, uri, start, Instant.now(),
                    answer.status, answer.body, answer.replayed, failure);
            tell(() -> listener.attempted(attempt));
            return answer;
        }
    }

    private int next(int address) {
        return (address + 1) % addresses.size();
    }

    /** Sleeps {@code pause} unless that would end past {@code deadline}, or the thread is interrupted; says whether it slept. */
    private static boolean pausedBefore(Duration pause, Instant deadline) {
        if (!Instant.now().plus(pause).isBefore(deadline)) {
            return false;
        }
        try {
            Thread.sleep(pause.toMillis());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** A listener that throws is the caller's bug; it never costs the caller the outcome or the key. */
    private static void tell(Runnable listening) {
        try {
            listening.run();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "A ClientListener threw; payonce's client went on", e);
        }
    }

    private static Answer answer(HttpResponse<String> response) {
        JsonNode json;
        try {
            json = response.body().isEmpty() ? MissingNode.getInstance() : JSON.readTree(response.body());
        } catch (IOException notJson) {
            json = MissingNode.getInstance();
        }
        return new Answer(response.statusCode(), response.body(), json,
                response.headers().firstValue("Idempotent-Replayed").map("true"::equalsIgnoreCase).orElse(false),
                response.headers().firstValue("Retry-After").flatMap(Retrying::seconds),
                response.headers().firstValue("Location"));
    }

    /** Retry-After in seconds, as payonce writes it, up to an hour; an HTTP date from something in front of it is left to the backoff. */
    private static Optional<Duration> seconds(String retryAfter) {
        try {
            long seconds = Long.parseLong(retryAfter.strip());
            return Optional.of(Duration.ofSeconds(Math.max(0, Math.min(seconds, LONGEST_RETRY_AFTER.toSeconds()))));
        } catch (NumberFormatException notSeconds) {
            return Optional.empty();
        }
    }

    /**
     * {@code location} resolved against {@code address}, where it stays on the same scheme, host and
     * port: the caller's token goes nowhere else, whatever an answer names. A 202 whose Location would
     * lead away is answered by sending the operation again.
     */
    private static Optional<URI> sameOrigin(URI address, String location) {
        try {
            URI resolved = address.resolve(location);
            return address.getScheme().equals(resolved.getScheme()) && Objects.equals(address.getRawAuthority(), resolved.getRawAuthority())
                    ? Optional.of(resolved) : Optional.empty();
        } catch (IllegalArgumentException unreadable) {
            return Optional.empty();
        }
    }

    private static Long idOf(JsonNode json) {
        for (String member : new String[] {"paymentId", "refundId"}) {
            if (json.path(member).canConvertToLong() && json.path(member).asLong() > 0) {
                return json.path(member).asLong();
            }
        }
        return null;
    }
}
