package io.payonce.processor;

import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

/**
 * The processor's refunds, beside its charges ({@link ProcessorApi}) on the same client settings: a
 * refund that honours an Idempotency-Key (the same key answers with the same refund, never a second
 * one), a lookup of the refund made under a key, and a lookup of a refund by its id. Answers come back whatever their status, for
 * {@link Processor} to read.
 */
@RegisterRestClient(configKey = "processor")
@Path("/v1/refunds")
@Produces(MediaType.APPLICATION_JSON)
public interface ProcessorRefundApi {

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    Uni<Response> refund(@HeaderParam("Idempotency-Key") String key, @HeaderParam("Authorization") String authorization,
                         RefundRequest request);

    @GET
    @Path("/by-idempotency-key/{key}")
    Uni<Response> refundUnder(@PathParam("key") String key, @HeaderParam("Authorization") String authorization);

    @GET
    @Path("/{id}")
    Uni<Response> refundById(@PathParam("id") String id, @HeaderParam("Authorization") String authorization);
}
