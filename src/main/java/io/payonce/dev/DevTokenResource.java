package io.payonce.dev;

import io.payonce.auth.Caller;
import io.payonce.input.Identifiers;
import io.quarkus.arc.profile.IfBuildProfile;
import io.quarkus.arc.properties.IfBuildProperty;
import io.smallrye.jwt.build.Jwt;
import jakarta.annotation.security.PermitAll;
import jakarta.validation.constraints.Pattern;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.time.Duration;
import java.util.Set;

/**
 * Dev mode only: mints a bearer token so that a person can try the API from curl or Swagger UI.
 * The build leaves this class out of production builds whatever their settings, and out of test
 * builds but the quickstart's, which runs the quickstart's commands as a newcomer would; its signing
 * key is a test key under src/test that production never trusts.
 */
@IfBuildProfile(anyOf = {"dev", "test"})
@IfBuildProperty(name = DevTokenResource.ENDPOINT, stringValue = "enabled")
@Path("/dev/token")
public class DevTokenResource {

    /** The build setting that keeps the endpoint, "enabled" in dev mode. */
    public static final String ENDPOINT = "payonce-dev.token-endpoint";

    private static final Duration LIFETIME = Duration.ofHours(8);

    private final String issuer;
    private final String audience;

    public DevTokenResource(@ConfigProperty(name = "mp.jwt.verify.issuer") String issuer,
                            @ConfigProperty(name = "mp.jwt.verify.audiences") String audience) {
        this.issuer = issuer;
        this.audience = audience;
    }

    @GET
    @PermitAll
    @Produces(MediaType.TEXT_PLAIN)
    public String token(
            @QueryParam("sub") @DefaultValue("alice") @Pattern(regexp = Identifiers.USER_ID) String subject,
            @QueryParam("ops") @DefaultValue("false") boolean ops) {
        Set<String> groups = ops ? Set.of(Caller.USER, Caller.OPS) : Set.of(Caller.USER);
        return Jwt.issuer(issuer).audience(audience).subject(subject).groups(groups).expiresIn(LIFETIME).sign();
    }
}
