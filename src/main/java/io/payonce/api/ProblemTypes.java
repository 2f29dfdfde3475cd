package io.payonce.api;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The page each problem's {@code type} points to ({@link ErrorCode#type()}): what the code means,
 * what the client should do, and whether to send the request again with the same Idempotency-Key.
 * Public, because a client reading a problem may hold no token, and the pages say nothing about any
 * caller's data. The pages never change while the service runs: each is written once.
 */
@Path(ErrorCode.TYPE_PATH)
@PermitAll
@Produces(ProblemTypes.HTML)
public class ProblemTypes {

    static final String HTML = MediaType.TEXT_HTML + ";charset=utf-8";

    /** The longest page: the index, with every code's link under the longest public URL, stays well inside it. */
    static final int LONGEST_PAGE = 16_384;

    private final String index;
    private final Map<String, String> pages;

    ProblemTypes(ProblemTypeUris uris) {
        this.index = indexPage(uris);
        this.pages = Arrays.stream(ErrorCode.values()).collect(Collectors.toUnmodifiableMap(ErrorCode::type, code -> pageOf(code, uris)));
    }

    @GET
    @Operation(operationId = "listProblemTypes", summary = "Every problem code, with a link to its page")
    @APIResponse(responseCode = "200", description = "The index", content = @Content(mediaType = HTML,
            schema = @Schema(type = SchemaType.STRING, maxLength = LONGEST_PAGE)))
    public String index() {
        return index;
    }

    @GET
    @Path("{type}")
    @Operation(operationId = "describeProblemType", summary = "What a problem code means and what to do about it")
    @APIResponse(responseCode = "200", description = "The page", content = @Content(mediaType = HTML,
            schema = @Schema(type = SchemaType.STRING, maxLength = LONGEST_PAGE)))
    @APIResponse(responseCode = "404", description = "NOT_FOUND: no such problem code")
    public String describe(@Parameter(description = "A code in lower case with hyphens, such as card-declined",
            schema = @Schema(type = SchemaType.STRING, pattern = "^[a-z-]{1,64}$")) @PathParam("type") String type) {
        String page = pages.get(ErrorCode.TYPE_PATH + "/" + type);
        if (page == null) {
            throw new ApiException(ErrorCode.NOT_FOUND);
        }
        return page;
    }

    private static String indexPage(ProblemTypeUris uris) {
        String items = Arrays.stream(ErrorCode.values())
                .map(code -> "<li><a href=\"" + escape(uris.of(code)) + "\">" + code.name() + "</a>: " + escape(code.title()) + " (" + code.status() + ")</li>")
                .collect(Collectors.joining("\n"));
        return page("payonce problem codes", "<h1>payonce problem codes</h1>\n<ul>\n" + items + "\n</ul>");
    }

    private static String pageOf(ErrorCode code, ProblemTypeUris uris) {
        return page(code.name() + " - payonce", """
                <h1>%s: %s</h1>
                <p>HTTP %d. %s</p>
                <h2>What to do</h2>
                <p>%s</p>
                <h2>Send it again with the same Idempotency-Key?</h2>
                <p>%s</p>
                <p><a href="%s">All problem codes</a></p>""".formatted(code.name(), escape(code.title()), code.status(),
                escape(code.meaning()), escape(code.advice()), escape(code.sameKey()), escape(uris.index())));
    }

    private static String page(String title, String body) {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title) + "</title></head>\n<body>\n"
                + body + "\n</body></html>\n";
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
