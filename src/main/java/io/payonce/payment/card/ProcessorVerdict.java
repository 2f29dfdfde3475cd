package io.payonce.payment.card;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.ChargesFor;
import io.payonce.payment.operation.Verdicts;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

import static io.payonce.payment.operation.Verdicts.disagrees;
import static io.payonce.payment.operation.Verdicts.requireAnswer;

/**
 * What the processor says of an operator's settlement of a card payment ({@link Verdicts}): the
 * charge it holds under the payment's own key, and the charge the operator names for a settlement as
 * charged, or the processor's list of the order's charges for one as not charged.
 */
final class ProcessorVerdict {

    /** How many charges of the order's list the verdict describes one by one. */
    private static final int LISTED = 3;

    private ProcessorVerdict() {
    }

    /** The processor's confirmation that {@code payment} charged the card by the charge the operator named ({@link Verdicts#succeeded}). */
    static String charged(CardPayment payment, String chargeId, ChargeOutcome underKey, ChargeOutcome named) {
        return Verdicts.succeeded(chargeId, underKey, named, "by id: " + describe(named) + "; under the payment's key: " + describe(underKey),
                isThisPaymentsCharge(payment, chargeId, named),
                "payment " + payment.id() + " is " + payment.amount() + " " + payment.currency() + " for " + payment.reference());
    }

    /**
     * The processor's confirmation that {@code payment} charged nothing: its key holds no charge that
     * succeeded, and the processor's list of the charges for the payment's order ({@code forOrder})
     * holds none but declined ones: a charge that succeeded, or whose outcome the processor leaves
     * unclear (pending), may have taken the money. The key alone proves nothing, and past
     * {@code keyRetention} after the first send the verdict says so; the list counts every charge made
     * for the order, under any key or none, so a charge made and forgotten shows there. Without the
     * whole list nothing is settled: a list that may yet come is PROCESSOR_UNAVAILABLE, none at all a
     * disagreement.
     */
    static String notCharged(CardPayment payment, ChargeOutcome underKey, ChargesFor forOrder, Duration keyRetention) {
        requireAnswer(underKey);
        String keyHolds = "under the payment's key: " + describe(underKey);
        if (payment.sinceFirstSent().compareTo(keyRetention) > 0) {
            keyHolds += " (past the processor's key retention: proves nothing)";
        }
        if (underKey instanceof ChargeOutcome.Succeeded) {
            throw disagrees(keyHolds);
        }
        if (forOrder instanceof ChargesFor.Unclear unclear) {
            if (unclear.outage()) {
                throw new ApiException(ErrorCode.PROCESSOR_UNAVAILABLE, unclear.reason());
            }
            throw disagrees(keyHolds + "; no list of the charges for " + payment.reference() + " (" + unclear.reason()
                    + "), and without it nothing proves the card was not charged");
        }
        List<ChargeOutcome> charges = ((ChargesFor.Listed) forOrder).charges();
        List<ChargeOutcome> notDeclined = charges.stream().filter(charge -> !(charge instanceof ChargeOutcome.Declined)).toList();
        if (!notDeclined.isEmpty()) {
            throw disagrees(keyHolds + "; charges for " + payment.reference() + ": " + listed(notDeclined));
        }
        return keyHolds + "; charges for " + payment.reference() + ": " + listed(charges);
    }

    /** The first few charges of a list as the processor described them, and how many more there were. */
    private static String listed(List<ChargeOutcome> charges) {
        if (charges.isEmpty()) {
            return "none";
        }
        String first = charges.stream().limit(LISTED).map(ProcessorVerdict::describe).collect(Collectors.joining(", "));
        return charges.size() > LISTED ? first + " and " + (charges.size() - LISTED) + " more" : first;
    }

    /**
     * {@code charge} is the one named {@code chargeId}, and this payment's: it must say what it paid
     * for, since without a reference it could be any order's charge of that amount.
     */
    private static boolean isThisPaymentsCharge(CardPayment payment, String chargeId, ChargeOutcome charge) {
        return charge instanceof ChargeOutcome.Succeeded charged && Objects.equals(chargeId, charged.chargeId())
                && charged.reference() != null && payment.isDescribedBy(charged.report());
    }

    private static String describe(ChargeOutcome outcome) {
        return Verdicts.described(outcome, "charge", "declined", null);
    }
}
