package io.payonce.idempotency;

import java.util.function.Function;

/** A row and its write's record, read in one statement ({@link RecordJoin}); the record is null when the key has none. */
public record WithRecord<T>(T row, IdempotencyRecord record) {

    /** The same record beside what {@code mapper} makes of the row; a mapper that refuses refuses the read. */
    public <R> WithRecord<R> map(Function<T, R> mapper) {
        return new WithRecord<>(mapper.apply(row), record);
    }
}
