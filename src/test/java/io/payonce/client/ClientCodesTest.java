package io.payonce.client;

import io.payonce.errors.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The client retries after exactly the codes the server answers "later, under the same key" with: a new such code fails here first. */
class ClientCodesTest {

    @Test
    void theClientRetriesAfterTheServersRetryLaterCodesAndNoOther() {
        Set<String> server = Arrays.stream(ErrorCode.values()).filter(code -> code.kind().retryAfter()).map(Enum::name).collect(Collectors.toSet());

        assertEquals(server, Codes.RETRY_WITH_THE_SAME_KEY);
    }
}
