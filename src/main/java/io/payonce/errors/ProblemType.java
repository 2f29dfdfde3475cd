package io.payonce.errors;

import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * A problem's type: the page of its code. Held as the page's path on the service and written as an
 * absolute URI under {@code payonce.public-url} ({@code api.ProblemTypeUris}), so that a client resolves
 * it to payonce's page even where a gateway serves payonce under a prefix of its own.
 */
@Schema(type = SchemaType.STRING, format = "uri", maxLength = ProblemType.LONGEST,
        description = "An absolute URI, <PAYONCE_PUBLIC_URL>/problems/<code>: the page of this code, served by payonce: "
                + "what it means, what to do, whether to retry with the same key")
public record ProblemType(String path) {

    /** The longest type URI, as the API document states it. */
    public static final int LONGEST = 256;

    static ProblemType of(ErrorCode code) {
        return new ProblemType(code.type());
    }
}
