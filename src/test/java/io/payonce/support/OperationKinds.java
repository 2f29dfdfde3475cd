package io.payonce.support;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Each kind of operation at the processor, as a test of a lifecycle property drives it: one
 * operation of the kind, begun on an order of its own ({@link #begin}), whose request a test sends,
 * repeats, and reads back, whose objects at the processor it counts, and which an operator settles
 * in the kind's words. A suite of one property runs for every kind, so that a protection one kind
 * lacks fails it.
 */
public enum OperationKinds {

    /** A card pay of an order of 1800. */
    CHARGE {
        @Override
        Begun begin(String cardToken) {
            Buyer.Checkout buyer = Buyer.withBalance(0).checkout(AMOUNT);
            return new Begun(this, buyer.order(), () -> buyer.payByCard(cardToken), buyer.bearer(), null);
        }

        @Override
        public long throughTheBalance() {
            Response paid = Buyer.withBalance(AMOUNT).checkout(AMOUNT).pay();
            assertEquals(201, paid.statusCode(), paid.asString());
            return paid.jsonPath().getLong("paymentId");
        }
    },

    /** A refund to the card of 900 of an order of 1800 paid by card. */
    REFUND {
        @Override
        Begun begin(String cardToken) {
            long order = Buyer.withBalance(0).paidByCard(AMOUNT, cardToken);
            String charge = Database.forTests().string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'",
                    order);
            String key = Api.newKey();
            String ops = Tokens.ops();
            return new Begun(this, order, () -> Api.refund(ops, order, key, REFUND_NO, REFUNDED), ops, charge);
        }

        @Override
        public long throughTheBalance() {
            Buyer.Checkout paid = Buyer.withBalance(AMOUNT).checkout(AMOUNT);
            Response payment = paid.pay();
            assertEquals(201, payment.statusCode(), payment.asString());
            return Api.refund(Tokens.ops(), paid.order(), Api.newKey(), REFUND_NO, REFUNDED).jsonPath().getLong("refundId");
        }
    };

    static final long AMOUNT = 1800;
    static final long REFUNDED = 900;
    /** The refund's number within its order, which names it in its reference at the processor. */
    static final String REFUND_NO = "r-1";

    /** An operation of {@code kind} begun on {@code order}; {@code charge} is the charge a refund gives back from. */
    public record Begun(OperationKinds kind, long order, Supplier<Response> request, String bearer, String charge) {

        /** A card payment's words for the lifecycle's phases, where they are its own. */
        private static final Map<String, String> CARD_PHASES = Map.of("SENT", "CHARGE_SENT", "FAILED", "DECLINED");

        /** The operation's request, sent once more under its key. */
        public Response send() {
            return request.get();
        }

        /**
         * The operation's request under a new key, once what the first one held is free again: the card
         * (tok_visa) charged for the order, or 900 more of it refunded under another refund number.
         */
        public Response sendAnew() {
            return kind == CHARGE ? Api.payByCard(bearer, order, Api.newKey(), "tok_visa")
                    : Api.refund(bearer, order, Api.newKey(), "r-2", REFUNDED);
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
            return Api.as(bearer).get(path(id(answer)));
        }

        /** Operation {@code id} of the kind as {@code GET} shows it to ops, an operator's settlement included. */
        public Response shownToOps(long id) {
            return Api.as(Tokens.ops()).get(path(id));
        }

        /** The kind's table, where a test moves time back or a lease out. */
        public String table() {
            return kind == CHARGE ? "pay_record" : "refund_record";
        }

        /** The operation's id in its request's answer, and in an operator's settlement of it. */
        public long id(Response answer) {
            return answer.jsonPath().getLong(kind == CHARGE ? "paymentId" : "refundId");
        }

        /** The phases the operation went through, as {@code GET} shows its history, in the kind's stored words. */
        public List<String> history(Response answer) {
            return shown(answer).jsonPath().getList("history.phase");
        }

        /** The phases operation {@code id} of the kind went through, as its history rows hold them. */
        public List<String> phases(Database db, long id) {
            return kind == CHARGE ? db.paymentPhases(id) : db.refundPhases(id);
        }

        /** Operation {@code id}'s phase, as stored. */
        public String phase(Database db, long id) {
            return kind == CHARGE ? db.paymentPhase(id) : db.refundPhase(id);
        }

        /**
         * The lifecycle's {@code phases} in the kind's stored words (a card payment's SENT is CHARGE_SENT,
         * its FAILED DECLINED).
         */
        public List<String> named(String... phases) {
            return Arrays.stream(phases).map(phase -> kind == CHARGE ? CARD_PHASES.getOrDefault(phase, phase) : phase).toList();
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

        /** The processor's own id of the object under the processor key that {@code shown} names; there must be one. */
        public String madeUnder(Response shown) {
            String key = shown.jsonPath().getString("processorKey");
            return Objects.requireNonNull(idUnder(key), "the processor holds nothing under " + key);
        }

        /** The processor's own id of the object of the kind it holds under {@code processorKey}, or null where it holds none. */
        public String idUnder(String processorKey) {
            if (kind == CHARGE) {
                ProcessorSimulator.Charge made = processor().chargeUnder(processorKey);
                return made == null ? null : made.id();
            }
            ProcessorSimulator.Refund made = processor().refundUnder(processorKey);
            return made == null ? null : made.id();
        }

        /** The key operation {@code id} carries at the processor. */
        public String processorKey(Database db, long id) {
            return kind == CHARGE ? db.processorKeyOfPayment(id) : db.processorKeyOfRefund(id);
        }

        /** The id {@code shown} recorded as the processor's. */
        public String recorded(Response shown) {
            return shown.jsonPath().getString(kind.idField());
        }

        /** The processor's object operation {@code id} recorded as its own; null before its outcome. */
        public String recorded(Database db, long id) {
            return kind == CHARGE ? db.chargeIdOfPayment(id) : db.processorRefundIdOf(id);
        }

        /** Operation {@code id} records {@code processorId} as its own, as if it had settled by it. */
        public void recordOn(Database db, long id, String processorId) {
            db.update(kind == CHARGE ? "UPDATE pay_record SET processor_charge_id = ? WHERE id = ?"
                    : "UPDATE refund_record SET processor_refund_id = ? WHERE id = ?", processorId, id);
        }

        /** The order's state as the operation leaves it: its status, and for a refund how much of the order its refunds hold. */
        public String orderNow(Database db) {
            return kind == CHARGE ? db.orderStatus(order) : db.orderStatus(order) + ", refunded " + db.refundedAmount(order);
        }

        /** As {@link #orderNow} reads once the operation succeeded: PAID, or 900 of it refunded. */
        public String succeeded() {
            return kind == CHARGE ? "PAID" : "PAID, refunded " + REFUNDED;
        }

        /** As {@link #orderNow} reads while the operation's outcome is unknown: PAYING, or 900 of it held for the refund. */
        public String whileUnknown() {
            return kind == CHARGE ? "PAYING" : "PAID, refunded " + REFUNDED;
        }

        /** As {@link #orderNow} reads before anything of the operation was recorded, or once it failed: UNPAID, or none of it refunded. */
        public String before() {
            return kind == CHARGE ? "UNPAID" : "PAID, refunded 0";
        }

        /** The operation's amount at the processor: the order's 1800, or 900 of it. */
        public long amount() {
            return kind == CHARGE ? AMOUNT : REFUNDED;
        }

        /** What the operation says at the processor it is for: its order, or its order and refund number. */
        public String reference() {
            return kind == CHARGE ? "order-" + order : "order-" + order + "-refund-" + REFUND_NO;
        }

        /** A succeeded object of this operation that the processor finds only by its id (as after forgetting its key); its id. */
        public String foundOnlyById() {
            return foundOnlyById(amount(), "EUR", reference());
        }

        /**
         * A succeeded object of the kind of {@code amount} {@code currency} for {@code reference} (null:
         * none), of this refund's charge, that the processor finds only by its id; its id. Such a refund
         * is not counted against its charge.
         */
        public String foundOnlyById(long amount, String currency, String reference) {
            return kind == CHARGE ? processor().chargeWithoutKey(amount, currency, reference).id()
                    : processor().refundFoundOnlyById(charge, amount, currency, reference, null).id();
        }

        /** As {@link #foundOnlyById()}, under the id {@code id}, as the processor wrote it. */
        public String foundOnlyByItsId(String id) {
            return kind == CHARGE ? processor().chargeWithoutKey(id, amount(), "EUR", reference()).id()
                    : processor().refundFoundOnlyById(id, charge, amount(), "EUR", reference()).id();
        }

        /** How many of the order's requests of the kind the processor holds in flight now ({@link Fault#HELD}). */
        public int held() {
            return kind == CHARGE ? processor().heldChargesOf(order) : processor().heldRefundsOf(order);
        }

        /** The order's requests held at the processor are made and answered now. */
        public void release() {
            processor().release(order);
        }

        /** An operator's settlement of operation {@code id} of the kind, {@code body} under {@code key}: POST .../{id}/settlement. */
        public Response settle(String bearer, long id, String key, Object body) {
            return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON).body(body).post(path(id) + "/settlement");
        }

        /** The refusal of a settlement of an id no operation of the kind has. */
        public String notFound() {
            return kind == CHARGE ? "PAYMENT_NOT_FOUND" : "REFUND_NOT_FOUND";
        }

        /** The refusal of a settlement that names the processor's object another operation of the kind recorded already. */
        public String recordedElsewhere() {
            return kind == CHARGE ? "CHARGE_ALREADY_RECORDED" : "REFUND_ALREADY_RECORDED";
        }

        /** The code of the 402 the key of an operation that failed answers: CARD_DECLINED, REFUND_FAILED. */
        public String failedCode() {
            return kind == CHARGE ? "CARD_DECLINED" : "REFUND_FAILED";
        }

        /** Why that 402 says the operation failed: its declineCode, or its failureCode. */
        public String failedBecause(Response answer) {
            return answer.jsonPath().getString(kind == CHARGE ? "declineCode" : "failureCode");
        }

        /** The event of the money an operation of the kind moved: payment.succeeded, refund.created. */
        public String succeededEvent() {
            return kind == CHARGE ? "payment.succeeded" : "refund.created";
        }

        /** The event of an operator's settlement of an operation of the kind. */
        public String settledEvent() {
            return kind == CHARGE ? "payment.settled-by-operator" : "refund.settled-by-operator";
        }

        /** How many events of {@code type} name operation {@code id}. */
        public long events(Database db, long id, String type) {
            return db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = ? AND ref_id = ?", type, Long.toString(id));
        }

        /** How many events of any type of the kind (payment.*, refund.*) name operation {@code id}. */
        public long anyEvents(Database db, long id) {
            return db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type LIKE ? AND ref_id = ?", kind == CHARGE ? "payment.%" : "refund.%",
                    Long.toString(id));
        }

        /** How many audit rows of operators' settlements operation {@code id} has. */
        public long settlements(Database db, long id) {
            return db.count(kind == CHARGE ? "SELECT COUNT(*) FROM operator_settlement WHERE payment_id = ?"
                    : "SELECT COUNT(*) FROM refund_settlement WHERE refund_id = ?", id);
        }

        /** The audit row of the settlement of operation {@code id}: operator, key, outcome, the processor's object ("-": none) and reason. */
        public String audited(Database db, long id) {
            return db.string(kind == CHARGE
                    ? "SELECT CONCAT_WS('|', operator_id, idem_key, outcome, COALESCE(charge_id, '-'), reason) FROM operator_settlement "
                            + "WHERE payment_id = ?"
                    : "SELECT CONCAT_WS('|', operator_id, idem_key, outcome, COALESCE(processor_refund_id, '-'), reason) FROM refund_settlement "
                            + "WHERE refund_id = ?", id);
        }

        /** What the processor said of the operation's key, as an operator's settlement reports it: "under the payment's key: ". */
        public String underKey() {
            return kind == CHARGE ? "under the payment's key: " : "under the refund's key: ";
        }

        /** What a lookup that finds no object of the kind says: "no charge", "no refund". */
        public String none() {
            return kind == CHARGE ? "no charge" : "no refund";
        }

        /** How a settlement reports this operation's object {@code id} the processor made: its amount and what it is for. */
        public String said(String id) {
            return kind == CHARGE ? id + " succeeded, " + AMOUNT + " eur for " + reference()
                    : id + " succeeded, " + REFUNDED + " eur of charge " + charge + " for " + reference();
        }

        /** How a settlement reports the object {@code id} of the kind that the processor refused: declined, or failed. */
        public String saidOfRefused(String id) {
            return kind == CHARGE ? id + " declined, card_declined" : id + " failed, expired_or_canceled_card";
        }

        /**
         * What the processor said when it proved that this operation made nothing, and nothing else was
         * made or recorded: nothing under its key, and no charge listed for the order, or the charge
         * refunded exactly what payonce recorded of it, none.
         */
        public String saidOfNothingMade() {
            return kind == CHARGE ? underKey() + none() + "; charges for " + reference() + ": none"
                    : underKey() + none() + "; its charge by id: " + charge + " succeeded, 0 of " + AMOUNT + " eur refunded, as payonce recorded";
        }

        /**
         * Whether a settlement as not made is still proven while the processor holds an object of the
         * operation found only by its id ({@link #foundOnlyById()}): a refund's proof is its charge's
         * refunded total, which such a refund does not raise; a card payment's is the processor's list
         * of the order's charges, which shows such a charge.
         */
        public boolean notMadeProvenBesideAnObjectFoundOnlyById() {
            return kind == REFUND;
        }

        /**
         * The row an operator's settlement of operation {@code id} locks first, and how its statement
         * begins: a payment's compare-and-set on itself; a refund's order ({@code OrderRepository}).
         */
        public Lock lockedFirst(long id) {
            return kind == CHARGE ? compareAndSet(id) : new Lock("orders", order, "SELECT o.id, o.order_sn");
        }

        /** The compare-and-set an operator's settlement of operation {@code id} ends with, on the operation's row. */
        public Lock compareAndSet(long id) {
            return new Lock(table(), id, "UPDATE " + table() + " SET phase = ");
        }

        private String path(long id) {
            return (kind == CHARGE ? "/payments/" : "/refunds/") + id;
        }

        // Webhooks

        /** The processor's object of the operation {@code id}, its charge or its refund, as the processor's events carry it. */
        public JsonObject processorObject(Database db, long id) {
            String key = db.string("SELECT processor_key FROM " + table() + " WHERE id = ?", id);
            return kind == CHARGE ? processor().chargeUnder(key).json() : processor().refundUnder(key).json();
        }

        /** How many phases, of any operation of the kind, the processor's event {@code eventId} moved. */
        public long movedBy(Database db, String eventId) {
            return db.count("SELECT COUNT(*) FROM " + historyTable() + " WHERE event_id = ?", eventId);
        }

        /** The event that moved the operation {@code id} into {@code phase}, in the kind's stored words; null where payonce's own call did. */
        public String movedInto(Database db, long id, String phase) {
            return db.string("SELECT event_id FROM " + historyTable() + " WHERE " + idColumn() + " = ? AND phase = ?", id, phase);
        }

        /** How often the operation {@code id} entered {@code phase}: once at most, whoever settled it. */
        public long entered(Database db, long id, String phase) {
            return db.count("SELECT COUNT(*) FROM " + historyTable() + " WHERE " + idColumn() + " = ? AND phase = ?", id, phase);
        }

        /** The operation {@code id}'s events of a success in the outbox: payment.succeeded, or refund.created. */
        public long successEvents(Database db, long id) {
            return db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = ? AND ref_id = ?",
                    kind == CHARGE ? "payment.succeeded" : "refund.created", Long.toString(id));
        }

        /**
         * The operation of the kind that the inbox keeps the event {@code eventId} against, recorded with
         * {@code outcome}: its id, 0 when the row names none; no such row fails.
         */
        public long kept(Database db, String eventId, String outcome) {
            return db.count("SELECT " + idColumn() + " FROM processor_event WHERE event_id = ? AND outcome = ?", eventId, outcome);
        }

        /** The error code of the 402 the operation's key answers once the processor refused it. */
        public String refusal() {
            return kind == CHARGE ? "CARD_DECLINED" : "REFUND_FAILED";
        }

        /** The processor's reason for a refusal, as a 402 or the operation's {@code GET} names it: its decline or failure code. */
        public String failureCode(Response answer) {
            return answer.jsonPath().getString(kind == CHARGE ? "declineCode" : "failureCode");
        }

        /** The row that the processor's events about the operation {@code id} lock first, where a test holds them: the payment, or its order. */
        public EventLock eventLock(long id) {
            return kind == CHARGE ? new EventLock("pay_record", id, "SELECT p.id, p.order_id")
                    : new EventLock("orders", order, "SELECT o.id, o.order_sn");
        }

        /** A row of {@code table}, and how payonce's statement that locks it begins ({@code CardPaymentRepository}, {@code OrderRepository}). */
        public record EventLock(String table, long row, String statementStart) {
        }

        private String historyTable() {
            return kind == CHARGE ? "payment_phase" : "refund_phase";
        }

        /** The column naming the operation in its history and in the inbox. */
        private String idColumn() {
            return kind == CHARGE ? "payment_id" : "refund_id";
        }
    }

    /** A row of {@code table} by its id, and how a statement of payonce's that waits for its lock begins. */
    public record Lock(String table, long row, String statement) {
    }

    /** One operation of the kind, begun on an order of its own. */
    public Begun begin() {
        return begin("tok_visa");
    }

    /**
     * One operation of the kind that the processor refuses: a charge of a card it declines, or a
     * refund to a card it refunds nothing to (expired_or_canceled_card).
     */
    public Begun beginRefused() {
        return begin(this == CHARGE ? "tok_decline_lost" : "tok_norefund_lost");
    }

    /** As {@link #begin()}, paid with {@code cardToken}: the charge itself, or the charge a refund gives back from. */
    abstract Begun begin(String cardToken);

    /**
     * The id of an operation of the kind that never went to the processor, settled by its first
     * commit: a pay from the balance, or a refund to it.
     */
    public abstract long throughTheBalance();

    /** What an operator says of an operation of the kind the processor made: "charged", "refunded". */
    public String made() {
        return this == CHARGE ? "charged" : "refunded";
    }

    /** What an operator says of an operation of the kind the processor did not make: "not_charged", "not_refunded". */
    public String notMade() {
        return "not_" + made();
    }

    /** The field of a settlement's body and answer, and of the operation, that names the processor's object: chargeId, processorRefundId. */
    public String idField() {
        return this == CHARGE ? "chargeId" : "processorRefundId";
    }

    // Webhooks

    /** The code the processor gives its refusal of an operation {@link #beginRefused} begun. */
    public String refusedWith() {
        return this == CHARGE ? "card_declined" : "expired_or_canceled_card";
    }

    /** The processor's event type that tells an operation of the kind succeeded: charge.succeeded, or refund.succeeded. */
    public String processorSucceededEvent() {
        return this == CHARGE ? "charge.succeeded" : "refund.succeeded";
    }

    /** The processor's event type that tells an operation of the kind failed: charge.failed, or refund.failed. */
    public String processorFailedEvent() {
        return this == CHARGE ? "charge.failed" : "refund.failed";
    }

    /** {@code object} as the processor writes it once failed: status failed, with a decline or failure code. */
    public JsonObject asFailed(JsonObject object) {
        return object.copy().put("status", "failed").put(this == CHARGE ? "decline_code" : "failure_code", "processing_error");
    }

    /**
     * {@code object} with one field changed, once for each field that the processor's word is checked
     * by against an operation of the kind: another amount, currency or reference, and a refund's charge.
     */
    public List<JsonObject> otherThan(JsonObject object) {
        Stream<JsonObject> each = Stream.of(object.copy().put("amount", 13), object.copy().put("currency", "usd"),
                object.copy().put("reference", "order-0"));
        return (this == CHARGE ? each : Stream.concat(each, Stream.of(object.copy().put("charge", "ch_another")))).toList();
    }

    /** An object of the kind that succeeded under {@code key}, under which payonce made nothing: 5000 EUR. */
    public JsonObject stranger(String key) {
        JsonObject stranger = this == CHARGE ? new JsonObject().put("id", "ch_stranger").put("object", "charge").put("reference", "order-1")
                : new JsonObject().put("id", "re_stranger").put("object", "refund").put("charge", "ch_stranger");
        return stranger.put("amount", 5000).put("currency", "eur").put("status", "succeeded").put("idempotency_key", key);
    }

    /** The outcome the inbox records for an event under a key that no operation of the kind was made under. */
    public String unknownOutcome() {
        return this == CHARGE ? "UNKNOWN_CHARGE" : "UNKNOWN_REFUND";
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
