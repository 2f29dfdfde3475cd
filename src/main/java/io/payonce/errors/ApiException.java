package io.payonce.errors;

import java.util.Map;

/** A failure the client is told about, as problem+json with a stable code. */
public class ApiException extends RuntimeException {

    private final ErrorCode code;
    private final String detail;
    private final Map<String, Object> extensions;

    public ApiException(ErrorCode code, Object... detailArgs) {
        this(code, Map.of(), detailArgs);
    }

    public ApiException(ErrorCode code, Map<String, Object> extensions, Object... detailArgs) {
        super(code.name(), null, false, false);
        this.code = code;
        this.detail = code.detail(detailArgs);
        this.extensions = Map.copyOf(extensions);
    }

    public ErrorCode code() {
        return code;
    }

    public String detail() {
        return detail;
    }

    /** Problem members beyond RFC 9457's own, such as the order's current status. */
    public Map<String, Object> extensions() {
        return extensions;
    }
}
