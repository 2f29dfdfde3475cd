package io.payonce.api;

import io.payonce.errors.Problem;
import io.payonce.idempotency.Answer;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** An answer as HTTP sends it: problem+json for a refusal, its Location, and the mark of a repeat. */
public final class Responses {

    private Responses() {
    }

    public static Response of(Answer answer) {
        Response.ResponseBuilder response = Response.status(answer.status())
                .type(answer.status() >= 400 ? Problem.MEDIA_TYPE : MediaType.APPLICATION_JSON)
                .entity(answer.body());
        if (answer.location() != null) {
            response.header(HttpHeaders.LOCATION, answer.location());
        }
        if (answer.repeat()) {
            response.header(Answer.REPLAYED_HEADER, "true");
        }
        return response.build();
    }
}
