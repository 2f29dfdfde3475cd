package io.payonce.idempotency;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.errors.ApiException;
import io.payonce.errors.Problem;
import io.payonce.metrics.RepeatDefence;

/**
 * The answer to a write: status, body and, for a created resource, its Location. Every repeat of a
 * write, however it was recognised (the same key, the same submit token, the same natural key such
 * as an order number or a refund number), answers with the first answer's status and headers and
 * says so in one way only: {@code Idempotent-Replayed: true}. {@code caughtBy} names the defence
 * that recognised the repeat, null for a first answer.
 *
 * @param body the view to send, or, for an answer stored under a key, its JSON text exactly as stored
 */
public record Answer(int status, Object body, String location, RepeatDefence caughtBy) {

    /** The header, or AMQP reply header, that marks a repeat's answer; absent or false on a first answer. */
    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    public static Answer ok(Object body) {
        return new Answer(200, body, null, null);
    }

    public static Answer created(Object body) {
        return new Answer(201, body, null, null);
    }

    /** A 201 whose Location names what it created; every repeat carries the same Location. */
    public static Answer created(Object body, String location) {
        return new Answer(201, body, location, null);
    }

    /**
     * A 202: the write was accepted and goes on, its outcome not known yet; Location names where the
     * client follows it.
     */
    public static Answer accepted(Object body, String location) {
        return new Answer(202, body, location, null);
    }

    /** A refusal as its answer: the problem, naming {@code instance}. */
    public static Answer problem(ApiException refused, String instance) {
        return new Answer(refused.code().status(), Problem.of(refused, instance), null, null);
    }

    /** This answer, given to a request that {@code defence} recognised as a repeat of an earlier one. */
    public Answer repeatCaughtBy(RepeatDefence defence) {
        return new Answer(status, body, location, defence);
    }

    public Answer withJson(String json) {
        return new Answer(status, json, location, caughtBy);
    }

    /** The body as JSON text: a stored answer's text as it is, a view written by {@code json}. */
    public String bodyJson(ObjectMapper json) {
        if (body instanceof String stored) {
            return stored;
        }
        try {
            return json.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Answers are plain records and always serialize", e);
        }
    }

    public boolean repeat() {
        return caughtBy != null;
    }
}
