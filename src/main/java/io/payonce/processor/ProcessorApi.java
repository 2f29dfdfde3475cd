package io.payonce.processor;

import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/**
 * The card processor's API, shaped like the well-known ones: a charge that honours an
 * Idempotency-Key (the same key answers with the same charge, never a second one), a lookup of
 * the charge made under a key, a lookup of a charge by its id, and a search of the charges made for
 * one reference (an order), whatever key they were made under or whether the processor still remembers
 * it. Answers come back as they are, whatever their status: {@link Processor}
 * reads each one, because a status is an outcome here, not an error.
 */
@RegisterRestClient(configKey = "processor")
@Path("/v1/charges")
@Produces(MediaType.APPLICATION_JSON)
public interface ProcessorApi {

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    Uni<Response> charge(@HeaderParam("Idempotency-Key") String key, @HeaderParam("Authorization") String authorization,
                         ChargeRequest request);

    @GET
    @Path("/by-idempotency-key/{key}")
    Uni<Response> chargeUnder(@PathParam("key") String key, @HeaderParam("Authorization") String authorization);

    @GET
    @Path("/search")
    Uni<Response> chargesFor(@QueryParam("reference") String reference, @QueryParam("limit") int limit,
                             @HeaderParam("Authorization") String authorization);

    @GET
    @Path("/{id}")
    Uni<Response> chargeById(@PathParam("id") String id, @HeaderParam("Authorization") String authorization);
}
