package io.payonce.support;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.restassured.response.Response;

import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * Each kind of operation at the processor, as a test of a lifecycle property drives it: one
 * operation of the kind, begun on an order of its own ({@link #begin}), whose request a test sends,
 * repeats, and reads back, and whose objects at the processor it counts. A suite of one property runs
 * for every kind, so that a protection one kind lacks fails it.
 */
public enum OperationKinds {

    /** A card pay of an order of 1800. */
    CHARGE {
        @Override
        public Begun begin() {
            Buyer.Checkout buyer = Buyer.withBalance(0).checkout(AMOUNT);
            return new Begun(this, buyer.order(), () -> buyer.payByCard("tok_visa"), buyer.bearer(), null);
        }
    },

    /** A refund to the card of 900 of an order of 1800 paid by card. */
    REFUND {
        @Override
        public Begun begin() {
            long order = Buyer.withBalance(0).paidByCard(AMOUNT, "tok_visa");
            String charge = Database.forTests().string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'",
                    order);
            String key = Api.newKey();
            String ops = Tokens.ops();
            return new Begun(this, order, () -> Api.refund(ops, order, key, "r-1", REFUNDED), ops, charge);
        }
    };

    static final long AMOUNT = 1800;
    static final long REFUNDED = 900;

    /** An operation of {@code kind} begun on {@code order}; {@code charge} is the charge a refund gives back from. */
    public record Begun(OperationKinds kind, long order, Supplier<Response> request, String bearer, String charge) {

        /** The operation's request, sent once more under its key. */
        public Response send() {
            return request.get();
        }

        /** The next call of this kind for the order meets {@code fault} at the processor. */
        public void failNext(Fault fault) {
            if (kind == CHARGE) {
                processor().failNextChargeOf(order, fault);
            } else {
                processor().failNextRefundOf(order, fault);
            }
        }

        /** How many of the kind's objects the processor made for this operation: charges of the order, or refunds of the charge. */
        public long madeAtProcessor() {
            return kind == CHARGE
                    ? processor().charges().stream().filter(charge -> charge.reference().equals("order-" + order)).count()
                    : processor().refunds().stream().filter(made -> made.charge().equals(charge) && made.succeeded()).count();
        }

        /** How many rows of the kind payonce holds for the order. */
        public long rows(Database db) {
            return db.count(kind == CHARGE ? "SELECT COUNT(*) FROM pay_record WHERE order_id = ?" : "SELECT COUNT(*) FROM refund_record WHERE order_id = ?",
                    order);
        }

        /** The operation as {@code GET /payments/{id}} or {@code GET /refunds/{id}} shows it, from its request's answer. */
        public Response shown(Response answer) {
            return kind == CHARGE ? Api.as(bearer).get("/payments/" + answer.jsonPath().getLong("paymentId"))
                    : Api.as(bearer).get("/refunds/" + answer.jsonPath().getLong("refundId"));
        }

        /** The kind's table, where a test moves time back or a lease out. */
        public String table() {
            return kind == CHARGE ? "pay_record" : "refund_record";
        }

        /** The operation's id in its request's answer. */
        public long id(Response answer) {
            return answer.jsonPath().getLong(kind == CHARGE ? "paymentId" : "refundId");
        }

        /** The phases the operation went through, as {@code GET} shows its history, in the kind's stored words. */
        public List<String> history(Response answer) {
            return shown(answer).jsonPath().getList("history.phase");
        }

        /** The lifecycle's {@code phases} in the kind's stored words (a card payment's SENT is CHARGE_SENT). */
        public List<String> named(String... phases) {
            return Arrays.stream(phases).map(phase -> kind == CHARGE && phase.equals("SENT") ? "CHARGE_SENT" : phase).toList();
        }

        /** How many objects of the kind the processor holds under {@code processorKey}. */
        public long madeUnder(String processorKey) {
            return kind == CHARGE ? processor().charges().stream().filter(charge -> processorKey.equals(charge.key())).count()
                    : processor().refunds().stream().filter(refund -> processorKey.equals(refund.key())).count();
        }

        /** How many requests of the kind reached the processor under {@code processorKey}. */
        public int requestsUnder(String processorKey) {
            return kind == CHARGE ? processor().chargeRequestsUnder(processorKey) : processor().refundRequestsUnder(processorKey);
        }

        /** The processor's own id of the object under the processor key that {@code shown} names. */
        public String madeUnder(Response shown) {
            String key = shown.jsonPath().getString("processorKey");
            return kind == CHARGE ? processor().chargeUnder(key).id() : processor().refundUnder(key).id();
        }

        /** The id {@code shown} recorded as the processor's. */
        public String recorded(Response shown) {
            return shown.jsonPath().getString(kind == CHARGE ? "chargeId" : "processorRefundId");
        }

        /** The order's state once the operation succeeded: PAID, or 900 of it refunded. */
        public String orderAfterSuccess(Database db) {
            return kind == CHARGE ? db.orderStatus(order) : "refunded " + db.refundedAmount(order);
        }

        /** As {@link #orderAfterSuccess} reads when the operation succeeded. */
        public String succeeded() {
            return kind == CHARGE ? "PAID" : "refunded " + REFUNDED;
        }

        /** As {@link #orderAfterSuccess} reads before anything of the operation was recorded. */
        public String before() {
            return kind == CHARGE ? "UNPAID" : "refunded 0";
        }
    }

    /** One operation of the kind, begun on an order of its own. */
    public abstract Begun begin();

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
