package io.payonce.support;

/** A user with a funded EUR account, a bearer token, an unpaid order and a key to pay it with. */
public record Payer(String userId, String bearer, long order, String key) {

    public static Payer withOrder(long balance, long amount) {
        String userId = Tokens.newUserId();
        Api.fundedAccount(userId, balance);
        String bearer = Tokens.user(userId);
        return new Payer(userId, bearer, Api.newOrder(bearer, amount), Api.newKey());
    }
}
