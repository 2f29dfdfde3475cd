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
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Sends an operation until its answer is definite, or its deadline or attempts run out, always the
 * same request under the same key: after no answer, a 5xx, or a code of {@link Codes#RETRY_WITH_THE_SAME_KEY},
 * it waits as the answer's {@code Retry-After} says, or backs off, and sends it again, to the next
 * address where there are several. A 202 is no failure: it reads the {@code Location} the answer
 * names until the state there is definite, then sends the operation once more to be told its stored
 * answer, the one every repeat gets.
 */
final class Retrying {

    private static final ObjectMapper JSON = new ObjectMapper();

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

    /** An answer: 0 for none. */
    private record Answer(int status, String body, JsonNode json, boolean replayed, Optional<Duration> retryAfter, Optional<String> location) {
    }

    <T> Outcome<T> run(Operation<T> operation) {
        Outcome<T> outcome = attempts(operation);
        listener.ended(operation.name(), outcome);
        return outcome;
    }

    private <T> Outcome<T> attempts(Operation<T> operation) {
        Instant deadline = Instant.now().plus(policy.deadline());
        int address = ThreadLocalRandom.current().nextInt(addresses.size());
        int sent = 0;
        int reads = 0;
        URI watching = null;
        boolean settled = false;
        Long id = null;
        String lastAnswer = "none";
        while (true) {
            boolean polling = watching != null;
            // Once a read shows the outcome, one more request collects the stored answer, whatever the attempts so far.
            if (!polling && sent >= policy.maxAttempts() && !settled) {
                return new Outcome.Pending<>(operation.key(), id, lastAnswer);
            }
            sent += polling ? 0 : 1;
            reads += polling ? 1 : 0;
            settled = false;
            Answer answer = polling ? send(operation, "GET", watching, null, sent, deadline)
                    : send(operation, operation.method(), addresses.get(address).resolve(operation.path()), operation.body(), sent, deadline);
            if (Thread.currentThread().isInterrupted()) {
                return new Outcome.Pending<>(operation.key(), id, "interrupted");
            }
            lastAnswer = answer.status == 0 ? "no answer" : answer.status + code(answer).map(code -> " " + code).orElse("");
            Duration backoff = policy.backoffAfter(sent + reads);
            Duration pause;
            if (polling) {
                if (answer.status == 200 && operation.definite().test(answer.json)) {
                    watching = null;
                    settled = true;
                    continue;
                }
                pause = answer.retryAfter.orElse(backoff);
            } else if (answer.status == 202) {
                id = idOf(answer.json);
                URI answeredBy = addresses.get(address);
                watching = answer.location.flatMap(location -> sameOrigin(answeredBy, location)).orElse(null);
                pause = backoff;
            } else if (answer.status / 100 == 2) {
                return new Outcome.Succeeded<>(operation.key(), operation.value().apply(answer.json), answer.replayed);
            } else if (answer.status == 402) {
                return new Outcome.Declined<>(operation.key(), Problem.of(402, answer.json));
            } else if (answer.status == 0 || answer.status >= 500 || code(answer).filter(Codes.RETRY_WITH_THE_SAME_KEY::contains).isPresent()) {
                pause = answer.retryAfter.orElse(backoff);
                address = answer.status == 0 || answer.status >= 500 ? (address + 1) % addresses.size() : address;
            } else {
                return new Outcome.Refused<>(operation.key(), Problem.of(answer.status, answer.json));
            }
            if (!pausedBefore(pause, deadline)) {
                return new Outcome.Pending<>(operation.key(), id, lastAnswer);
            }
        }
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

    private <T> Answer send(Operation<T> operation, String method, URI uri, String body, int number, Instant deadline) {
        Duration left = Duration.between(Instant.now(), deadline);
        Duration timeout = policy.timeoutOf(number).compareTo(left) < 0 ? policy.timeoutOf(number) : left;
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(timeout.isNegative() || timeout.isZero() ? Duration.ofMillis(1) : timeout)
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
        Instant start = Instant.now();
        Answer answer;
        Exception failure = null;
        try {
            answer = answer(http.send(request.build(), HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            failure = e;
            answer = new Answer(0, "", MissingNode.getInstance(), false, Optional.empty(), Optional.empty());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
            answer = new Answer(0, "", MissingNode.getInstance(), false, Optional.empty(), Optional.empty());
        }
        listener.attempted(new ClientListener.Attempt(operation.name(), operation.key(), number, method, uri, start, Instant.now(),
                answer.status, answer.body, answer.replayed, failure));
        return answer;
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

    /** Retry-After in seconds, as payonce writes it; an HTTP date from something in front of it is left to the backoff. */
    private static Optional<Duration> seconds(String retryAfter) {
        try {
            return Optional.of(Duration.ofSeconds(Math.max(0, Long.parseLong(retryAfter.strip()))));
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

    private static Optional<String> code(Answer answer) {
        JsonNode code = answer.json.path("code");
        return code.isTextual() ? Optional.of(code.asText()) : Optional.empty();
    }

    private static Long idOf(JsonNode json) {
        for (String member : new String[] {"paymentId", "refundId"}) {
            if (json.path(member).canConvertToLong()) {
                return json.path(member).asLong();
            }
        }
        return null;
    }
}
