package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One logical operation as it is sent, the same on every attempt: {@code method} to {@code path}
 * with {@code headers} (its key among them) and {@code body} (null for none); what a success makes
 * of the answer; and, for one that may answer 202, whether the state its {@code Location} shows is
 * definite. {@code key} is what a caller resumes it with.
 */
record Operation<T>(String name, String key, String method, String path, Map<String, String> headers, String body,
                    Function<JsonNode, T> value, Predicate<JsonNode> definite) {

    static <T> Operation<T> read(String name, String path, Function<JsonNode, T> value) {
        return new Operation<>(name, null, "GET", path, Map.of(), null, value, json -> true);
    }
}
