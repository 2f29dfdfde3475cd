package io.payonce.errors;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static io.payonce.errors.ErrorCode.Kind.FAILED;
import static io.payonce.errors.ErrorCode.Kind.INVALID;
import static io.payonce.errors.ErrorCode.Kind.NOT_NOW;
import static io.payonce.errors.ErrorCode.Kind.RECORDED;
import static io.payonce.errors.ErrorCode.Kind.REFUSED;
import static io.payonce.errors.ErrorCode.Kind.RETRY_LATER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one classification of the codes: each kind's codes carry the statuses that kind allows, and
 * which codes are stored under a key is pinned, since every repeat of a key depends on it.
 */
class ErrorCodeTest {

    private static final Map<ErrorCode.Kind, Set<Integer>> STATUSES = Map.of(
            INVALID, Set.of(400),
            REFUSED, Set.of(401, 403, 404, 405, 406, 409, 413, 415, 422, 431),
            RECORDED, Set.of(402, 404, 409),
            NOT_NOW, Set.of(409, 503),
            RETRY_LATER, Set.of(409),
            FAILED, Set.of(500));

    @Test
    void everyCodeHasAStatusItsKindAllows() {
        for (ErrorCode code : ErrorCode.values()) {
            assertTrue(STATUSES.get(code.kind()).contains(code.status()), code + " is " + code.kind() + " with " + code.status());
        }
    }

    @Test
    void theRecordedCodesAreTheBusinessOutcomesOfAClaimedKey() {
        assertEquals(EnumSet.of(ErrorCode.INSUFFICIENT_FUNDS, ErrorCode.CARD_DECLINED, ErrorCode.REFUND_FAILED, ErrorCode.ORDER_NOT_FOUND,
                        ErrorCode.ACCOUNT_NOT_FOUND, ErrorCode.ILLEGAL_TRANSITION, ErrorCode.ORDER_SN_CONFLICT, ErrorCode.CURRENCY_MISMATCH,
                        ErrorCode.REFUND_EXCEEDS_PAYMENT, ErrorCode.REFUND_NO_CONFLICT, ErrorCode.ALREADY_APPLIED,
                        ErrorCode.CHARGE_NOT_RECORDED),
                codesOf(RECORDED));
    }

    @Test
    void onlyTheCodesThatMaySucceedLaterCarryRetryAfter() {
        assertEquals(EnumSet.of(ErrorCode.SUBMIT_TOKEN_IN_USE, ErrorCode.IDEMPOTENCY_KEY_IN_USE, ErrorCode.PAYMENT_IN_PROGRESS,
                        ErrorCode.CARD_PAYMENT_PENDING, ErrorCode.REFUND_PENDING, ErrorCode.WORKER_HOLDS_LEASE, ErrorCode.DEPENDENCY_UNAVAILABLE,
                        ErrorCode.PROCESSOR_UNAVAILABLE),
                EnumSet.copyOf(Arrays.stream(ErrorCode.values()).filter(code -> code.kind().retryAfter()).toList()));
        assertEquals(EnumSet.of(ErrorCode.CARD_PAYMENT_PENDING, ErrorCode.REFUND_PENDING), codesOf(RETRY_LATER),
                "the waits for a card processor, which can outlast a queue's pause");
    }

    private static EnumSet<ErrorCode> codesOf(ErrorCode.Kind kind) {
        return EnumSet.copyOf(Arrays.stream(ErrorCode.values()).filter(code -> code.kind() == kind).toList());
    }
}
