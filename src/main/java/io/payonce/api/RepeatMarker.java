package io.payonce.api;

import io.payonce.idempotency.Answer;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.media.Schema;

/**
 * Documents the repeat convention once, for every write: a success answer that repeats an earlier
 * one (the same key, the same submit token, the same natural key) carries this header, with the
 * first answer's status and Location. Every POST's 2xx answer declares it, so no endpoint can
 * leave it out; {@link PayonceApi} states the convention in words.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class RepeatMarker implements OASFilter {

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        if (openAPI.getPaths() == null || openAPI.getPaths().getPathItems() == null) {
            return;
        }
        openAPI.getPaths().getPathItems().forEach((path, item) -> {
            if (item.getPOST() != null && item.getPOST().getResponses() != null) {
                item.getPOST().getResponses().getAPIResponses().forEach((status, response) -> {
                    if (status.startsWith("2")) {
                        response.addHeader(Answer.REPLAYED_HEADER, OASFactory.createHeader()
                                .description("true when this answer repeats an earlier one; absent on a first answer")
                                .schema(OASFactory.createSchema().addType(Schema.SchemaType.BOOLEAN)));
                    }
                });
            }
        });
    }
}
