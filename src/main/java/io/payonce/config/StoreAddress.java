package io.payonce.config;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * The address of a store as its URL names it, for a line an operator reads: host and port, never a
 * user or password the URL carries before them. A password holding '/', '?' or '#' unencoded ends
 * the URL's authority early, inside the password; a URL whose user part would then be misread is
 * not shown at all rather than shown in part.
 */
public final class StoreAddress {

    private StoreAddress() {
    }

    /**
     * {@code host[:port]} (every host, for a URL that names several) of {@code url}, a
     * {@code scheme://[user[:password]@]host[:port][/...]} URL with or without a {@code jdbc:} prefix;
     * null when it names none, or none that can be told safely.
     */
    public static String of(String url) {
        String plain = url.strip().startsWith("jdbc:") ? url.strip().substring("jdbc:".length()) : url.strip();
        try {
            URI uri = new URI(plain);
            String authority = uri.getRawAuthority();
            if (authority == null) {
                return null;
            }
            // An '@' after the authority means the authority ended inside a user part.
            String rest = plain.substring(plain.indexOf(authority) + authority.length());
            return rest.contains("@") ? null : authority.substring(authority.lastIndexOf('@') + 1);
        } catch (URISyntaxException unreadable) {
            return null;
        }
    }
}
