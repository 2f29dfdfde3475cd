package io.payonce.tracing;

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

    private static String hex(int bytes) {
        byte[] random = new byte[bytes];
        ThreadLocalRandom.current().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
