package io.payonce.auth;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.input.Identifiers;
import io.payonce.tracing.RequestTags;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.jwt.JsonWebToken;

import java.util.regex.Pattern;

/** Reads the caller from the verified bearer token of the current request. */
@ApplicationScoped
public class CallerIdentity {

    private static final Pattern USER_ID = Pattern.compile(Identifiers.USER_ID);

    private final JsonWebToken token;

    public CallerIdentity(JsonWebToken token) {
        this.token = token;
    }

    /** The user is the {@code sub} claim, never a name or an id taken from the request body. */
    public Caller current() {
        String subject = token.getSubject();
        if (subject == null || !USER_ID.matcher(subject).matches()) {
            throw new ApiException(ErrorCode.UNAUTHENTICATED);
        }
        RequestTags.caller(subject);
        return new Caller(subject, token.getGroups().contains(Caller.OPS));
    }
}
