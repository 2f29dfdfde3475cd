package io.payonce.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Kubernetes manifest the build generates (quarkus-kubernetes, target/kubernetes/kubernetes.yml):
 * probes on the management port, the API port for the Service, resources set, and every setting
 * and password taken from the ConfigMap and the Secret by reference, never written into the file.
 */
class KubernetesManifestIT {

    private static final Path MANIFEST = Path.of("target/kubernetes/kubernetes.yml");

    private static List<JsonNode> documents;

    @Test
    void probesAnswerOnTheManagementPort() throws IOException {
        JsonNode container = container();
        int management = containerPort(container, "management");
        for (String probe : List.of("livenessProbe", "readinessProbe")) {
            JsonNode get = container.path(probe).path("httpGet");
            assertFalse(get.isMissingNode(), probe + " is an HTTP check: " + container);
            assertTrue(get.path("path").asText().startsWith("/q/health"), probe + ": " + get);
            JsonNode port = get.path("port");
            assertTrue(port.asText().equals("management") || port.asInt() == management, probe + " port: " + get);
        }
        assertEquals(9000, management);
        assertEquals(8080, containerPort(container, "http"));
    }

    @Test
    void resourcesAreRequestedAndLimited() throws IOException {
        JsonNode resources = container().path("resources");
        for (String bound : List.of("requests", "limits")) {
            assertFalse(resources.path(bound).path("cpu").asText().isEmpty(), bound + ": " + resources);
            assertFalse(resources.path(bound).path("memory").asText().isEmpty(), bound + ": " + resources);
        }
    }

    @Test
    void configurationAndSecretsComeByReferenceOnly() throws IOException {
        JsonNode container = container();
        List<String> sources = new ArrayList<>();
        container.path("envFrom").forEach(source -> source.fields().forEachRemaining(kind -> sources.add(kind.getKey() + ":" + kind.getValue().path("name").asText())));
        assertTrue(sources.contains("configMapRef:payonce-config"), "envFrom: " + sources);
        assertTrue(sources.contains("secretRef:payonce-secrets"), "envFrom: " + sources);
        for (JsonNode variable : container.path("env")) {
            String name = variable.path("name").asText().toUpperCase(Locale.ROOT);
            boolean secretLike = name.contains("PASSWORD") || name.contains("SECRET") || name.contains("TOKEN") || name.contains("PRIVATE");
            assertFalse(secretLike && variable.has("value"), "a secret is written into the manifest: " + variable);
        }
    }

    @Test
    void theGatewayKeyIsMountedFromItsSecretReadOnly() throws IOException {
        JsonNode container = container();
        JsonNode mount = StreamSupport.stream(container.path("volumeMounts").spliterator(), false)
                .filter(candidate -> "/keys".equals(candidate.path("mountPath").asText())).findFirst().orElseThrow();
        assertTrue(mount.path("readOnly").asBoolean(), mount.toString());
        JsonNode volume = StreamSupport.stream(podSpec().path("volumes").spliterator(), false)
                .filter(candidate -> candidate.path("name").asText().equals(mount.path("name").asText())).findFirst().orElseThrow();
        assertEquals("payonce-gateway-key", volume.path("secret").path("secretName").asText(), volume.toString());
    }

    @Test
    void theSelectorSurvivesANewVersionAndTheImageIsNotFromAPublicRegistry() throws IOException {
        JsonNode deployment = deployment();
        assertTrue(deployment.path("spec").path("selector").path("matchLabels").path("app.kubernetes.io/version").isMissingNode(),
                deployment.path("spec").path("selector").toString());
        String image = container().path("image").asText();
        assertTrue(image.startsWith("registry.invalid/payonce/"), image);
    }

    @Test
    void aServiceRoutesTheApiPort() throws IOException {
        JsonNode service = ofKind("Service").findFirst().orElseThrow();
        assertTrue(StreamSupport.stream(service.path("spec").path("ports").spliterator(), false)
                .anyMatch(port -> port.path("targetPort").asInt() == 8080 || "http".equals(port.path("targetPort").asText())), service.toString());
    }

    private static int containerPort(JsonNode container, String name) {
        for (JsonNode port : container.path("ports")) {
            if (name.equals(port.path("name").asText())) {
                return port.path("containerPort").asInt();
            }
        }
        throw new AssertionError("no port named " + name + ": " + container.path("ports"));
    }

    /** Each pod migrates at start: no Job whose fixed name would refuse the next version, no init container waiting for one. */
    @Test
    void thePodsMigrateTheSchemaThemselves() throws IOException {
        assertTrue(ofKind("Job").findAny().isEmpty(), "no migration Job");
        assertTrue(podSpec().path("initContainers").isMissingNode(), "nothing to wait for: " + podSpec().path("initContainers"));
        assertTrue(StreamSupport.stream(container().path("env").spliterator(), false)
                .noneMatch(variable -> "QUARKUS_FLYWAY_ACTIVE".equals(variable.path("name").asText())), "Flyway stays on in the pods");
    }

    private static JsonNode deployment() throws IOException {
        return ofKind("Deployment").findFirst().orElseThrow();
    }

    private static JsonNode podSpec() throws IOException {
        return deployment().path("spec").path("template").path("spec");
    }

    private static JsonNode container() throws IOException {
        JsonNode container = podSpec().path("containers").path(0);
        assertFalse(container.isMissingNode(), "the Deployment has a container");
        return container;
    }

    private static Stream<JsonNode> ofKind(String kind) throws IOException {
        return documents().stream().filter(document -> kind.equals(document.path("kind").asText()));
    }

    /** The manifest's documents, read once for all the tests. */
    private static synchronized List<JsonNode> documents() throws IOException {
        if (documents == null) {
            ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
            List<JsonNode> read = new ArrayList<>();
            try (var values = yaml.readerFor(JsonNode.class).<JsonNode>readValues(MANIFEST.toFile())) {
                values.forEachRemaining(read::add);
            }
            assertFalse(read.isEmpty(), "the build wrote " + MANIFEST);
            documents = List.copyOf(read);
        }
        return documents;
    }
}
