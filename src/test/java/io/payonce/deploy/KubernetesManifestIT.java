package io.payonce.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.payonce.support.PackagedInstance;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Properties;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Kubernetes manifest the build generates (quarkus-kubernetes, target/kubernetes/kubernetes.yml):
 * probes on the management port, the API port for the Service, resources set, every setting and
 * password taken from the ConfigMap and the Secret by reference, never written into the file, and a
 * pod an operator can run: restricted security, its own account, a disruption budget, a network
 * policy, an immutable image and nothing that changes with the build machine or the build time.
 */
class KubernetesManifestIT {

    private static final Path MANIFEST = Path.of("target/kubernetes/kubernetes.yml");
    private static final Path SERVICE_MONITOR = Path.of("target/observability/payonce-servicemonitor.yml");

    private static List<JsonNode> documents;

    @Test
    void probesAnswerOnTheManagementPort() throws IOException {
        JsonNode container = container();
        int management = containerPort(container, "management");
        // The paths the tests probe: /q/health itself would add the wellness check (Redis), which may answer 503.
        for (Map.Entry<String, String> probe : Map.of("livenessProbe", "/q/health/live", "readinessProbe", "/q/health/ready").entrySet()) {
            JsonNode get = container.path(probe.getKey()).path("httpGet");
            assertFalse(get.isMissingNode(), probe.getKey() + " is an HTTP check: " + container);
            assertEquals(probe.getValue(), get.path("path").asText(), probe.getKey() + ": " + get);
            JsonNode port = get.path("port");
            assertTrue(port.asText().equals("management") || port.asInt() == management, probe.getKey() + " port: " + get);
        }
        // BrokerClusterIT probes readiness as this probe does: one not answered within its timeout has failed.
        JsonNode readiness = container.path("readinessProbe");
        assertEquals(PackagedInstance.PROBE_TIMEOUT.toSeconds(), readiness.path("timeoutSeconds").asLong(), "readinessProbe: " + readiness);
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
        JsonNode volume = volumeNamed(mount.path("name").asText());
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

    /**
     * On a stop the pod first pauses (preStop) while routing converges, then SIGTERM turns readiness DOWN for
     * quarkus.shutdown.delay and drains for up to quarkus.shutdown.timeout: the grace period covers all three and
     * the close, or the kubelet kills pays in flight.
     */
    @Test
    void theGracePeriodCoversThePauseTheDelayAndTheDrain() throws IOException {
        Properties properties = new Properties();
        try (var reader = Files.newBufferedReader(Path.of("src/main/resources/application.properties"))) {
            properties.load(reader);
        }
        long delay = Duration.parse("PT" + properties.getProperty("quarkus.shutdown.delay")).toSeconds();
        long drain = Duration.parse("PT" + properties.getProperty("quarkus.shutdown.timeout")).toSeconds();
        long processorTimeout = Duration.parse("PT" + properties.getProperty("payonce.processor.timeout", "10s")).toSeconds();
        long transactionBound = Long.parseLong(properties.getProperty("payonce.database.statement-timeout-seconds", "5"))
                + Long.parseLong(properties.getProperty("payonce.database.idle-transaction-timeout-seconds", "5"));
        assertTrue(drain >= processorTimeout + 3 * transactionBound,
                "the drain outlasts a card pay: its processor call and three transactions at their bound, " + drain + " s");
        assertEquals("true", properties.getProperty("quarkus.shutdown.delay-enabled"), "readiness goes DOWN on SIGTERM");
        int pause = container().path("lifecycle").path("preStop").path("sleep").path("seconds").asInt();
        assertTrue(pause > 0, "a preStop pause: " + container().path("lifecycle"));
        int grace = podSpec().path("terminationGracePeriodSeconds").asInt();
        assertTrue(grace >= pause + delay + drain + 10, "grace " + grace + " s for pause " + pause + " + delay " + delay + " + drain " + drain + " + closing");
    }

    /**
     * The ServiceMonitor selects payonce's Service alone, and lives in a file of its own: kubectl refuses a whole
     * file holding a kind whose CRD the cluster lacks, whatever -l selects.
     */
    @Test
    void theServiceMonitorSelectsPayoncesServiceOnlyFromAFileOfItsOwn() throws IOException {
        assertTrue(documents().stream().noneMatch(document -> document.path("apiVersion").asText().startsWith("monitoring.coreos.com/")),
                "the manifest applies on a cluster without the Prometheus Operator");
        JsonNode monitor = new ObjectMapper(new YAMLFactory()).readTree(SERVICE_MONITOR.toFile());
        assertEquals("ServiceMonitor", monitor.path("kind").asText());
        JsonNode selector = monitor.path("spec").path("selector").path("matchLabels");
        assertFalse(selector.isEmpty(), "an empty selector matches every Service in the namespace: " + monitor);
        JsonNode service = ofKind("Service").findFirst().orElseThrow();
        selector.fields().forEachRemaining(label -> assertEquals(label.getValue().asText(), service.path("metadata").path("labels").path(label.getKey()).asText(), "the Service carries " + label));
        assertEquals("payonce", service.path("metadata").path("name").asText(), "the job the alerts read is the Service's name");
        assertEquals("prometheus-operator", monitor.path("metadata").path("labels").path("payonce.io/needs").asText(), monitor.toString());
        assertEquals(containerPort(container(), "management"), monitor.path("spec").path("endpoints").path(0).path("targetPort").asInt(), monitor.toString());
    }

    /** A Service named payonce-db in the namespace must not turn PAYONCE_DB_PORT into tcp://…: no service links. */
    @Test
    void noServiceLinkVariableReachesThePod() throws IOException {
        assertFalse(podSpec().path("enableServiceLinks").asBoolean(true), podSpec().toString());
    }

    /** Kubernetes writes a Secret's files as root; the pod's user is not root, so the public key must be world-readable. */
    @Test
    void theGatewayKeyIsReadableByTheNonRootUser() throws IOException {
        JsonNode volume = volumeNamed("gateway-key");
        assertEquals(0444, volume.path("secret").path("defaultMode").asInt(), volume.toString());
        JsonNode pod = podSpec().path("securityContext");
        assertTrue(pod.path("runAsNonRoot").asBoolean(), pod.toString());
        assertTrue(pod.path("runAsUser").asInt() > 0, "a numeric non-root user: " + pod);
        assertTrue(pod.path("fsGroup").asInt() > 0, "the volumes belong to the pod's group: " + pod);
    }

    /** Pod Security Standards, "restricted": every field it checks, on the pod or the container. */
    @Test
    void thePodPassesTheRestrictedPodSecurityStandard() throws IOException {
        JsonNode container = container().path("securityContext");
        assertTrue(container.path("runAsNonRoot").asBoolean() || podSpec().path("securityContext").path("runAsNonRoot").asBoolean(), container.toString());
        assertFalse(container.path("allowPrivilegeEscalation").asBoolean(true), "allowPrivilegeEscalation: false: " + container);
        assertEquals(List.of("ALL"), texts(container.path("capabilities").path("drop")), container.toString());
        assertTrue(container.path("capabilities").path("add").isMissingNode(), container.toString());
        assertEquals("RuntimeDefault", podSpec().path("securityContext").path("seccompProfile").path("type").asText(), podSpec().toString());
        assertTrue(container.path("readOnlyRootFilesystem").asBoolean(), container.toString());
        assertFalse(container.path("privileged").asBoolean(false), container.toString());
        assertTrue(podSpec().path("hostNetwork").isMissingNode() && podSpec().path("hostPID").isMissingNode(), podSpec().toString());
        JsonNode tmp = mountAt("/tmp");
        assertTrue(volumeNamed(tmp.path("name").asText()).has("emptyDir"), "the runtime writes under an emptyDir at /tmp");
    }

    @Test
    void thePodHasAServiceAccountOfItsOwnWithoutAnApiToken() throws IOException {
        assertEquals("payonce", podSpec().path("serviceAccountName").asText(), podSpec().toString());
        assertFalse(podSpec().path("automountServiceAccountToken").asBoolean(true), "no API token in the pod");
        JsonNode account = ofKind("ServiceAccount").filter(candidate -> "payonce".equals(candidate.path("metadata").path("name").asText()))
                .findFirst().orElseThrow(() -> new AssertionError("the manifest creates the ServiceAccount payonce"));
        assertFalse(account.path("automountServiceAccountToken").asBoolean(true), account.toString());
    }

    /** A drain, a node upgrade or a rollout never takes away more than one pod's capacity, and replicas spread over nodes. */
    @Test
    void disruptionsAndRolloutsKeepCapacity() throws IOException {
        JsonNode budget = ofKind("PodDisruptionBudget").findFirst().orElseThrow(() -> new AssertionError("a PodDisruptionBudget"));
        assertEquals("policy/v1", budget.path("apiVersion").asText());
        assertEquals(podLabels().path("app.kubernetes.io/name").asText(), budget.path("spec").path("selector").path("matchLabels").path("app.kubernetes.io/name").asText());
        int replicas = deployment().path("spec").path("replicas").asInt();
        JsonNode maxUnavailable = budget.path("spec").path("maxUnavailable");
        assertTrue(maxUnavailable.isInt() && maxUnavailable.asInt() >= 1 && maxUnavailable.asInt() < replicas, budget.toString());

        JsonNode strategy = deployment().path("spec").path("strategy");
        assertEquals("RollingUpdate", strategy.path("type").asText(), strategy.toString());
        assertEquals(0, replicasOf(strategy.path("rollingUpdate").path("maxUnavailable"), replicas, false), strategy.toString());
        assertEquals(1, replicasOf(strategy.path("rollingUpdate").path("maxSurge"), replicas, true), strategy.toString());

        List<String> spreadOver = new ArrayList<>();
        podSpec().path("topologySpreadConstraints").forEach(constraint -> {
            assertEquals("payonce", constraint.path("labelSelector").path("matchLabels").path("app.kubernetes.io/name").asText(), constraint.toString());
            spreadOver.add(constraint.path("topologyKey").asText());
        });
        assertTrue(spreadOver.contains("kubernetes.io/hostname"), "replicas spread across nodes: " + spreadOver);
    }

    /** In: the API from the gateway's namespace, the management port from the monitoring namespace. Out: DNS, the stores, the processor. */
    @Test
    void aNetworkPolicyAdmitsTheGatewayAndMonitoringAndReachesTheStoresOnly() throws IOException {
        JsonNode policy = ofKind("NetworkPolicy").findFirst().orElseThrow(() -> new AssertionError("a NetworkPolicy"));
        JsonNode spec = policy.path("spec");
        assertEquals("payonce", spec.path("podSelector").path("matchLabels").path("app.kubernetes.io/name").asText(), spec.toString());
        assertEquals(List.of("Ingress", "Egress"), texts(spec.path("policyTypes")));
        List<String> ingress = new ArrayList<>();
        spec.path("ingress").forEach(rule -> {
            assertFalse(rule.path("from").isMissingNode() || rule.path("from").isEmpty(), "every ingress rule names its source: " + rule);
            rule.path("from").forEach(source -> assertTrue(source.has("namespaceSelector") && !source.path("namespaceSelector").isEmpty(), rule.toString()));
            rule.path("ports").forEach(port -> ingress.add(port.path("port").asInt() + " from " + rule.path("from").path(0).path("namespaceSelector").path("matchLabels")));
        });
        assertEquals(List.of("8080 from {\"payonce.io/gateway\":\"true\"}", "9000 from {\"payonce.io/monitoring\":\"true\"}"), ingress);
        List<Integer> egressPorts = new ArrayList<>();
        spec.path("egress").forEach(rule -> {
            assertFalse(rule.path("to").isMissingNode() || rule.path("to").isEmpty(), "every egress rule names its destination: " + rule);
            assertFalse(rule.path("ports").isEmpty(), "every egress rule names its ports: " + rule);
            rule.path("ports").forEach(port -> egressPorts.add(port.path("port").asInt()));
        });
        assertEquals(List.of(53, 53, 3306, 6379, 5672, 5671, 4317, 4318, 443), egressPorts);
    }

    /** The pod template changes only when the application does: no build time, no path of the machine that built it. */
    @Test
    void nothingOfTheBuildMachineRollsThePods() throws IOException {
        for (JsonNode document : documents()) {
            String text = document.toString();
            assertFalse(text.contains("app.quarkus.io/build-timestamp"), "a build timestamp in " + document.path("kind"));
            assertFalse(text.contains("app.quarkus.io/vcs-uri") || text.contains("vcs-url"), "a build-machine path in " + document.path("kind"));
        }
    }

    /** The tag names the version and the commit, so IfNotPresent never keeps a stale image under a reused tag. */
    @Test
    void theImageTagIsImmutable() throws IOException {
        String image = container().path("image").asText();
        String tag = image.substring(image.lastIndexOf(':') + 1);
        assertTrue(tag.matches("\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?-[0-9a-f]{12}"), "the version and the commit: " + image);
    }

    /** Flyway runs before the pod reports started: the startup probe waits 5 minutes for it before the kubelet restarts the pod. */
    @Test
    void theStartupProbeCoversAMigrationOnALoadedDatabase() throws IOException {
        JsonNode probe = container().path("startupProbe");
        int budgetSeconds = probe.path("initialDelaySeconds").asInt() + probe.path("periodSeconds").asInt() * probe.path("failureThreshold").asInt();
        assertTrue(budgetSeconds >= 300, "startup budget " + budgetSeconds + " s: " + probe);
        assertTrue(probe.path("httpGet").path("path").asText().startsWith("/q/health/started"), probe.toString());
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

    /**
     * An int-or-string field as Kubernetes reads it: a number, or a string only as a percentage of the replicas
     * (rounded up for a surge, down for unavailability); any other string is refused by the API server.
     */
    private static int replicasOf(JsonNode intOrPercent, int replicas, boolean roundUp) {
        if (intOrPercent.isInt()) {
            return intOrPercent.asInt();
        }
        String text = intOrPercent.asText();
        assertTrue(text.matches("\\d+%"), "the API server takes a string only as a percentage: '" + text + "'");
        double share = Integer.parseInt(text.substring(0, text.length() - 1)) * replicas / 100.0;
        return (int) (roundUp ? Math.ceil(share) : Math.floor(share));
    }

    private static JsonNode volumeNamed(String name) throws IOException {
        JsonNode volumes = podSpec().path("volumes");
        return StreamSupport.stream(volumes.spliterator(), false)
                .filter(candidate -> name.equals(candidate.path("name").asText())).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name + ": " + volumes));
    }

    private static JsonNode mountAt(String path) throws IOException {
        JsonNode mounts = container().path("volumeMounts");
        return StreamSupport.stream(mounts.spliterator(), false)
                .filter(candidate -> path.equals(candidate.path("mountPath").asText())).findFirst()
                .orElseThrow(() -> new AssertionError("nothing mounted at " + path + ": " + mounts));
    }

    private static JsonNode podLabels() throws IOException {
        return deployment().path("spec").path("template").path("metadata").path("labels");
    }

    private static List<String> texts(JsonNode array) {
        List<String> texts = new ArrayList<>();
        array.forEach(item -> texts.add(item.asText()));
        return texts;
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
