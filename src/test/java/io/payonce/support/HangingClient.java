package io.payonce.support;

import java.io.OutputStream;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;

/**
 * A client that sends a pay and goes away before its answer: raw HTTP/1.1 on a socket it closes,
 * since an HTTP client library would read the answer or cancel the request its own way.
 */
public final class HangingClient {

    private HangingClient() {
    }

    /** Sends the pay of {@code order} with {@code body} (empty: from the balance) and closes the connection after {@code millis}. */
    public static void payAndHangUp(URL service, String bearer, long order, String key, String body, long millis) throws Exception {
        byte[] content = body.getBytes(StandardCharsets.US_ASCII);
        try (Socket socket = new Socket(service.getHost(), service.getPort())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST /orders/" + order + "/pay HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + bearer
                    + "\r\nIdempotency-Key: " + key + (content.length > 0 ? "\r\nContent-Type: application/json" : "")
                    + "\r\nContent-Length: " + content.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(content);
            out.flush();
            Thread.sleep(millis);
        }
    }
}
