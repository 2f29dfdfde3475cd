package io.payonce;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The packages' layering, read from the sources' imports: no two packages depend on each other,
 * however indirectly, and the stores, meters, configuration and input rules below the features know
 * nothing of HTTP, of callers or of any feature.
 */
class LayeringTest {

    private static final Path SOURCES = Path.of("src/main/java/io/payonce");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.payonce\\.(\\w+)\\.", Pattern.MULTILINE);
    private static final Set<String> FOUNDATIONS = Set.of("db", "redis", "broker", "metrics", "config", "input", "tracing");
    private static final Set<String> ABOVE_FOUNDATIONS = Set.of("api", "auth", "idempotency", "account", "order", "payment",
            "coupon", "token", "lock", "dev");

    @Test
    void noPackageDependsOnItselfThroughOthers() {
        Map<String, Set<String>> imports = packageImports();
        List<String> cycles = new ArrayList<>();
        for (String start : imports.keySet()) {
            if (reaches(imports, start, start, new TreeSet<>())) {
                cycles.add(start);
            }
        }
        assertEquals(List.of(), cycles, "packages on an import cycle; imports: " + imports);
    }

    @Test
    void foundationsImportNoFeatureAndNothingOfHttp() {
        Map<String, Set<String>> imports = packageImports();
        Map<String, Set<String>> upward = new TreeMap<>();
        for (String foundation : FOUNDATIONS) {
            Set<String> wrong = new TreeSet<>(imports.getOrDefault(foundation, Set.of()));
            wrong.retainAll(ABOVE_FOUNDATIONS);
            if (!wrong.isEmpty()) {
                upward.put(foundation, wrong);
            }
        }
        assertEquals(Map.of(), upward);
    }

    private static boolean reaches(Map<String, Set<String>> imports, String from, String target, Set<String> visited) {
        for (String next : imports.getOrDefault(from, Set.of())) {
            if (next.equals(target) || (visited.add(next) && reaches(imports, next, target, visited))) {
                return true;
            }
        }
        return false;
    }

    /** For each package under io.payonce, the other io.payonce packages its classes import. */
    private static Map<String, Set<String>> packageImports() {
        Map<String, Set<String>> imports = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            files.filter(file -> file.toString().endsWith(".java")).forEach(file -> {
                String pkg = SOURCES.relativize(file.getParent()).toString().replace('/', '.');
                Set<String> targets = imports.computeIfAbsent(pkg, ignored -> new TreeSet<>());
                Matcher imported = IMPORT.matcher(read(file));
                while (imported.find()) {
                    if (!imported.group(1).equals(pkg)) {
                        targets.add(imported.group(1));
                    }
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return imports;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
