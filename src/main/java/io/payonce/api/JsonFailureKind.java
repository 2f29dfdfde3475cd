package io.payonce.api;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;

/** Why a body could not be read, in words a client can act on. */
enum JsonFailureKind {
    SYNTAX("the JSON is not well formed"),
    ENCODING("the body is not JSON in UTF-8, UTF-16 or UTF-32"),
    TOO_COMPLEX("the JSON exceeds the nesting, length or size limits"),
    UNKNOWN_FIELD("an unknown field was sent"),
    WRONG_TYPE("a value has the wrong type or format"),
    UNREADABLE("the JSON does not match the expected shape");

    private final String description;

    JsonFailureKind(String description) {
        this.description = description;
    }

    String description() {
        return description;
    }

    static JsonFailureKind of(JsonProcessingException e) {
        if (e instanceof StreamConstraintsException) {
            return TOO_COMPLEX;
        }
        if (e instanceof JsonParseException) {
            return SYNTAX;
        }
        if (e instanceof UnrecognizedPropertyException) {
            return UNKNOWN_FIELD;
        }
        if (e instanceof InvalidFormatException || e instanceof MismatchedInputException || e instanceof InputCoercionException) {
            return WRONG_TYPE;
        }
        return UNREADABLE;
    }
}
