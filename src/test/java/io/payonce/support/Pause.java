package io.payonce.support;

/** The wait between two looks at something a test is waiting for. */
public final class Pause {

    private Pause() {
    }

    /** 50 ms; an interrupted test stops waiting at once. */
    public static void briefly() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
