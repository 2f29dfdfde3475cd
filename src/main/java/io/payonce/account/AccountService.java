package io.payonce.account;

import io.payonce.api.ApiException;
import io.payonce.api.Caller;
import io.payonce.api.DuplicateKey;
import io.payonce.api.ErrorCode;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;

/** Opens accounts and reads them for their owner or for ops. */
@ApplicationScoped
public class AccountService {


    private final AccountRepository accounts;

    public AccountService(AccountRepository accounts) {
        this.accounts = accounts;
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
                    return new AccountOpening(existing, true);
                }));
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
