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
 * The card processor's API, shaped like the well-known ones. A charge or a refund honours an
 * Idempotency-Key (the same key answers with the same charge or refund, never a second one), and
 * each can be looked up under the key it was made under or by its id; the charges made for one
 * reference (an order) can be searched, whatever key they were made under or whether the processor
 * still remembers it. Answers come back as they are, whatever their status: {@link Processor} reads
 * each one, because a status is an outcome here, not an error.
 */
@RegisterRestClient(configKey = "processor")
@Path("/v1")
@Produces(MediaType.APPLICATION_JSON)
public interface ProcessorApi {

    @POST
    @Path("/charges")
    @Consumes(MediaType.APPLICATION_JSON)
    Uni<Response> charge(@HeaderParam("Idempotency-Key") String key, @HeaderParam("Authorization") String authorization,
                         ChargeRequest request);

    @GET
    @Path("/charges/by-idempotency-key/{key}")
    Uni<Response> chargeUnder(@PathParam("key") String key, @HeaderParam("Authorization") String authorization);

    @GET
    @Path("/charges/search")
    Uni<Response> chargesFor(@QueryParam("reference") String reference, @QueryParam("limit") int limit,
                             @HeaderParam("Authorization") String authorization);

    @GET
    @Path("/charges/{id}")
    Uni<Response> chargeById(@PathParam("id") String id, @HeaderParam("Authorization") String authorization);

    @POST
    @Path("/refunds")
    @Consumes(MediaType.APPLICATION_JSON)
    Uni<Response> refund(@HeaderParam("Idempotency-Key") String key, @HeaderParam("Authorization") String authorization,
                         RefundRequest request);

    @GET
    @Path("/refunds/by-idempotency-key/{key}")
    Uni<Response> refundUnder(@PathParam("key") String key, @HeaderParam("Authorization") String authorization);

    @GET
    @Path("/refunds/{id}")
    Uni<Response> refundById(@PathParam("id") String id, @HeaderParam("Authorization") String authorization);
}
