package io.payonce.bench.chaos;

import io.payonce.errors.ErrorCode;

import java.util.Arrays;

/**
 * Which answers settle an operation, by payonce's own rule ({@link ErrorCode.Kind#retryAfter()}): a client
 * retries with the same key after those, after a 202 (a card pay whose outcome is not known yet),
 * and after no answer or a 5xx from the service or the gateway.
 */
final class Answers {

    private Answers() {
    }

    /** {@code status} 0 stands for no answer; {@code code} is the problem's code, empty for a success or a bare 5xx. */
    static boolean definite(int status, String code) {
        if (status == 0 || status == 202 || status >= 500) {
            return false;
        }
        return status < 400 || Arrays.stream(ErrorCode.values()).noneMatch(known -> known.name().equals(code) && known.kind().retryAfter());
    }
}
