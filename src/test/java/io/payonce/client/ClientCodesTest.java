package io.payonce.client;

import io.payonce.errors.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The client reads the server's codes from its own lists: a code the server adds to a kind fails here first. */
class ClientCodesTest {

    @Test
    void theClientRetriesAfterTheServersRetryLaterCodesAndNoOther() {
        Set<String> server = Arrays.stream(ErrorCode.values()).filter(code -> code.kind().retryAfter()).map(Enum::name).collect(Collectors.toSet());

        assertEquals(server, Codes.RETRY_WITH_THE_SAME_KEY);
    }

    /** After a request that may have taken effect, only these refusals settle the operation: a new stored refusal must be here. */
    @Test
    void theClientTakesTheServersRecordedRefusalsAsFinalAndNoOther() {
        Set<String> server = Arrays.stream(ErrorCode.values()).filter(code -> code.kind() == ErrorCode.Kind.RECORDED).map(Enum::name)
                .collect(Collectors.toSet());

        assertEquals(server, Codes.RECORDED);
    }
}
