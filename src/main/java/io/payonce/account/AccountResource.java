package io.payonce.account;

import io.payonce.api.ApiExamples;
import io.payonce.api.KeyHeader;
import io.payonce.api.RepeatProtection;
import io.payonce.api.Responses;
import io.payonce.auth.Caller;
import io.payonce.auth.CallerIdentity;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.WriteOperation;
import io.payonce.input.Identifiers;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.RequestBody;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import static io.payonce.metrics.RepeatDefence.IDEMPOTENCY_KEY;
import static io.payonce.metrics.RepeatDefence.UNIQUE_INDEX;

/** HTTP for accounts: opening one (ops) and reading it and its ledger (owner or ops). */
@Path("/accounts")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = "accounts")
public class AccountResource {

    private final AccountService accounts;
    private final IdempotencyGuard guard;
    private final CallerIdentity callers;

    AccountResource(AccountService accounts, IdempotencyGuard guard, CallerIdentity callers) {
        this.accounts = accounts;
        this.guard = guard;
        this.callers = callers;
    }

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.OPS)
    @RepeatProtection(UNIQUE_INDEX)
    @Operation(operationId = "openAccount", summary = "Open an account for a user (ops)",
            description = "Opening it again in the same currency is a repeat: the first answer's status and Location, the account, "
                    + "and Idempotent-Replayed: true.")
    @APIResponse(responseCode = "201", description = "The account; Location names it; Idempotent-Replayed: true when it existed already",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = Account.class),
                    examples = @ExampleObject(name = "opened", value = ApiExamples.ACCOUNT)))
    @APIResponse(responseCode = "409", description = "ACCOUNT_EXISTS in another currency")
    public Uni<Response> open(
            @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = NewAccountRequest.class),
                    examples = @ExampleObject(name = "alice in euros", value = ApiExamples.NEW_ACCOUNT)))
            @Valid @NotNull NewAccountRequest request) {
        return accounts.open(request.userId(), request.currency()).map(Responses::of);
    }

    @POST
    @Path("/{userId}/deposits")
    @Consumes(MediaType.APPLICATION_JSON)
    @RolesAllowed(Caller.OPS)
    @RepeatProtection({IDEMPOTENCY_KEY, UNIQUE_INDEX})
    @Operation(operationId = "depositIntoAccount", summary = "Deposit money into an account (ops)",
            description = "Requires an Idempotency-Key; a retry with the same key replays the first answer and deposits nothing. "
                    + "The body names the external settlement it books (reference): an account is credited once per reference, "
                    + "whoever sends it and under whatever key.")
    @APIResponse(responseCode = "201", description = "Deposited; the balance after it",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = DepositView.class),
                    examples = @ExampleObject(name = "deposited", value = ApiExamples.DEPOSIT)))
    @APIResponse(responseCode = "400", description = "VALIDATION_FAILED or MALFORMED_REQUEST")
    @APIResponse(responseCode = "404", description = "ACCOUNT_NOT_FOUND (recorded under the key)")
    @APIResponse(responseCode = "409", description = "CURRENCY_MISMATCH or ALREADY_APPLIED (this reference was credited before), both recorded")
    public Uni<Response> deposit(
            @PathParam("userId") @Pattern(regexp = Identifiers.USER_ID) String userId,
            @BeanParam KeyHeader key,
            @RequestBody(content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = DepositRequest.class),
                    examples = @ExampleObject(name = "a bank transfer", value = ApiExamples.DEPOSIT_REQUEST)))
            @Valid @NotNull DepositRequest request) {
        Caller caller = callers.current();
        return accounts.deposit(caller, key.read(guard, WriteOperation.DEPOSIT, userId), userId, request)
                .map(Responses::of);
    }

    @GET
    @Path("/{userId}")
    @RolesAllowed({Caller.USER, Caller.OPS})
    @Operation(operationId = "getAccount", summary = "Read an account (its owner or ops)")
    @APIResponse(responseCode = "200", description = "The account and its balance")
    @APIResponse(responseCode = "404", description = "ACCOUNT_NOT_FOUND, also for another user's account")
    public Uni<Account> get(@PathParam("userId") @Pattern(regexp = Identifiers.USER_ID) String userId) {
        return accounts.find(callers.current(), userId);
    }

    @GET
    @Path("/{userId}/entries")
    @RolesAllowed({Caller.USER, Caller.OPS})
    @Operation(operationId = "listAccountEntries", summary = "Read an account's ledger, newest first (its owner or ops)")
    @APIResponse(responseCode = "200", description = "A page of entries")
    @APIResponse(responseCode = "404", description = "ACCOUNT_NOT_FOUND, also for another user's account")
    public Uni<EntryPage> entries(
            @PathParam("userId") @Pattern(regexp = Identifiers.USER_ID) String userId,
            @QueryParam("beforeId") @DefaultValue("9223372036854775807") @Pattern(regexp = Identifiers.ID_TEXT) @Min(1) @Max(Long.MAX_VALUE) String beforeId,
            @QueryParam("limit") @DefaultValue("50") @Pattern(regexp = Identifiers.PAGE_SIZE_TEXT) @Min(1) @Max(200) String limit) {
        return accounts.entries(callers.current(), userId, Long.parseLong(beforeId), Integer.parseInt(limit));
    }
}
