package io.payonce.account;

import io.payonce.auth.Caller;
import io.payonce.db.UniqueKey;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.AnswerMeter;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.WriteOperation;
import io.payonce.metrics.RepeatDefence;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;

/** Opens accounts, deposits into them, and reads them for their owner or for ops. */
@ApplicationScoped
public class AccountService {

    private final AccountRepository accounts;
    private final Ledger ledger;
    private final IdempotencyGuard guard;
    private final AnswerMeter meter;
    private final Outbox outbox;

    AccountService(AccountRepository accounts, Ledger ledger, IdempotencyGuard guard, AnswerMeter meter, Outbox outbox) {
        this.accounts = accounts;
        this.ledger = ledger;
        this.guard = guard;
        this.meter = meter;
        this.outbox = outbox;
    }

    /**
     * Opening an account that exists in the same currency is a repeat and answers with it; another
     * currency is a conflict.
     */
    public Uni<Answer> open(String userId, String currency) {
        Uni<Answer> opened = UniqueKey.insertOr(
                accounts.insert(userId, currency).flatMap(inserted -> accounts.find(userId)).map(AccountService::answer),
                () -> accounts.find(userId).map(existing -> {
                    if (!existing.currency().equals(currency)) {
                        throw new ApiException(ErrorCode.ACCOUNT_EXISTS, userId);
                    }
                    return answer(existing).repeatCaughtBy(RepeatDefence.UNIQUE_INDEX);
                }));
        return meter.counted(WriteOperation.OPEN_ACCOUNT, opened);
    }

    private static Answer answer(Account account) {
        return Answer.created(account, "/accounts/" + account.userId());
    }

    /**
     * Adds money to an account under the caller's Idempotency-Key. The ledger line carries the
     * deposit's external reference, unique per account, so one settlement is credited once even when
     * two ops identities send it under two keys, or after its key's record expired (409 ALREADY_APPLIED).
     */
    public Uni<Answer> deposit(Caller caller, KeyedRequest request, String userId, DepositRequest deposit) {
        return guard.run(request.by(caller.userId(), deposit), tx -> ledger.credit(tx, userId, deposit.currency(), deposit.amount(),
                        EntryType.DEPOSIT, deposit.reference())
                .flatMap(credited -> outbox.recordDeposit(tx, userId, deposit.reference(), deposit.amount(), deposit.currency(),
                        request.key().value()))
                .flatMap(recorded -> accounts.find(tx, userId))
                .map(account -> Answer.created(new DepositView(userId, deposit.amount(), account.currency(), account.balance()))));
    }

    public Uni<Account> find(Caller caller, String userId) {
        if (!caller.maySee(userId)) {
            return Uni.createFrom().failure(new ApiException(ErrorCode.ACCOUNT_NOT_FOUND, userId));
        }
        return accounts.find(userId).map(account -> {
            if (account == null) {
                throw new ApiException(ErrorCode.ACCOUNT_NOT_FOUND, userId);
            }
            return account;
        });
    }

    public Uni<EntryPage> entries(Caller caller, String userId, long beforeId, int limit) {
        return find(caller, userId)
                .flatMap(account -> accounts.entries(userId, beforeId, limit))
                .map(entries -> new EntryPage(entries, nextBeforeId(entries, limit)));
    }

    private static Long nextBeforeId(List<Entry> entries, int limit) {
        return entries.size() < limit ? null : entries.get(entries.size() - 1).id();
    }
}
