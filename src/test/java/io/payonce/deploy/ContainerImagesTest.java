package io.payonce.deploy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What each Dockerfile's header tells an operator must start the service: both ports published and
 * exposed, and every variable production requires (application.properties: payonce.required-in-production
 * and the gateway's key)
 * set in its docker run example; a missing one would stop the container at its first start.
 */
class ContainerImagesTest {

    /** A production key whose value is a variable with no default: the start fails without it. */
    private static final Pattern REQUIRED = Pattern.compile("(?m)^(?:payonce\\.required-in-production\\.[a-z-]+|mp\\.jwt\\.verify\\.publickey\\.location)=\\$\\{(PAYONCE_[A-Z_]+)}$");
    private static final Pattern SET_IN_EXAMPLE = Pattern.compile("-e (PAYONCE_[A-Z_]+)=");

    @ParameterizedTest
    @ValueSource(strings = {"Dockerfile.jvm", "Dockerfile.native-micro"})
    void theHeaderStartsTheServiceWithEverySettingProductionRequires(String dockerfile) throws IOException {
        String text = Files.readString(Path.of("src/main/docker", dockerfile));
        String run = text.substring(text.indexOf("docker run"));
        Set<String> set = new TreeSet<>();
        Matcher setting = SET_IN_EXAMPLE.matcher(run);
        while (setting.find()) {
            set.add(setting.group(1));
        }
        assertTrue(set.containsAll(requiredInProduction()), dockerfile + " sets " + set + ", production requires " + requiredInProduction());
        assertTrue(run.contains("-p 8080:8080") && run.contains("-p 127.0.0.1:9000:9000"), dockerfile + " publishes the API, and the management port to this host only");
        assertTrue(text.contains("\nEXPOSE 8080 9000\n"), dockerfile + " exposes both ports");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Dockerfile.jvm"})
    void theJvmImageIsBuiltFromTheJarWithATagAndResourcesOfItsOwn(String dockerfile) throws IOException {
        String text = Files.readString(Path.of("src/main/docker", dockerfile));
        assertTrue(text.contains("./mvnw package -DskipTests -DskipNative -Dpayonce-image.variant=-jvm"),
                dockerfile + ": the header's build leaves the native executable out and tags the JVM image apart from the native one");
        assertTrue(text.contains("-Dquarkus.kubernetes.resources.limits.memory=768Mi"), dockerfile + ": the JVM's manifest asks for the JVM's memory");
    }

    private static Set<String> requiredInProduction() throws IOException {
        Set<String> required = new TreeSet<>();
        Matcher variable = REQUIRED.matcher(Files.readString(Path.of("src/main/resources/application.properties")));
        while (variable.find()) {
            required.add(variable.group(1));
        }
        assertEquals(11, required.size(), "the variables production requires: " + required);
        return required;
    }
}
