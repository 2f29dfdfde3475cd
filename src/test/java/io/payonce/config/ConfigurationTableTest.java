package io.payonce.config;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * README's configuration tables are where an operator looks a variable up: every variable README names
 * anywhere, and every one application.properties reads, is listed there.
 */
class ConfigurationTableTest {

    /** A whole variable name: a prefix cut short (PAYONCE_RABBITMQ_*) names no variable. */
    private static final Pattern VARIABLE = Pattern.compile("\\b((?:PAYONCE|QUARKUS|RABBITMQ)_[A-Z0-9_]*[A-Z0-9])\\b(?![_*])");
    private static final Pattern READ_BY_PROPERTIES = Pattern.compile("\\$\\{((?:PAYONCE|QUARKUS|RABBITMQ)_[A-Z0-9_]+)");

    @Test
    void everyVariableReadmeNamesIsInTheConfigurationTables() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        Set<String> missing = namesIn(VARIABLE, readme);
        missing.removeAll(namesIn(VARIABLE, configurationSection(readme)));
        assertEquals(Set.of(), missing, "named in README but not in its configuration tables");
    }

    @Test
    void everyVariableTheApplicationReadsIsInTheConfigurationTables() throws IOException {
        Set<String> missing = namesIn(READ_BY_PROPERTIES, Files.readString(Path.of("src/main/resources/application.properties")));
        missing.removeAll(namesIn(VARIABLE, configurationSection(Files.readString(Path.of("README.md")))));
        assertEquals(Set.of(), missing, "read by application.properties but not in README's configuration tables");
    }

    private static String configurationSection(String readme) {
        int start = readme.indexOf("\n## Configuration\n");
        return readme.substring(start, readme.indexOf("\n## ", start + 1));
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
