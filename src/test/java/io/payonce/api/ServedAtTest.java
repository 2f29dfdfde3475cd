package io.payonce.api;

import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The server a served document names is the public URL as the problem types name it: a client appends paths to it. */
class ServedAtTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "https://api.example.com/payonce/, https://api.example.com/payonce",
            "https://api.example.com/payonce,  https://api.example.com/payonce",
            "https://api.example.com/,         https://api.example.com",
            "' http://localhost:8080 ',        http://localhost:8080"})
    void theServerIsThePublicUrlWithoutATrailingSlash(String configured, String server) {
        OpenAPI document = OASFactory.createOpenAPI();

        ServedAt.serveAt(document, configured);

        assertEquals(1, document.getServers().size());
        assertEquals(server, document.getServers().get(0).getUrl());
    }
}
