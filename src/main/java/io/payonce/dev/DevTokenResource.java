package io.payonce.dev;

import io.payonce.auth.Caller;
import io.payonce.input.Identifiers;
import io.quarkus.arc.profile.IfBuildProfile;
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
 * The build leaves this class out of test and production builds, and its signing key is a test
 * key under src/test that production never trusts.
 */
@IfBuildProfile("dev")
@Path("/dev/token")
public class DevTokenResource {

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
