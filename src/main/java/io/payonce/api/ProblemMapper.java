package io.payonce.api;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidDefinitionException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import io.payonce.db.DependencyFailure;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.Path;
import jakarta.ws.rs.NotAcceptableException;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import java.io.CharConversionException;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

/**
 * The one place where failures become answers: RFC 9457 problem+json with a stable code. Nothing of
 * an exception's message, class or stack reaches the client unless the exception was written for it.
 */
public class ProblemMapper {

    private static final Logger LOG = Logger.getLogger(ProblemMapper.class);
    private static final String RETRY_AFTER_SECONDS = "1";

    @ServerExceptionMapper
    public Response apiFailure(ApiException e, UriInfo uri) {
        return answer(Problem.of(e, uri.getPath()));
    }

    @ServerExceptionMapper
    public Response invalidInput(ConstraintViolationException e, UriInfo uri) {
        List<Problem.FieldError> errors = e.getConstraintViolations().stream()
                .map(v -> new Problem.FieldError(fieldName(v), v.getMessage()))
                .sorted(Comparator.comparing(Problem.FieldError::field))
                .toList();
        ErrorCode code = ErrorCode.VALIDATION_FAILED;
        return answer(Problem.of(code, code.detail(), uri.getPath()).withErrors(errors));
    }

    /**
     * Named one by one because Quarkus REST ships mappers for some of these that would otherwise win.
     * A type Jackson cannot build (a missing reflection registration, conflicting creators) is payonce's
     * fault, whatever the body: it is logged and answered as such, not blamed on the client.
     */
    @ServerExceptionMapper({JsonProcessingException.class, StreamReadException.class, JsonParseException.class,
            MismatchedInputException.class, InvalidFormatException.class, UnrecognizedPropertyException.class})
    public Response unreadableJson(JsonProcessingException e, UriInfo uri) {
        if (e instanceof InvalidDefinitionException) {
            return unexpected(e, uri);
        }
        ErrorCode code = ErrorCode.MALFORMED_REQUEST;
        return answer(Problem.of(code, code.detail(describe(e)), uri.getPath()));
    }

    /**
     * A body whose bytes decode as none of the encodings JSON allows: the JSON reader recognises UCS-4
     * in its unusual byte orders (the first bytes 00 7B 00 00 or 00 00 7B 00) and invalid UTF-32, and
     * refuses them with an I/O error rather than a parse error.
     */
    @ServerExceptionMapper
    public Response undecodableBody(CharConversionException e, UriInfo uri) {
        return answer(problem(ErrorCode.MALFORMED_REQUEST, uri, JsonFailureKind.ENCODING.description() + " in the body"));
    }

    @ServerExceptionMapper({UnauthorizedException.class, AuthenticationFailedException.class})
    public Response unauthenticated(RuntimeException e, UriInfo uri) {
        return answer(problem(ErrorCode.UNAUTHENTICATED, uri));
    }

    @ServerExceptionMapper
    public Response forbidden(ForbiddenException e, UriInfo uri) {
        return answer(problem(ErrorCode.FORBIDDEN, uri));
    }

    @ServerExceptionMapper
    public Response httpFailure(WebApplicationException e, UriInfo uri) {
        int status = e.getResponse().getStatus();
        if (status == 400 && e.getCause() instanceof JsonProcessingException unreadable) {
            return unreadableJson(unreadable, uri);
        }
        if (status == 400 && e.getCause() instanceof CharConversionException undecodable) {
            return undecodableBody(undecodable, uri);
        }
        if (e instanceof NotFoundException) {
            return answer(problem(ErrorCode.NOT_FOUND, uri));
        }
        if (e instanceof NotAllowedException) {
            return answer(problem(ErrorCode.METHOD_NOT_ALLOWED, uri), HttpHeaders.ALLOW, allowHeader(e));
        }
        if (e instanceof NotSupportedException) {
            return answer(problem(ErrorCode.UNSUPPORTED_MEDIA_TYPE, uri));
        }
        if (e instanceof NotAcceptableException) {
            return answer(problem(ErrorCode.NOT_ACCEPTABLE, uri));
        }
        if (status == 413) {
            return answer(problem(ErrorCode.PAYLOAD_TOO_LARGE, uri));
        }
        if (status == 401) {
            return unauthenticated(e, uri);
        }
        if (status < 500) {
            return answer(problem(ErrorCode.MALFORMED_REQUEST, uri, "the request could not be read"));
        }
        return unexpected(e, uri);
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e, UriInfo uri) {
        if (DependencyFailure.isTransient(e)) {
            LOG.warnf("Dependency unavailable on %s: %s", uri.getPath(), e.toString());
            return answer(problem(ErrorCode.DEPENDENCY_UNAVAILABLE, uri));
        }
        LOG.errorf(e, "Unexpected failure on %s", uri.getPath());
        return answer(problem(ErrorCode.INTERNAL_ERROR, uri));
    }

    private static Problem problem(ErrorCode code, UriInfo uri, Object... detailArgs) {
        return Problem.of(code, code.detail(detailArgs), uri.getPath());
    }

    private static Response answer(Problem problem, String... headerNamesAndValues) {
        Response.ResponseBuilder response = Response.status(problem.status()).type(Problem.MEDIA_TYPE).entity(problem);
        ErrorCode code = ErrorCode.valueOf(problem.code());
        if (code.kind().retryAfter()) {
            response.header(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS);
        }
        if (code == ErrorCode.UNAUTHENTICATED) {
            response.header(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
        }
        for (int i = 0; i + 1 < headerNamesAndValues.length; i += 2) {
            response.header(headerNamesAndValues[i], headerNamesAndValues[i + 1]);
        }
        return response.build();
    }

    /** The JSON path of a bad value and what was wrong, without echoing the input or naming classes. */
    private static String describe(JsonProcessingException e) {
        String where = e instanceof JsonMappingException mapping && !mapping.getPath().isEmpty()
                ? "at " + mapping.getPath().stream()
                        .map(ref -> ref.getFieldName() != null ? ref.getFieldName() : "[" + ref.getIndex() + "]")
                        .collect(Collectors.joining("."))
                : e.getLocation() == null ? "in the body" : "at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
        return JsonFailureKind.of(e).description() + " " + where;
    }

    /** The leaf name of a violated property: {@code create.request.amount} becomes {@code amount}. */
    private static String fieldName(ConstraintViolation<?> violation) {
        List<Path.Node> nodes = StreamSupport.stream(violation.getPropertyPath().spliterator(), false).toList();
        return nodes.isEmpty() ? "" : nodes.get(nodes.size() - 1).getName();
    }

    private static String allowHeader(WebApplicationException e) {
        return String.join(", ", e.getResponse().getAllowedMethods());
    }
}
