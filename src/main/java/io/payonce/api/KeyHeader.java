package io.payonce.api;

import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.WriteOperation;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.UriInfo;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;

/**
 * The Idempotency-Key of a keyed HTTP write and the path its first answer is kept for, read and
 * documented once for every resource that requires one ({@code @BeanParam KeyHeader key}).
 */
public class KeyHeader {

    @HeaderParam(IdempotencyKey.HEADER)
    @Parameter(description = "1-64 visible ASCII characters, bare or quoted; reuse it on every retry", required = true)
    String value;

    @Context
    UriInfo uri;

    /** The write this request asks for under its key; a missing or malformed key is a 400 the guard counts. */
    public KeyedRequest read(IdempotencyGuard guard, WriteOperation operation, Object targetId) {
        return guard.read(operation, targetId, value, uri.getPath());
    }
}
