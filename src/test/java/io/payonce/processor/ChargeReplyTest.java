package io.payonce.processor;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The processor's words are read as it writes them: a charge id or a decline code may come as a number. */
class ChargeReplyTest {

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void aChargeWhoseIdAndCodesAreNumbersIsUnderstood() throws Exception {
        ChargeReply charge = ChargeReply.of(json.readTree("""
                {"id":12345,"status":"declined","amount":700,"currency":"EUR","reference":"order-7","decline_code":51,"extra":{"a":1}}"""));

        assertEquals(new ChargeReply("12345", "declined", 700L, "EUR", "order-7", "51", null), charge);
    }

    @Test
    void anAmountIsAnIntegerOrNothing() throws Exception {
        assertNull(ChargeReply.of(json.readTree("{\"id\":\"ch_1\",\"status\":\"succeeded\",\"amount\":19.99}")).amount());
        assertNull(ChargeReply.of(json.readTree("{\"id\":\"ch_1\",\"status\":\"succeeded\",\"amount\":\"700\"}")).amount());
        assertNull(ChargeReply.of(json.readTree("{\"id\":\"ch_1\",\"status\":\"succeeded\",\"amount\":99999999999999999999}")).amount());
    }

    /** How much of a charge was refunded proves an operator's refund settlement: read as strictly as its amount. */
    @Test
    void theAmountRefundedIsAnIntegerOrNothing() throws Exception {
        assertEquals(300L, ChargeReply.of(json.readTree("{\"id\":\"ch_1\",\"amount\":700,\"amount_refunded\":300}")).amountRefunded());
        assertNull(ChargeReply.of(json.readTree("{\"id\":\"ch_1\",\"amount\":700,\"amount_refunded\":\"300\"}")).amountRefunded());
        assertNull(ChargeReply.of(json.readTree("{\"id\":\"ch_1\",\"amount\":700}")).amountRefunded());
    }

    @Test
    void aMissingNullOrNestedFieldIsAbsent() throws Exception {
        ChargeReply charge = ChargeReply.of(json.readTree("{\"id\":null,\"status\":{\"code\":\"succeeded\"}}"));

        assertNull(charge.id());
        assertNull(charge.status());
        assertNull(charge.declineCode());
    }
}
