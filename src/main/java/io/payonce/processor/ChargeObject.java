package io.payonce.processor;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A charge object as the processor writes it, in the answer to a charge or a lookup and in the
 * events it pushes: read with one set of rules wherever it comes from, so that a webhook settles a
 * payment exactly as a lookup would.
 */
public final class ChargeObject {

    private ChargeObject() {
    }

    /**
     * What the charge says of its outcome: {@link ChargeOutcome.Succeeded} with the charge's id,
     * amount, currency and reference, and how much of it was refunded, {@link ChargeOutcome.Declined} with its decline code, or
     * {@link Unclear} for a charge that is neither (pending) or too incomplete to settle a
     * payment with. The charge's id is kept exactly or not at all ({@link ProcessorText#id}): a
     * charge that succeeded under an id payonce cannot keep still took the money, and is recorded
     * without an id. The rest of what the processor says is reduced to the characters payonce
     * stores, at the lengths it stores.
     */
    public static ChargeOutcome outcome(JsonNode charge) {
        ChargeReply reply = ChargeReply.of(charge);
        String chargeId = ProcessorText.id(reply.id(), ProcessorText.ID_LENGTH);
        String declineCode = ProcessorText.of(reply.declineCode(), ProcessorText.CODE_LENGTH);
        return switch (String.valueOf(reply.status())) {
            case "succeeded" -> reply.id() == null || reply.id().isEmpty() || reply.amount() == null
                    || ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH) == null
                    ? new Unclear("the processor's charge is incomplete")
                    : new ChargeOutcome.Succeeded(chargeId, reply.amount(), ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH),
                    ProcessorText.compared(reply.reference(), ProcessorText.CODE_LENGTH), reply.amountRefunded());
            case "declined", "failed" -> declined(reply, chargeId, declineCode == null ? "declined" : declineCode);
            default -> new Unclear("the charge is " + ProcessorText.of(reply.status(), ProcessorText.CODE_LENGTH));
        };
    }

    /** A declined charge with whatever it says of itself, reduced as a success's fields are. */
    static ChargeOutcome.Declined declined(ChargeReply reply, String chargeId, String declineCode) {
        return new ChargeOutcome.Declined(chargeId, declineCode, reply.amount(), ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH),
                ProcessorText.compared(reply.reference(), ProcessorText.CODE_LENGTH));
    }

    /** The charge's id at the processor, as payonce keeps it; null when it has none or one payonce cannot keep. */
    public static String id(JsonNode charge) {
        return ProcessorText.id(ChargeReply.text(charge, "id"), ProcessorText.ID_LENGTH);
    }

    /** What the charge says it is for, as payonce stores it; null when it says nothing. */
    static String reference(JsonNode charge) {
        return ProcessorText.compared(ChargeReply.text(charge, "reference"), ProcessorText.CODE_LENGTH);
    }
}
