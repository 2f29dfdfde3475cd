package io.payonce.tracing;

import io.payonce.support.Api;
import io.payonce.support.Buyer.Checkout;
import io.restassured.response.Response;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/** A W3C traceparent as a gateway would send it: a trace id and its own span id, sampled. */
record Traceparent(String traceId, String parentSpanId) {

    static Traceparent random() {
        return new Traceparent(hex(16), hex(8));
    }

    String header() {
        return "00-" + traceId + "-" + parentSpanId + "-01";
    }

    /** Sends the pay as part of this trace. */
    Response pay(Checkout pay) {
        return Api.as(pay.bearer()).header("traceparent", header()).header("Idempotency-Key", pay.key())
                .post("/orders/" + pay.order() + "/pay");
    }

    private static String hex(int bytes) {
        byte[] random = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
