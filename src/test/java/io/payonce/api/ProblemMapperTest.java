package io.payonce.api;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidDefinitionException;
import io.payonce.errors.Problem;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.CharConversionException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which failures the mapper blames on the client and which on payonce, for faults a client cannot
 * provoke: a type Jackson cannot build, and a server error that happens to wrap a JSON or decoding
 * failure. Those are payonce's bugs: logged, and answered 500 without a word of what went wrong.
 */
class ProblemMapperTest {

    private static final String PATH = "/orders";

    private final ProblemMapper mapper = new ProblemMapper();
    private final List<LogRecord> errors = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.SEVERE.intValue()) {
                errors.add(record);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void captureTheLog() {
        Logger.getLogger(ProblemMapper.class.getName()).addHandler(capture);
    }

    @AfterEach
    void releaseTheLog() {
        Logger.getLogger(ProblemMapper.class.getName()).removeHandler(capture);
    }

    @Test
    void aTypeJacksonCannotBuildIsAServerFaultNotABadRequest() {
        InvalidDefinitionException unbuildable = unbuildable();

        Problem problem = problemOf(mapper.unreadableJson(unbuildable, uri()), 500);

        assertEquals("INTERNAL_ERROR", problem.code());
        assertNothingOf(unbuildable, problem);
        assertLogged(unbuildable);
    }

    @Test
    void aTypeJacksonCannotBuildWrappedInABadRequestIsStillAServerFault() {
        InvalidDefinitionException unbuildable = unbuildable();

        Problem problem = problemOf(mapper.httpFailure(new WebApplicationException(unbuildable, 400), uri()), 500);

        assertEquals("INTERNAL_ERROR", problem.code());
        assertNothingOf(unbuildable, problem);
        assertLogged(unbuildable);
    }

    /** A 5xx is payonce's failure whatever it wraps: the JSON or decoding cause is not the client's doing. */
    @ParameterizedTest(name = "HTTP {0}")
    @ValueSource(ints = {500, 502, 503})
    void aServerErrorWrappingAJsonOrDecodingFailureStaysAServerError(int status) {
        for (Exception cause : List.of(new JsonParseException(null, "Unexpected character"), new CharConversionException("Invalid UTF-32"))) {
            errors.clear();
            WebApplicationException failure = new WebApplicationException(cause, status);

            Problem problem = problemOf(mapper.httpFailure(failure, uri()), 500);

            assertEquals("INTERNAL_ERROR", problem.code(), cause.toString());
            assertLogged(failure);
        }
    }

    /** The other side of the line: what the client sent wrong is still a 400, and nothing is logged as an error. */
    @Test
    void aBadBodyIsStillTheClientsFault() {
        JsonProcessingException syntax = assertThrows(JsonProcessingException.class, () -> new ObjectMapper().readTree("{\"amount\": "));

        assertEquals("MALFORMED_REQUEST", problemOf(mapper.unreadableJson(syntax, uri()), 400).code());
        assertEquals("MALFORMED_REQUEST", problemOf(mapper.httpFailure(new WebApplicationException(syntax, 400), uri()), 400).code());
        assertEquals("MALFORMED_REQUEST", problemOf(mapper.httpFailure(
                new WebApplicationException(new CharConversionException("Invalid UTF-32"), 400), uri()), 400).code());
        assertEquals(List.of(), errors);
    }

    /** What Jackson throws for a type it has no way to construct: here an interface, as for a DTO without a creator. */
    private static InvalidDefinitionException unbuildable() {
        return assertThrows(InvalidDefinitionException.class, () -> new ObjectMapper().readValue("{}", Runnable.class));
    }

    private static Problem problemOf(Response response, int status) {
        assertEquals(status, response.getStatus());
        assertEquals(Problem.MEDIA_TYPE, response.getMediaType().toString());
        return assertInstanceOf(Problem.class, response.getEntity());
    }

    private static void assertNothingOf(JsonProcessingException e, Problem problem) {
        String said = problem.title() + " " + problem.detail();
        assertFalse(said.contains("Runnable") || said.contains("Exception") || said.contains(e.getOriginalMessage()), said);
    }

    private void assertLogged(Throwable e) {
        assertEquals(1, errors.size(), "logged once as an error");
        assertTrue(errors.get(0).getThrown() == e, "with its stack trace: " + errors.get(0).getThrown());
    }

    private static UriInfo uri() {
        return (UriInfo) Proxy.newProxyInstance(UriInfo.class.getClassLoader(), new Class<?>[]{UriInfo.class}, (proxy, method, args) -> {
            if (method.getName().equals("getPath") && (args == null || args.length == 0)) {
                return PATH;
            }
            throw new UnsupportedOperationException(method.getName());
        });
    }
}
