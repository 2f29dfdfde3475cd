package io.payonce.account;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.db.UniqueKey;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Locale;

/**
 * Moves money inside the caller's transaction: every change of a balance and its ledger line are
 * written together, so that a balance always equals the sum of its entries.
 */
@ApplicationScoped
public class Ledger {

    private final AccountRepository accounts;

    public Ledger(AccountRepository accounts) {
        this.accounts = accounts;
    }

    /** Takes {@code amount} from the account, or fails with 402, 404 or 409 and takes nothing. */
    public Uni<Void> debit(SqlClient tx, String userId, String currency, long amount, EntryType type, String refId) {
        return accounts.debit(tx, userId, currency, amount).flatMap(debited -> debited
                ? append(tx, userId, -amount, type, refId)
                : explainRefusal(tx, userId, currency, amount));
    }

    /**
     * The debit alone, for a body sent pipelined (io.payonce.payment.balance.PipelinedBalancePay):
     * true when the account held enough and was debited. Its ledger line names the payment, whose id
     * is known only from a reply, so it is {@link #book}ed in the next flight of the same
     * transaction, which commits only if both were written.
     */
    public Uni<Boolean> takeIfCovered(SqlClient tx, String userId, String currency, long amount) {
        return accounts.debit(tx, userId, currency, amount);
    }

    /** The ledger line of a change {@link #takeIfCovered} made in this transaction. */
    public Uni<Void> book(SqlClient tx, String userId, long delta, EntryType type, String refId) {
        return append(tx, userId, delta, type, refId);
    }

    /** Adds {@code amount} to the account, or fails with 404 or 409 and adds nothing. */
    public Uni<Void> credit(SqlClient tx, String userId, String currency, long amount, EntryType type, String refId) {
        return accounts.credit(tx, userId, currency, amount).flatMap(credited -> credited
                ? append(tx, userId, amount, type, refId)
                : explainRefusal(tx, userId, currency, amount));
    }

    /**
     * UNIQUE(user_id, ref_type, ref_id) refusing the line means this very movement was booked before; the
     * failure is a recorded answer, so the caller's transaction rolls back with the balance change.
     */
    private Uni<Void> append(SqlClient tx, String userId, long delta, EntryType type, String refId) {
        return UniqueKey.insertOr(accounts.appendEntry(tx, userId, delta, type, refId), () -> Uni.createFrom().failure(
                new ApiException(ErrorCode.ALREADY_APPLIED, type.name().toLowerCase(Locale.ROOT), refId)));
    }

    private Uni<Void> explainRefusal(SqlClient tx, String userId, String currency, long amount) {
        return accounts.find(tx, userId).map(account -> {
            if (account == null) {
                throw new ApiException(ErrorCode.ACCOUNT_NOT_FOUND, userId);
            }
            if (!account.currency().equals(currency)) {
                throw new ApiException(ErrorCode.CURRENCY_MISMATCH, currency, account.currency());
            }
            throw new ApiException(ErrorCode.INSUFFICIENT_FUNDS, amount, currency);
        });
    }
}
