package io.payonce.auth;

/** Who is asking: the JWT subject, and whether the caller holds the operations role. */
public record Caller(String userId, boolean ops) {

    public static final String USER = "user";
    public static final String OPS = "ops";

    /** Operations staff see everything; a user sees only what is theirs. */
    public boolean maySee(String ownerId) {
        return ops || userId.equals(ownerId);
    }
}
