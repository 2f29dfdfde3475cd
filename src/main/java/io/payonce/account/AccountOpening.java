package io.payonce.account;

/** The account an open request answers with, and whether it already existed. */
public record AccountOpening(Account account, boolean existed) {
}
