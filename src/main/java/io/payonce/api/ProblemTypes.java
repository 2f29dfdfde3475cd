package io.payonce.api;

import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.openapi.annotations.Operation;
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
@Produces(MediaType.TEXT_HTML + ";charset=utf-8")
public class ProblemTypes {

    private static final String INDEX = indexPage();
    private static final Map<String, String> PAGES = Arrays.stream(ErrorCode.values())
            .collect(Collectors.toUnmodifiableMap(ErrorCode::type, ProblemTypes::pageOf));

    @GET
    @Operation(summary = "Every problem code, with a link to its page")
    public String index() {
        return INDEX;
    }

    @GET
    @Path("{type}")
    @Operation(summary = "What a problem code means and what to do about it")
    @APIResponse(responseCode = "200", description = "The page")
    @APIResponse(responseCode = "404", description = "NOT_FOUND: no such problem code")
    public String describe(@PathParam("type") String type) {
        String page = PAGES.get(ErrorCode.TYPE_PATH + "/" + type);
        if (page == null) {
            throw new ApiException(ErrorCode.NOT_FOUND);
        }
        return page;
    }

    private static String indexPage() {
        String items = Arrays.stream(ErrorCode.values())
                .map(code -> "<li><a href=\"" + code.type() + "\">" + code.name() + "</a>: " + escape(code.title()) + " (" + code.status() + ")</li>")
                .collect(Collectors.joining("\n"));
        return page("payonce problem codes", "<h1>payonce problem codes</h1>\n<ul>\n" + items + "\n</ul>");
    }

    private static String pageOf(ErrorCode code) {
        return page(code.name() + " - payonce", """
                <h1>%s: %s</h1>
                <p>HTTP %d. %s</p>
                <h2>What to do</h2>
                <p>%s</p>
                <h2>Send it again with the same Idempotency-Key?</h2>
                <p>%s</p>
                <p><a href="%s">All problem codes</a></p>""".formatted(code.name(), escape(code.title()), code.status(),
                escape(code.meaning()), escape(code.advice()), escape(code.sameKey()), ErrorCode.TYPE_PATH));
    }

    private static String page(String title, String body) {
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title) + "</title></head>\n<body>\n"
                + body + "\n</body></html>\n";
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
