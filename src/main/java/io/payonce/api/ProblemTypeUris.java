package io.payonce.api;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import io.payonce.config.PayonceConfig;
import io.quarkus.jackson.ObjectMapperCustomizer;
import io.quarkus.runtime.Startup;
import jakarta.inject.Singleton;

import java.io.IOException;
import java.net.URI;
import java.util.Arrays;

/**
 * Where clients reach payonce ({@code payonce.public-url}), and so where each problem type's page is:
 * every problem payonce writes, answered now or stored under a key for its replays, names its type as
 * an absolute URI under that address. A relative {@code /problems/...} would resolve against the
 * gateway's host and miss the prefix the gateway mounts payonce under. Answers stored before are
 * replayed as they were stored, relative types included. Made at start, so that an address that is
 * no absolute URL stops the start.
 */
@Startup
@Singleton
public class ProblemTypeUris implements ObjectMapperCustomizer {

    /** The longest type URI, as the API document states it. */
    static final int LONGEST_TYPE = 256;

    /** The longest public URL accepted: what the longest code's page path leaves of {@link #LONGEST_TYPE}. */
    static final int LONGEST_PUBLIC_URL = LONGEST_TYPE - Arrays.stream(ErrorCode.values())
            .mapToInt(code -> code.type().length()).max().orElseThrow();

    private final String publicUrl;

    public ProblemTypeUris(PayonceConfig config) {
        this.publicUrl = checked(config.publicUrl());
    }

    /** The absolute URI of a code's page. */
    public String of(ErrorCode code) {
        return publicUrl + code.type();
    }

    String of(ProblemType type) {
        return publicUrl + type.path();
    }

    /** The index of every code's page. */
    public String index() {
        return publicUrl + ErrorCode.TYPE_PATH;
    }

    @Override
    public void customize(ObjectMapper mapper) {
        mapper.registerModule(new SimpleModule("payonce-problem-types").addSerializer(new StdSerializer<>(ProblemType.class) {
            @Override
            public void serialize(ProblemType type, JsonGenerator generator, SerializerProvider provider) throws IOException {
                generator.writeString(of(type));
            }
        }));
    }

    /** An absolute http(s) URL without query or fragment; a trailing slash is dropped. */
    private static String checked(String publicUrl) {
        URI uri;
        try {
            uri = URI.create(publicUrl.strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("payonce.public-url (PAYONCE_PUBLIC_URL) is not a URL: " + publicUrl, e);
        }
        boolean http = "http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme());
        if (!http || uri.getHost() == null || uri.getRawQuery() != null || uri.getRawFragment() != null
                || uri.toString().length() > LONGEST_PUBLIC_URL) {
            throw new IllegalArgumentException("payonce.public-url (PAYONCE_PUBLIC_URL) must be the absolute http or https URL at which "
                    + "clients reach payonce, without query or fragment, at most " + LONGEST_PUBLIC_URL + " characters: " + publicUrl);
        }
        String url = uri.toString();
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
