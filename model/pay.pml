/*
 * The keyed-pay protocol of payonce, as it runs, for spin: every interleaving of two service
 * instances serving two clients who pay one order (client A with key 1, retrying it; client B with a
 * new key, 2), with instance crashes, the Redis pay lock expiring or lost at any moment, and the
 * auto-close job. card.pml checks the card hop, statements.pml these transactions statement by
 * statement, broker.pml the broker's redeliveries, and lock.pml the lock's owner token per request.
 *
 * Each step names the method that implements it (io.payonce...). A database transaction is one
 * atomic step: InnoDB's row locks on the claim's primary key and on the order's row serialize the
 * transactions that touch them, and a crash before COMMIT leaves nothing. The broken variants
 * (-D flags) are in model/check.sh, each with the property it must break.
 */

#define NONE 0
#define A 1            /* client A: key 1, retries it */
#define B 2            /* client B: key 2, a new key for the same order */

/* order status (OrderStatus) */
#define UNPAID 0
#define PAID 1
#define CLOSED 2
#define PAYING 3

/* answers */
#define NO_ANSWER 0
#define CREATED 201    /* the payment, first or repeat */
#define RETRY 409      /* PAYMENT_IN_PROGRESS / IDEMPOTENCY_KEY_IN_USE: send again, same key */
#define REFUSED 4091   /* ILLEGAL_TRANSITION, recorded: the order was closed */

/* --- MariaDB --- */
byte orderStatus = UNPAID;
bool everClosed = false;       /* ghost: the auto-close job closed the order at some point */
byte payments = 0;             /* pay_record rows of the order (UNIQUE order_id) */
byte debits = 0;               /* ledger PAYMENT lines: money that left the balance */
bool claimed[3];               /* idempotency_record (scope, key) exists */
short stored[3];               /* its stored answer; NO_ANSWER while none */

/* --- Redis: the pay lock, key payonce:lock:{order} --- */
byte lockOwner = NONE;         /* which instance's request holds it (1 or 2) */

/* --- what the clients were told --- */
short firstAnswer[3];          /* the first definite answer each key got */
bool answered[3];

/* --- faults --- */
byte crashes = 0;
#define MAX_CRASHES 1

chan requests = [2] of { byte };   /* the gateway hands a key's request to either instance */
chan replies[3] = [2] of { short };

/* The work of a pay, in its transaction: compare-and-set, record, debit, store the answer. */
inline payWork(key, answer) {
#ifdef CAS_WITHOUT_EXPECTED
    orderStatus = PAID;                                 /* broken: UPDATE orders SET status = 'PAID' WHERE id = ?, no status */
    if
    :: payments == 0 -> payments++; debits++
    :: else -> skip
    fi;
    answer = CREATED;
#else
    if
    /* OrderRepository.compareAndSetStatus(UNPAID -> PAID) */
    :: orderStatus == UNPAID ->
        orderStatus = PAID;
        /* BalancePaymentRepository.insertPayment: UNIQUE(live_order_id) */
        if
        :: payments == 0 -> payments++; debits++           /* Ledger.debit */
        :: else -> skip
        fi;
        answer = CREATED
    :: orderStatus == PAID -> answer = CREATED          /* PaidOrders.existingPayment: a repeat */
    :: orderStatus == CLOSED -> answer = REFUSED        /* Order.illegalTransitionTo, recorded */
    fi;
#endif
    stored[key] = answer                                /* IdempotencyGuard.store */
}

/* IdempotencyGuard.claimOrReplay: a claim that exists replays a finished answer, else 409. */
inline claimOrReplay(key, answer) {
    if
    :: claimed[key] -> answer = (stored[key] != NO_ANSWER -> stored[key] : RETRY)
    :: else -> claimed[key] = true
    fi
}

/* IdempotencyGuard.run: claim and work in one transaction (Transactions.inTransaction). */
inline payTransaction(key, answer) {
    atomic {
        claimOrReplay(key, answer);
        if
        :: answer == NO_ANSWER -> payWork(key, answer)
        :: else -> skip
        fi
    }
}

