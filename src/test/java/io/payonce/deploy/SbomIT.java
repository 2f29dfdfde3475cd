package io.payonce.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every build leaves a CycloneDX SBOM of the application in target/: what ships, by package URL. */
class SbomIT {

    @Test
    void theBuildWritesACycloneDxSbomOfTheApplication() throws IOException {
        JsonNode sbom = new ObjectMapper().readTree(Path.of("target/payonce-sbom.json").toFile());
        assertEquals("CycloneDX", sbom.path("bomFormat").asText());
        assertEquals("payonce", sbom.path("metadata").path("component").path("name").asText());
        Set<String> shipped = new HashSet<>();
        sbom.path("components").forEach(component -> shipped.add(component.path("group").asText() + ":" + component.path("name").asText()));
        for (String runtime : new String[] {"io.quarkus:quarkus-core", "io.vertx:vertx-mysql-client", "org.flywaydb:flyway-core"}) {
            assertTrue(shipped.contains(runtime), runtime + " is listed among " + shipped.size() + " components");
        }
        assertTrue(shipped.stream().noneMatch(name -> name.startsWith("io.rest-assured:") || name.equals("io.quarkus:quarkus-junit")),
                "test dependencies do not ship");
    }
}
