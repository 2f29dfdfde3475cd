package io.payonce.idempotency;

/** What a guarded operation produced: the status and body of its answer, before it is stored. */
public record Result(int status, Object body) {

    public static Result ok(Object body) {
        return new Result(200, body);
    }

    public static Result created(Object body) {
        return new Result(201, body);
    }
}
