package io.payonce.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The project's documentation as a reader finds it: README, UPGRADING and every page under docs/. */
public final class DocumentationPages {

    private DocumentationPages() {
    }

    public static List<Path> all() {
        List<Path> pages = new ArrayList<>(List.of(Path.of("README.md")));
        if (Files.exists(Path.of("UPGRADING.md"))) {
            pages.add(Path.of("UPGRADING.md"));
        }
        if (Files.isDirectory(Path.of("docs"))) {
            try (Stream<Path> files = Files.walk(Path.of("docs"))) {
                files.filter(file -> file.toString().endsWith(".md")).sorted().forEach(pages::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return pages;
    }
}
