package io.payonce.idempotency;

/**
 * What a guarded operation produced: the status and body of its answer, and for a created resource
 * its path, before it is stored.
 */
public record Result(int status, Object body, String location) {

    public static Result ok(Object body) {
        return new Result(200, body, null);
    }

    public static Result created(Object body) {
        return new Result(201, body, null);
    }

    /** A 201 whose Location names what it created; a replay carries the same Location. */
    public static Result created(Object body, String location) {
        return new Result(201, body, location);
    }
}
