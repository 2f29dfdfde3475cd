package io.payonce.payment.card;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;

import java.util.Map;

/** A card payment the processor declined, and the 402 its key answers, whoever learnt of the decline. */
record CardDecline(long paymentId, String declineCode) {

    ApiException refusal() {
        return new ApiException(ErrorCode.CARD_DECLINED, Map.of("paymentId", paymentId, "declineCode", declineCode), declineCode);
    }
}