/* LockCommands.deleteIfOwner: the Lua script deletes the key only if it still holds this owner. */
inline releaseLock(me) {
    atomic {
#ifdef RELEASE_BY_ANYONE
        assert(lockOwner == me || lockOwner == NONE);   /* a holder never loses its lock to another's release */
        lockOwner = NONE
#else
        if
        :: lockOwner == me -> lockOwner = NONE
        :: else -> skip
        fi
#endif
    }
}

proctype Instance(byte me) {
    byte key;
    short answer;
    bool held;
end_idle:
    do
    :: requests ? key ->
        answer = NO_ANSWER;
        held = false;
        /* IdempotencyGuard.firstRead: the order and the key's record in one read */
        if
        :: stored[key] != NO_ANSWER -> answer = stored[key]; goto reply
        :: else -> skip
        fi;
        /* PayLock.acquire: SET NX PX; an unreachable Redis means going on without it */
        atomic {
            if
            :: lockOwner == NONE -> lockOwner = me; held = true
            :: lockOwner != NONE -> skip
            fi
        }
        if
        :: !held && lockOwner != NONE ->
            /* IdempotencyGuard.run, its Turn refused (BalancePayments.payLock): replay a stored answer, else 409 */
            answer = (stored[key] != NO_ANSWER -> stored[key] : RETRY); goto reply
        :: else -> skip
        fi;
        /* a crash before COMMIT: nothing of the transaction remains, the lock expires by its TTL */
        if
        :: atomic { crashes < MAX_CRASHES -> crashes++ }; goto crashed
        :: true -> skip
        fi;
#ifdef NO_CLAIM_IN_TX
        /* broken: the claim commits in a transaction of its own, and the work in the next one */
        atomic { claimOrReplay(key, answer) }
        if
        :: atomic { answer == NO_ANSWER && crashes < MAX_CRASHES -> crashes++ }; goto crashed
        :: answer == NO_ANSWER -> atomic { payWork(key, answer) }
        :: else -> skip
        fi;
#else
        payTransaction(key, answer);
#endif
        if
        :: held -> releaseLock(me)
        :: else -> skip
        fi;
        /* a crash after COMMIT, before the answer went out */
        if
        :: atomic { crashes < MAX_CRASHES -> crashes++ }; goto crashed
        :: true -> skip
        fi;
reply:
        replies[key] ! answer;
        goto next;
crashed:
        replies[key] ! NO_ANSWER;   /* the client's timeout */
next:
        skip
    od
}

/* The Redis key's TTL running out while its holder is stalled, or Redis restarting empty. */
active proctype LockExpiry() {
end_expiry:
    do
    :: lockOwner != NONE -> lockOwner = NONE
    od
}

/* AutoCloseJob / OrderRepository.closeStaleUnpaid: UPDATE ... WHERE status = 'UNPAID'. */
active proctype AutoClose() {
    atomic {
        if
        :: orderStatus == UNPAID -> orderStatus = CLOSED; everClosed = true
        :: else -> skip
        fi
    }
}

/* A client: the same request under the same key until it gets a definite answer (Api.payUntilSettled). */
proctype Client(byte key) {
    short answer;
    do
    :: requests ! key;
       replies[key] ? answer;
       if
       :: answer == CREATED || answer == REFUSED ->
           atomic {
               if
               :: !answered[key] -> firstAnswer[key] = answer; answered[key] = true
               :: else -> assert(answer == firstAnswer[key])   /* a key's answers are all equal */
               fi;
               /* an acknowledged payment is in the database */
               assert(answer != CREATED || (payments == 1 && debits == 1 && orderStatus == PAID))
           }
           break
       :: else -> skip
       fi
    od
}

init {
    atomic {
        run Instance(1);
        run Instance(2);
        run Client(A);
#ifndef ONE_CLICK
        run Client(A);       /* the double click: the same key twice at once */
#endif
#ifndef NO_B
        run Client(B)
#endif
    }
}

/* At most one debit per order, and an order the auto-close job closed is never paid, whatever happens. */
ltl safety { [] (debits <= 1 && !(payments > 0 && everClosed)) }

/* Every key is answered in the end: no claim stays stuck (under weak fairness, crashes bounded). */
ltl answers { <> (answered[A] && answered[B]) }

/* The same, for the double click alone: two requests of key 1 in flight at once (-DNO_B). */
ltl answers_a { <> answered[A] }
