package io.payonce.api;

import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * An answer as stored under an Idempotency-Key: status, the exact JSON text and, for a created
 * resource, its Location, so that a replay is byte for byte the first answer, marked with
 * {@code Idempotent-Replayed: true}.
 */
public record Answer(int status, String json, String location, boolean replayed) {

    public static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";

    public Response toResponse() {
        Response.ResponseBuilder response = Response.status(status)
                .type(status >= 400 ? Problem.MEDIA_TYPE : MediaType.APPLICATION_JSON)
                .entity(json);
        if (location != null) {
            response.header(HttpHeaders.LOCATION, location);
        }
        if (replayed) {
            response.header(IDEMPOTENT_REPLAYED, "true");
        }
        return response.build();
    }
}
