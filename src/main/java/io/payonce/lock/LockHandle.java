package io.payonce.lock;

/** The result of asking for the pay lock, and what release needs to know. */
public record LockHandle(State state, String key, String owner) {

    public enum State {
        /** This request holds the lock and must release it. */
        HELD,
        /** A twin holds it: answer 409 PAYMENT_IN_PROGRESS. */
        BUSY,
        /** Redis failed or was too slow: go on without the lock. */
        UNAVAILABLE
    }

    static LockHandle held(String key, String owner) {
        return new LockHandle(State.HELD, key, owner);
    }

    static LockHandle busy() {
        return new LockHandle(State.BUSY, null, null);
    }

    static LockHandle unavailable() {
        return new LockHandle(State.UNAVAILABLE, null, null);
    }

    public boolean heldByAnother() {
        return state == State.BUSY;
    }
}
