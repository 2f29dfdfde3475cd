package io.payonce.idempotency;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.util.Map;
import java.util.TreeSet;
import java.util.List;

/**
 * One spelling per request: properties sorted, nulls left out, no whitespace. Two requests that
 * mean the same thing have the same canonical form, whatever order or spacing the client used.
 */
public final class CanonicalJson {

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .serializationInclusion(JsonInclude.Include.NON_NULL)
            .build();

    private CanonicalJson() {
    }

    /** The canonical form of a parsed request body; an absent body is the empty object. */
    public static String of(Object request) {
        try {
            return MAPPER.writeValueAsString(request == null ? Map.of() : request);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A parsed request always serializes", e);
        }
    }

    /** The top-level fields whose values differ between two canonical requests. */
    static List<String> differingFields(String first, String second) {
        try {
            JsonNode a = MAPPER.readTree(first);
            JsonNode b = MAPPER.readTree(second);
            TreeSet<String> names = new TreeSet<>();
            a.fieldNames().forEachRemaining(names::add);
            b.fieldNames().forEachRemaining(names::add);
            return names.stream().filter(name -> !a.path(name).equals(b.path(name))).toList();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Stored canonical requests are always valid JSON", e);
        }
    }
}
