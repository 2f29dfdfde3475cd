package io.payonce.processor;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.quarkus.runtime.annotations.RegisterForReflection;

/** A charge as the processor describes it; fields payonce does not use are ignored. */
@RegisterForReflection
@JsonIgnoreProperties(ignoreUnknown = true)
public record ChargeReply(
        String id,
        String status,
        Long amount,
        String currency,
        String reference,
        @JsonProperty("decline_code") String declineCode) {
}
