package io.payonce.commands.outcome;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;

/** A card pay's 409 PAYMENT_IN_PROGRESS: its twin holds the charge, for as long as the processor takes. */
public final class TwinCharging extends ApiException {

    public TwinCharging() {
        super(ErrorCode.PAYMENT_IN_PROGRESS);
    }
}
