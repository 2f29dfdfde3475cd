package io.payonce.processor;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A refund object as the processor writes it, in the answer to a refund or a lookup and in the
 * events it pushes: read with one set of rules wherever it comes from, so that a webhook settles a
 * refund exactly as a lookup would.
 */
public final class RefundObject {

    private RefundObject() {
    }

    /**
     * What the refund says of its outcome: {@link RefundOutcome.Succeeded} with the refund's id, the
     * charge it refunded, its amount and currency, and its reference and key where it names them,
     * {@link RefundOutcome.Failed} with the same and its failure code ({@code failed} when it names
     * none), or {@link RefundOutcome.Unknown} for a refund that is neither (pending) or too incomplete
     * to settle a refund with: a failure is checked against the refund as closely as a success, since
     * it gives the refund's amount back to the order. What the processor says is reduced
     * to the characters payonce stores, at the lengths it stores.
     */
    public static RefundOutcome outcome(JsonNode refund) {
        RefundReply reply = RefundReply.of(refund);
        String refundId = ProcessorText.of(reply.id(), ProcessorText.REFUND_ID_LENGTH);
        String failureCode = ProcessorText.of(reply.failureCode(), ProcessorText.CODE_LENGTH);
        String chargeId = ProcessorText.of(reply.charge(), ProcessorText.CHARGE_ID_LENGTH);
        String currency = ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH);
        return switch (String.valueOf(reply.status())) {
            case "succeeded" -> refundId == null || reply.amount() == null || reply.currency() == null
                    ? new RefundOutcome.Unknown("the processor's refund is incomplete")
                    : new RefundOutcome.Succeeded(refundId, ProcessorText.of(reply.charge(), ProcessorText.CHARGE_ID_LENGTH), reply.amount(),
                    ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH), ProcessorText.of(reply.reference(), ProcessorText.REFUND_ID_LENGTH),
                    ProcessorText.of(reply.key(), ProcessorText.REFUND_ID_LENGTH));
            case "failed", "canceled" -> refundId == null || chargeId == null || reply.amount() == null || currency == null
                    ? new RefundOutcome.Unknown("the processor's refund is incomplete")
                    : new RefundOutcome.Failed(refundId, chargeId, reply.amount(), currency, failureCode == null ? "failed" : failureCode);
            default -> new RefundOutcome.Unknown("the refund is " + ProcessorText.of(reply.status(), ProcessorText.CODE_LENGTH));
        };
    }
}
