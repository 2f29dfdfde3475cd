package io.payonce.config;

import io.quarkus.runtime.configuration.ConfigurationException;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLNonTransientConnectionException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why a start failed, as one line an operator can act on: which store (the database, the
 * configuration), at which address, and the settings that name it, with the cause. In a JSON log
 * each of those is a field of its own ({@code mdc.store}, {@code mdc.address}, {@code mdc.settings},
 * {@code mdc.cause}) instead of a link in a chain of exceptions nested in one document.
 */
record StartFailure(String store, String address, String settings, String cause, Throwable failure) {

    private static final Logger LOG = Logger.getLogger(StartFailure.class);
    private static final Pattern VARIABLE = Pattern.compile("\\bPAYONCE_[A-Z0-9_]*[A-Z0-9]\\b");
    private static final String DATABASE_URL = "quarkus.datasource.jdbc.url";

    /** What {@code failure}, the start's, says of its cause. */
    static StartFailure of(Throwable failure) {
        Throwable root = root(failure);
        String cause = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage().strip().replaceAll("\\s*\\n\\s*", " ");
        Throwable configuration = configurationFailure(failure);
        if (configuration != null) {
            String said = configuration.getMessage() == null ? cause : configuration.getMessage().strip().replaceAll("\\s*\\n\\s*", " ");
            return new StartFailure("configuration", null, variables(said), said, failure);
        }
        if (find(failure, SQLException.class) != null) {
            // 1045, SQLSTATE 28000: the login itself; 1044 (no right on a database) is an error of the database's.
            if (find(failure, SQLInvalidAuthorizationSpecException.class) != null || cause.contains("(using password:")) {
                return new StartFailure("database", databaseAddress(), "PAYONCE_DB_USER, PAYONCE_DB_PASSWORD", cause, failure);
            }
            boolean unreached = find(failure, ConnectException.class) != null || find(failure, UnknownHostException.class) != null
                    || find(failure, SQLNonTransientConnectionException.class) != null;
            return new StartFailure("database", databaseAddress(), unreached ? "PAYONCE_DB_HOST, PAYONCE_DB_PORT" : null, cause, failure);
        }
        // A refusal of payonce's own (ConfigCheck's) names the variables to set.
        String named = variables(cause);
        return new StartFailure(null, null, named.isEmpty() ? null : named, cause, failure);
    }

    /**
     * One plain line at ERROR, last; the whole failure before it, at DEBUG where the line names the
     * settings to check, at ERROR where it cannot (a statement the database refused, an unknown cause). A configuration that cannot be read may leave no logging to write to:
     * its line goes to the standard error, as Quarkus writes such a failure.
     */
    void log() {
        if ("configuration".equals(store)) {
            System.err.println("payonce did not start: " + sentence());
            return;
        }
        if (settings == null) {
            LOG.error("The start failed", failure);
        } else {
            LOG.debug("The start failed", failure);
        }
        put("store", store);
        put("address", address);
        put("settings", settings);
        put("cause", cause);
        try {
            LOG.error("payonce did not start: " + sentence());
        } finally {
            MDC.clear();
        }
    }

    /** The line itself: "the database at 127.0.0.1:3307 could not be reached (Connection refused); check PAYONCE_DB_HOST, PAYONCE_DB_PORT". */
    String sentence() {
        String what = switch (String.valueOf(store)) {
            case "database" -> "the database" + (address == null ? "" : " at " + address) + (settings == null ? " answered with an error"
                    : settings.startsWith("PAYONCE_DB_USER") ? " refused payonce's login" : " could not be reached");
            case "configuration" -> "its configuration is incomplete or invalid";
            default -> "it failed";
        };
        return what + " (" + cause + ")" + (settings == null || settings.isEmpty() ? "" : "; check " + settings);
    }

    /** host:port of the database the start used, as its JDBC URL names it; null if the configuration cannot say. */
    private static String databaseAddress() {
        try {
            return ConfigProvider.getConfig().getOptionalValue(DATABASE_URL, String.class).map(StoreAddress::of).orElse(null);
        } catch (RuntimeException unreadable) {
            return null;
        }
    }

    private static String variables(String text) {
        Set<String> named = new LinkedHashSet<>();
        Matcher variable = VARIABLE.matcher(text == null ? "" : text);
        while (variable.find()) {
            named.add(variable.group());
        }
        return String.join(", ", named);
    }

    private static void put(String key, String value) {
        if (value != null && !value.isEmpty()) {
            MDC.put(key, value);
        }
    }

    /** The deepest cause. */
    private static Throwable root(Throwable failure) {
        List<Throwable> chain = chain(failure);
        return chain.get(chain.size() - 1);
    }

    /** {@code failure} and its causes, each once: a chain may loop. */
    private static List<Throwable> chain(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable at = failure; at != null && seen.add(at); at = at.getCause()) {
            chain.add(at);
        }
        return chain;
    }

    /**
     * The failure to read the configuration, if that is what stopped the start: Quarkus's, or
     * SmallRye Config's validation, whose message lists every property that could not be read.
     */
    private static Throwable configurationFailure(Throwable failure) {
        for (Throwable at : chain(failure)) {
            if (at instanceof ConfigurationException || at.getClass().getSimpleName().startsWith("Config")
                    || at instanceof NoSuchElementException && String.valueOf(at.getMessage()).startsWith("SRCFG")) {
                return at;
            }
        }
        return null;
    }

    private static <T extends Throwable> T find(Throwable failure, Class<T> type) {
        for (Throwable at : chain(failure)) {
            if (type.isInstance(at)) {
                return type.cast(at);
            }
        }
        return null;
    }
}
