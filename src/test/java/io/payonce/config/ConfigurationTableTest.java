package io.payonce.config;

import io.payonce.support.DocumentationPages;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/operations/configuration.md is where an operator looks a variable up: every variable README,
 * UPGRADING or any page under docs/ names anywhere, and every one application.properties reads, is
 * listed there.
 */
class ConfigurationTableTest {

    private static final Path CONFIGURATION = Path.of("docs/operations/configuration.md");
    /** A whole variable name: a prefix cut short (PAYONCE_RABBITMQ_*) names no variable. */
    private static final Pattern VARIABLE = Pattern.compile("\\b((?:PAYONCE|QUARKUS|RABBITMQ)_[A-Z0-9_]*[A-Z0-9])\\b(?![_*])");
    private static final Pattern READ_BY_PROPERTIES = Pattern.compile("\\$\\{((?:PAYONCE|QUARKUS|RABBITMQ)_[A-Z0-9_]+)");

    @Test
    void everyVariableTheDocumentationNamesIsInTheConfigurationTables() throws IOException {
        Set<String> listed = namesIn(VARIABLE, configuration());
        Map<String, Path> missing = new TreeMap<>();
        for (Path page : DocumentationPages.all()) {
            for (String name : namesIn(VARIABLE, Files.readString(page))) {
                if (!listed.contains(name)) {
                    missing.putIfAbsent(name, page);
                }
            }
        }
        assertEquals(Map.of(), missing, "named in the documentation (variable: a page naming it) but not in its configuration tables");
    }

    @Test
    void everyVariableTheApplicationReadsIsInTheConfigurationTables() throws IOException {
        Set<String> missing = namesIn(READ_BY_PROPERTIES, Files.readString(Path.of("src/main/resources/application.properties")));
        missing.removeAll(namesIn(VARIABLE, configuration()));
        assertEquals(Set.of(), missing, "read by application.properties but not in the configuration tables");
    }

    /** The configuration page, whole: its tables and what it says beside them. */
    private static String configuration() throws IOException {
        String page = Files.readString(CONFIGURATION);
        assertTrue(page.startsWith("# Configuration\n") && page.contains("| environment variable |"), "the configuration page and its table");
        return page;
    }

    private static Set<String> namesIn(Pattern pattern, String text) {
        Set<String> names = new TreeSet<>();
        Matcher name = pattern.matcher(text);
        while (name.find()) {
            names.add(name.group(1));
        }
        return names;
    }
}
