package io.payonce.processor;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What payonce keeps of the processor's ids and echoed texts: exactly, or never as something else. */
class ProcessorTextTest {

    @Test
    void anIdIsKeptExactlyOrNotAtAll() {
        assertEquals("ch_zz99", ProcessorText.id("ch_zz99", 255));
        assertEquals("x".repeat(255), ProcessorText.id("x".repeat(255), 255));
        assertNull(ProcessorText.id("ch/zz99", 255), "reduced, it would be ch_zz99, another charge");
        assertNull(ProcessorText.id("x".repeat(256), 255), "cut, it would be another id");
        assertNull(ProcessorText.id("ch zz", 255));
        assertNull(ProcessorText.id("..", 255), "a path, not an id");
        assertNull(ProcessorText.id("", 255));
        assertNull(ProcessorText.id(null, 255));
    }

    @Test
    void aComparedTextPayonceCannotKeepIsMarkedSoThatItEqualsNoneOfItsOwn() {
        assertEquals("order-1-refund-r_1", ProcessorText.compared("order-1-refund-r_1", 255));
        assertEquals("?order-1-refund-r_1", ProcessorText.compared("order-1-refund-r/1", 255));
        assertEquals(64, ProcessorText.compared("é".repeat(100), 64).length());
        assertNull(ProcessorText.compared(null, 64));
        assertNull(ProcessorText.compared("", 64));
    }
}
