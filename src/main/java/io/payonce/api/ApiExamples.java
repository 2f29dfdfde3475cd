package io.payonce.api;

/**
 * The examples of the OpenAPI document: the requests of docs/quickstart.md and the answers payonce
 * gave them in dev mode (PAYONCE_PUBLIC_URL unset: http://localhost:8080); the 402 is a second user's (bob's) order, which his balance did not cover. A test holds each example's fields to its schema, so that a renamed field cannot leave
 * a stale example behind.
 */
public final class ApiExamples {

    public static final String NEW_ACCOUNT = """
            {"userId":"alice","currency":"EUR"}""";
    public static final String ACCOUNT = """
            {"userId":"alice","balance":0,"currency":"EUR","createdAt":"2026-12-01T01:52:23.148278Z"}""";
    public static final String DEPOSIT_REQUEST = """
            {"amount":5000,"currency":"EUR","reference":"bank-transfer-1"}""";
    public static final String DEPOSIT = """
            {"userId":"alice","amount":5000,"currency":"EUR","balance":5000}""";
    public static final String NEW_ORDER = """
            {"orderSn":"sn-1","amount":1999,"currency":"EUR"}""";
    public static final String ORDER = """
            {"id":1,"orderSn":"sn-1","userId":"alice","amount":1999,"currency":"EUR","status":"UNPAID","refundedAmount":0,\
            "createdAt":"2026-12-01T01:52:23.36348Z","updatedAt":"2026-12-01T01:52:23.36348Z"}""";
    public static final String PAYMENT = """
            {"paymentId":1,"orderId":1,"amount":1999,"currency":"EUR","method":"balance","phase":"SUCCEEDED"}""";
    public static final String CARD_PAY_REQUEST = """
            {"method":"card","cardToken":"tok_visa"}""";
    public static final String PAYMENT_UNKNOWN = """
            {"paymentId":3,"orderId":3,"amount":1999,"currency":"EUR","method":"card","phase":"UNKNOWN"}""";
    public static final String CARD_DECLINED = """
            {"type":"http://localhost:8080/problems/card-declined","title":"Card declined","status":402,\
            "detail":"The card was declined (card_declined); nothing was charged.","instance":"/orders/4/pay","code":"CARD_DECLINED",\
            "traceId":"5f0c2a8e3b1d4c6e9a7b8c0d1e2f3a4b"}""";
    public static final String INSUFFICIENT_FUNDS = """
            {"type":"http://localhost:8080/problems/insufficient-funds","title":"Insufficient funds","status":402,\
            "detail":"The balance does not cover 1999 EUR.","instance":"/orders/2/pay","code":"INSUFFICIENT_FUNDS",\
            "traceId":"3c9bbb09a9d7f98af4854b442099dbb0"}""";
    public static final String REFUND_REQUEST = """
            {"refundNo":"rf-1","amount":999}""";
    public static final String REFUND = """
            {"refundId":1,"orderId":1,"refundNo":"rf-1","amount":999,"method":"balance","phase":"SUCCEEDED","refundedTotal":999,\
            "orderStatus":"PAID"}""";
    public static final String REFUND_UNKNOWN = """
            {"refundId":2,"orderId":2,"refundNo":"rf-1","amount":500,"method":"card","phase":"UNKNOWN","refundedTotal":500,\
            "orderStatus":"PAID"}""";
    public static final String REFUND_FAILED = """
            {"type":"http://localhost:8080/problems/refund-failed","title":"Refund failed","status":402,\
            "detail":"The card processor did not refund the card (expired_or_canceled_card); nothing was refunded, and this refund number is spent.",\
            "instance":"/orders/2/refunds","code":"REFUND_FAILED","traceId":"0af7651916cd43dd8448eb211c80319c"}""";
    public static final String SETTLEMENT_REQUEST = """
            {"outcome":"charged","chargeId":"ch_1","reason":"the processor's dashboard shows ch_1 for order-3; ticket OPS-12"}""";
    public static final String SETTLEMENT = """
            {"paymentId":3,"orderId":3,"phase":"SUCCEEDED","outcome":"charged","chargeId":"ch_1",\
            "reason":"the processor's dashboard shows ch_1 for order-3; ticket OPS-12","settledBy":"carol",\
            "processorSaid":"by id: ch_1 succeeded, 1999 eur for order-3; under the payment's key: no charge"}""";
    public static final String REFUND_SETTLEMENT_REQUEST = """
            {"outcome":"refunded","processorRefundId":"re_1","reason":"the processor's dashboard shows re_1 for order-3-refund-R1; ticket OPS-14",\
            "acknowledged":[]}""";
    public static final String REFUND_SETTLEMENT = """
            {"refundId":5,"orderId":3,"phase":"SUCCEEDED","outcome":"refunded","processorRefundId":"re_1","acknowledged":[],\
            "reason":"the processor's dashboard shows re_1 for order-3-refund-R1; ticket OPS-14","settledBy":"carol",\
            "processorSaid":"by id: re_1 succeeded, 500 eur of charge ch_1 for order-3-refund-R1; under the refund's key: no refund"}""";

    private ApiExamples() {
    }
}
