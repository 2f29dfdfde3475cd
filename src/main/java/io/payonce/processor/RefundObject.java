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
     * none), or {@link Unclear} for a refund that is neither (pending) or too incomplete
     * to settle a refund with: a failure is checked against the refund as closely as a success, since
     * it gives the refund's amount back to the order. Ids are kept exactly or not at all
     * ({@link ProcessorText#id}); the rest of what the processor says is reduced to the characters
     * payonce stores, at the lengths it stores.
     */
    public static RefundOutcome outcome(JsonNode refund) {
        RefundReply reply = RefundReply.of(refund);
        boolean named = reply.id() != null && !reply.id().isEmpty();
        return switch (String.valueOf(reply.status())) {
            case "succeeded" -> !named || reply.amount() == null || ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH) == null
                    ? new Unclear("the processor's refund is incomplete")
                    : new RefundOutcome.Succeeded(ProcessorText.id(reply.id(), ProcessorText.ID_LENGTH),
                    ProcessorText.id(reply.charge(), ProcessorText.ID_LENGTH), reply.amount(),
                    ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH), ProcessorText.compared(reply.reference(), ProcessorText.ID_LENGTH),
                    ProcessorText.compared(reply.key(), ProcessorText.ID_LENGTH));
            case "failed", "canceled" -> !named || reply.charge() == null || reply.amount() == null
                    || ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH) == null
                    ? new Unclear("the processor's refund is incomplete")
                    : failed(reply, "failed");
            default -> new Unclear("the refund is " + ProcessorText.of(reply.status(), ProcessorText.CODE_LENGTH));
        };
    }

    /**
     * The refund failed, with whatever it names of itself, its failure code or {@code otherwise}. A
     * failure gives the refund's amount back, so one that names a charge payonce cannot keep, which
     * is then no charge of payonce's, is no outcome: it cannot be checked against the refund.
     */
    static RefundOutcome failed(RefundReply reply, String otherwise) {
        String chargeId = ProcessorText.id(reply.charge(), ProcessorText.ID_LENGTH);
        if (reply.charge() != null && chargeId == null) {
            return new Unclear("the processor's failed refund names a charge payonce cannot keep");
        }
        String failureCode = ProcessorText.of(reply.failureCode(), ProcessorText.CODE_LENGTH);
        return new RefundOutcome.Failed(ProcessorText.id(reply.id(), ProcessorText.ID_LENGTH), chargeId, reply.amount(),
                ProcessorText.of(reply.currency(), ProcessorText.CODE_LENGTH), ProcessorText.compared(reply.reference(), ProcessorText.ID_LENGTH),
                failureCode == null ? otherwise : failureCode);
    }
}
