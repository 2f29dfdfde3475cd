package io.payonce.api;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import io.payonce.config.PayonceConfig;
import io.payonce.errors.ErrorCode;
import io.payonce.errors.ProblemType;
import io.quarkus.jackson.ObjectMapperCustomizer;
import io.quarkus.runtime.Startup;
import jakarta.inject.Singleton;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Arrays;
import java.util.Locale;

/**
 * Where clients reach payonce ({@code payonce.public-url}), and so where each problem type's page is:
 * every problem payonce writes, answered now or stored under a key for its replays, names its type as
 * an absolute URI under that address. A relative {@code /problems/...} would resolve against the
 * gateway's host and miss the prefix the gateway mounts payonce under. Answers stored before are
 * replayed as they were stored, relative types included. Made at start, so that an address that is
 * unfit to be their base ({@link #normalised}) stops the start.
 */
@Startup
@Singleton
public class ProblemTypeUris implements ObjectMapperCustomizer {

    /** The longest public URL accepted, as docs/operations/configuration.md states it; with the longest code's page path it stays within {@link ProblemType#LONGEST}. */
    static final int LONGEST_PUBLIC_URL = 200;

    private static final String SETTING = "payonce.public-url (PAYONCE_PUBLIC_URL)";

    private final String publicUrl;

    public ProblemTypeUris(PayonceConfig config) {
        this.publicUrl = normalised(config.publicUrl());
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

    /**
     * The public URL as every type and the served document name it: an absolute http(s) URL in its
     * ASCII, normalised form, without user information (it would be in every answer), query or
     * fragment, its trailing slash dropped. What is wrong is named, never the value itself, which may
     * hold a secret.
     */
    static String normalised(String publicUrl) {
        String candidate = publicUrl.strip();
        URI uri;
        try {
            uri = new URI(candidate);
        } catch (URISyntaxException e) {
            throw refused("must be a URL; it has " + e.getReason().toLowerCase(Locale.ROOT) + " at position " + e.getIndex());
        }
        if (!"http".equalsIgnoreCase(uri.getScheme()) && !"https".equalsIgnoreCase(uri.getScheme())) {
            throw refused("must be an absolute http or https URL");
        }
        if (uri.getRawUserInfo() != null || uri.getRawAuthority() != null && uri.getRawAuthority().contains("@")) {
            throw refused("must not carry a user name or password");
        }
        if (!uri.toASCIIString().equals(candidate)) {
            throw refused("must be ASCII: percent-encode any other character");
        }
        if (uri.getHost() == null) {
            throw refused("must name a host");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw refused("must have no query or fragment");
        }
        if (hasOddSegment(uri.getPath())) {
            throw refused("must be normalised: no empty, '.' or '..' path segment");
        }
        String url = candidate.endsWith("/") ? candidate.substring(0, candidate.length() - 1) : candidate;
        if (url.length() > LONGEST_PUBLIC_URL) {
            throw refused("must be at most " + LONGEST_PUBLIC_URL + " characters");
        }
        return url;
    }

    /**
     * An empty segment doubles a slash in every type ({@code //problems}); a {@code .} or {@code ..},
     * even percent-encoded, makes a client resolve the type elsewhere. One trailing slash is allowed.
     */
    private static boolean hasOddSegment(String path) {
        String segments = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return !segments.isEmpty() && Arrays.stream(segments.substring(1).split("/", -1))
                .anyMatch(segment -> segment.isEmpty() || segment.equals(".") || segment.equals(".."));
    }

    private static IllegalArgumentException refused(String rule) {
        return new IllegalArgumentException(SETTING + " " + rule + "; it is the address at which clients reach payonce");
    }
}
