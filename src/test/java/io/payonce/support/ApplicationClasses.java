package io.payonce.support;

import io.payonce.errors.ErrorCode;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Every class compiled from src/main/java, for the tests that read what the application declares. */
public final class ApplicationClasses {

    private ApplicationClasses() {
    }

    /** Found where the application's own classes are loaded from, without initialising them. */
    public static List<Class<?>> all() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(ErrorCode.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> classes = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String name = root.relativize(file).toString().replace(File.separatorChar, '.').replaceAll("\\.class$", "");
                classes.add(Class.forName(name, false, ApplicationClasses.class.getClassLoader()));
            }
        }
        return classes;
    }
}
