package io.payonce.payment.refund;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.payment.refund.OperatorRefundSettlementRepository.RecordedRefund;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.RefundOutcome;
import io.payonce.processor.Unclear;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What a processor that reads its charge unusually says of a refund settled as not refunded; the usual cases run against the simulator. */
class RefundProcessorVerdictTest {

    private static final CardRefund REFUND = new CardRefund(7, 42, "buyer", "r-1", 500, "EUR", RefundPhase.UNKNOWN, "scope",
            new IdempotencyKey("key-1"), "payonce-refund-7", "ch_1", 3, Duration.ofHours(2), null);

    @Test
    void aChargeThatDoesNotSayHowMuchWasRefundedProvesNothing() {
        ChargeOutcome silent = new ChargeOutcome.Succeeded("ch_1", 500, "eur", "order-42", null);

        assertEquals(ErrorCode.PROCESSOR_DISAGREES, refusal(silent, 0));
    }

    @Test
    void aChargeRefundedLessThanPayonceRecordedDisagrees() {
        assertEquals(ErrorCode.PROCESSOR_DISAGREES, refusal(new ChargeOutcome.Succeeded("ch_1", 500, "eur", "order-42", 100L), 200));
    }

    @Test
    void anotherChargeOrADeclinedOneDisagreesAndAnUnclearOneIsUnavailable() {
        assertEquals(ErrorCode.PROCESSOR_DISAGREES, refusal(new ChargeOutcome.Succeeded("ch_2", 500, "eur", "order-42", 0L), 0));
        assertEquals(ErrorCode.PROCESSOR_DISAGREES, refusal(new ChargeOutcome.Declined("ch_1", "card_declined", null, null, null), 0));
        assertEquals(ErrorCode.PROCESSOR_UNAVAILABLE, refusal(new Unclear("no answer in time"), 0));
    }

    private static ErrorCode refusal(ChargeOutcome charge, long recorded) {
        List<RecordedRefund> recordedRefunds = List.of(new RecordedRefund("re_0", recorded, false, null));
        return assertThrows(ApiException.class, () -> RefundProcessorVerdict.notRefunded(REFUND, new RefundOutcome.Absent(), charge,
                recordedRefunds, Map.of())).code();
    }
}
