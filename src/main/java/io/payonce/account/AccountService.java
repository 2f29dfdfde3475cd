package io.payonce.account;

import io.payonce.api.Answer;
import io.payonce.api.ApiException;
import io.payonce.api.Caller;
import io.payonce.api.DuplicateKey;
import io.payonce.api.ErrorCode;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.idempotency.IdempotentCommand;
import io.payonce.idempotency.Result;
import io.payonce.metrics.DuplicateLayer;
import io.payonce.metrics.PayonceMetrics;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;

/** Opens accounts and reads them for their owner or for ops. */
@ApplicationScoped
public class AccountService {

    static final String DEPOSIT = "deposit";

    private final AccountRepository accounts;
    private final Ledger ledger;
    private final IdempotencyGuard guard;
    private final PayonceMetrics metrics;

    public AccountService(AccountRepository accounts, Ledger ledger, IdempotencyGuard guard, PayonceMetrics metrics) {
        this.accounts = accounts;
        this.ledger = ledger;
        this.guard = guard;
        this.metrics = metrics;
    }

    /** Opening an account that exists in the same currency answers with it; another currency is a conflict. */
    public Uni<AccountOpening> open(String userId, String currency) {
        return accounts.insert(userId, currency)
                .flatMap(inserted -> accounts.find(userId))
                .map(account -> new AccountOpening(account, false))
                .onFailure(DuplicateKey::is).recoverWithUni(() -> accounts.find(userId).map(existing -> {
                    if (!existing.currency().equals(currency)) {
                        throw new ApiException(ErrorCode.ACCOUNT_EXISTS, userId);
                    }
                    metrics.duplicateCaught("open-account", DuplicateLayer.UNIQUE_INDEX);
                    return new AccountOpening(existing, true);
                }));
    }

    /**
     * Adds money to an account under the caller's Idempotency-Key. The ledger line carries the
     * deposit's external reference, unique per account, so one settlement is credited once even when
     * two ops identities send it under two keys, or after its key's record expired (409 ALREADY_APPLIED).
     */
    public Uni<Answer> deposit(Caller caller, String userId, IdempotencyKey key, DepositRequest request, String instance) {
        IdempotentCommand command = guard.command(caller.userId(), key, DEPOSIT, "account:" + userId, request, instance);
        return guard.run(command, tx -> ledger.credit(tx, userId, request.currency(), request.amount(), EntryType.DEPOSIT, request.reference())
                .flatMap(credited -> accounts.find(tx, userId))
                .map(account -> Result.created(new DepositView(userId, request.amount(), account.currency(), account.balance()))));
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
