package io.payonce.client;

import io.payonce.support.InstanceApi;
import io.payonce.support.PackagedInstance;
import io.payonce.support.Tokens;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client as its users get it: the build's client jar holds its classes and nothing else, and,
 * loaded with Jackson alone beside the JDK (no class of the server, nor of Quarkus, within reach),
 * it makes an order form and pays it against the packaged application.
 */
class ClientJarIT {

    private static final Path JAR = Path.of("target/payonce-1.0.0-SNAPSHOT-client.jar");

    @Test
    void theJarHoldsTheClientAlone() throws IOException {
        try (JarFile jar = new JarFile(JAR.toFile())) {
            List<String> others = jar.stream().map(ZipEntry::getName)
                    .filter(name -> !name.startsWith("io/payonce/client/") && !name.startsWith("META-INF/") && !name.endsWith("/")).toList();
            assertEquals(List.of(), others);
            assertTrue(jar.getEntry("io/payonce/client/PayonceClient.class") != null);
            assertTrue(jar.stream().noneMatch(entry -> entry.getName().startsWith("META-INF/maven/")), "no pom of the server's");
        }
    }

    @Test
    void theJarWithJacksonAlonePaysAnOrder() throws Exception {
        try (PackagedInstance instance = PackagedInstance.start("client-jar", "payonce_client_jar", true, Map.of());
             URLClassLoader alone = new URLClassLoader(classpath(), ClassLoader.getPlatformClassLoader())) {
            String user = "u-" + UUID.randomUUID();
            InstanceApi.fund(instance.port(), user, 5000);
            Class<?> clientClass = alone.loadClass("io.payonce.client.PayonceClient");
            Supplier<String> tokens = () -> Tokens.user(user);
            Object client = clientClass.getConstructor(URI.class, Supplier.class).newInstance(URI.create("http://127.0.0.1:" + instance.port()), tokens);

            Object created = clientClass.getMethod("createOrder", String.class, long.class, String.class).invoke(client, "sn-jar-1", 1999L, "EUR");
            Object order = created.getClass().getMethod("value").invoke(created);
            long orderId = (long) order.getClass().getMethod("id").invoke(order);
            Object paid = clientClass.getMethod("pay", long.class, String.class).invoke(client, orderId, "pay-sn-jar-1");
            Object repeated = clientClass.getMethod("pay", long.class, String.class).invoke(client, orderId, "pay-sn-jar-1");

            assertSame(alone, created.getClass().getClassLoader(), "loaded from the jar");
            assertEquals("Succeeded", paid.getClass().getSimpleName(), paid.toString());
            assertEquals(true, repeated.getClass().getMethod("replayed").invoke(repeated), repeated.toString());
            assertEquals(paid.getClass().getMethod("value").invoke(paid), repeated.getClass().getMethod("value").invoke(repeated));
        }
    }

    /** The client jar and Jackson's three jars, as the build resolved them for its tests. */
    private static URL[] classpath() throws IOException {
        List<URL> urls = new ArrayList<>(List.of(JAR.toUri().toURL()));
        String[] entries = Files.readString(Path.of("target/bench.classpath")).strip().split(":");
        for (String entry : Arrays.stream(entries).filter(each -> each.matches(".*/jackson-(databind|core|annotations)-[^/]*\\.jar")).toList()) {
            urls.add(Path.of(entry).toUri().toURL());
        }
        assertEquals(4, urls.size(), "the client jar and Jackson's databind, core and annotations: " + urls);
        return urls.toArray(URL[]::new);
    }
}
