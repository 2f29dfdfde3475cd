package io.payonce.payment.operation;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.processor.ProcessorReport;
import io.payonce.processor.ProcessorText;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one set of checks of what the processor says ({@link Operation#isDescribedBy},
 * {@link Operation#isSettledAs}), run for each kind: a charge, which acts on nothing, and a refund,
 * which acts on its charge. Each check is the same for a success and a failure, but that a success
 * must name what identifies it.
 */
class ProcessorReportChecksTest {

    /** The two kinds as the checks see them. */
    enum Kind {
        CHARGE(null, "order-7"),
        REFUND("ch_1", "order-7-refund-r_1");

        final String actsOn;
        final String reference;

        Kind(String actsOn, String reference) {
            this.actsOn = actsOn;
            this.reference = reference;
        }

        Checked unsettled() {
            return new Checked(Phase.SENT, reference, actsOn, null);
        }

        Checked settled(Phase phase, String processorId) {
            return new Checked(phase, reference, actsOn, processorId);
        }

        ProcessorReport said(boolean succeeded, String id, Long amount, String currency, String reference) {
            return new ProcessorReport(succeeded, id, amount, currency, reference, actsOn);
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aSuccessOrAFailureOfThisOperationDescribesIt(Kind kind) {
        assertTrue(kind.unsettled().isDescribedBy(kind.said(true, "x_1", 1500L, "eur", kind.reference)), "the currency in either case");
        assertTrue(kind.unsettled().isDescribedBy(kind.said(true, "x_1", 1500L, "EUR", null)), "a success that names no reference");
        assertTrue(kind.unsettled().isDescribedBy(kind.said(false, "x_1", 1500L, "EUR", kind.reference)));
        assertTrue(kind.unsettled().isDescribedBy(new ProcessorReport(false, null, null, null, null, null)),
                "a refusal of payonce's own request names nothing");
        assertTrue(kind.unsettled().isDescribedBy(null), "an outcome that is not definite");
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void whateverASuccessOrAFailureNamesOtherwiseIsAnotherOperation(Kind kind) {
        for (boolean succeeded : new boolean[]{true, false}) {
            Checked own = kind.unsettled();
            assertFalse(own.isDescribedBy(kind.said(succeeded, "x_1", 1501L, "EUR", kind.reference)), "another amount");
            assertFalse(own.isDescribedBy(kind.said(succeeded, "x_1", 1500L, "USD", kind.reference)), "another currency");
            assertFalse(own.isDescribedBy(kind.said(succeeded, "x_1", 1500L, "EUR", kind.reference + "0")), "another reference");
            assertFalse(own.isDescribedBy(new ProcessorReport(succeeded, "x_1", 1500L, "EUR", kind.reference, "ch_2")), "another object");
            String reduced = ProcessorText.compared(kind.reference.replace("_", "/"), 64);
            assertFalse(kind.reference.contains("_") && own.isDescribedBy(kind.said(succeeded, "x_1", 1500L, "EUR", reduced)),
                    "a reference payonce could not keep exactly equals none of its own: " + reduced);
            Checked recorded = kind.settled(succeeded ? Phase.SUCCEEDED : Phase.FAILED, "x_1");
            assertFalse(recorded.isDescribedBy(kind.said(succeeded, "x_2", 1500L, "EUR", kind.reference)), "another id than the one recorded");
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aSuccessMustNameItsAmountCurrencyObjectAndOnceRecordedItsId(Kind kind) {
        assertFalse(kind.unsettled().isDescribedBy(kind.said(true, "x_1", null, "EUR", null)));
        assertFalse(kind.unsettled().isDescribedBy(kind.said(true, "x_1", 1500L, null, null)));
        assertFalse(kind.settled(Phase.SUCCEEDED, "x_1").isDescribedBy(kind.said(true, null, 1500L, "EUR", null)),
                "an id payonce could not keep is not the one recorded");
        assertTrue(kind.actsOn == null
                || !kind.unsettled().isDescribedBy(new ProcessorReport(true, "x_1", 1500L, "EUR", null, null)), "a refund names its charge");
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aSettledOperationRepeatsOnlyItsOwnOutcome(Kind kind) {
        assertTrue(kind.settled(Phase.SUCCEEDED, "x_1").isSettledAs(kind.said(true, "x_1", 1500L, "EUR", kind.reference)));
        assertTrue(kind.settled(Phase.FAILED, "x_1").isSettledAs(kind.said(false, null, 1500L, "EUR", null)));
        assertFalse(kind.settled(Phase.SUCCEEDED, "x_1").isSettledAs(kind.said(true, "x_2", 1500L, "EUR", kind.reference)), "a second one");
        assertFalse(kind.settled(Phase.SUCCEEDED, "x_1").isSettledAs(kind.said(false, "x_1", 1500L, "EUR", kind.reference)), "another phase");
        assertFalse(kind.settled(Phase.SUCCEEDED, null).isSettledAs(kind.said(true, null, 1500L, "EUR", kind.reference)),
                "a success whose id payonce could not keep is told from no other");
    }

    /** An operation of 1500 EUR, as a kind's record holds one. */
    private record Checked(Phase lifecyclePhase, String reference, String actsOn, String processorId) implements Operation<Checked> {

        @Override
        public long id() {
            return 1;
        }

        @Override
        public String scope() {
            return "user-1";
        }

        @Override
        public IdempotencyKey key() {
            return new IdempotencyKey("key-1");
        }

        @Override
        public Checked at(Phase phase) {
            return new Checked(phase, reference, actsOn, processorId);
        }

        @Override
        public String phaseNamed(Phase phase) {
            return phase.name();
        }

        @Override
        public String processorKey() {
            return "payonce-key";
        }

        @Override
        public long amount() {
            return 1500;
        }

        @Override
        public String currency() {
            return "EUR";
        }

        @Override
        public Duration sinceFirstSent() {
            return null;
        }

        @Override
        public int attempts() {
            return 1;
        }

        @Override
        public Checked nextAttempt() {
            return this;
        }

        @Override
        public long orderId() {
            return 1;
        }

        @Override
        public String userId() {
            return "user-1";
        }
    }
}
