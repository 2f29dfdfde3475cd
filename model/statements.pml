/*
 * The pay transactions of payonce statement by statement, for spin: what pay.pml takes as one atomic
 * step is here the statements that run, each taking the row locks it takes under READ COMMITTED, so
 * that another transaction can run between any two of them. One buyer's account pays two orders:
 * client A pays order 1 from the balance with key 1 and double-clicks, client B pays order 2 from
 * the balance with key 2 (order 1 with -DCARD), and client C pays order 1 by card with key 3, whose
 * outcome the processor decides (SUCCEEDED or DECLINED; card.pml checks the charge itself). The
 * balance covers one order until a deposit, which may come at any moment, covers the other.
 *
 * The database: every row has its committed value and, while a transaction holds its lock, that
 * transaction's own value, which COMMIT publishes and ROLLBACK drops. A statement that needs a row
 * another transaction has locked waits for it, or gives up after innodb_lock_wait_timeout (a
 * pipelined one, below, gives up at once). A
 * statement that reads without locking (findPayment, the order's status, the stored answer) reads
 * the latest committed value. A request's instance, or the one recording a card's outcome, may
 * stall holding its rows (paused, frozen, or gone with its connection half-open): the server's
 * stall bound (idle_transaction_timeout, max_statement_time; SessionSettings) rolls its transaction
 * back and frees its locks, and the instance, resuming, finds its connection closed. The model runs
 * without the Redis pay lock, as payonce does when Redis is down; pay.pml checks the lock.
 *
 * With -DPIPELINED a balance pay first tries its body pipelined (PipelinedBalancePay): the statements
 * of a flight are sent before the replies of the earlier ones are known, so none of them branches on
 * another's result; each reply is recorded, and only a gate that read them all sends the next flight
 * or COMMIT. Its statements never wait for a row (innodb_lock_wait_timeout = 0 on its pool, SessionSettings.forPipelining): a row
 * another transaction holds is 1205 at once. The server may end the transaction at any statement (a
 * deadlock's victim, a Galera brute-force abort); the statements behind it still run, under
 * autocommit=0 in a new implicit transaction that the gate's ROLLBACK ends. COMMIT's reply may be
 * lost with the connection, whether the server committed or not. A body that is not as expected,
 * or whose COMMIT failed, is rolled back and the pay runs the sequential transaction under the same
 * key, which decides replays and refusals as before and meets whatever committed.
 *
 * Each step names the method that implements it (io.payonce...). The broken variants (-D flags)
 * are in model/check.sh, each with the property it must break.
 */

#define A 1            /* key 1: client A, order 1, from the balance; double-clicks */
#define B 2            /* key 2: client B, order 2, from the balance */
#define C 3            /* key 3: client C, order 1, by card */
#ifdef FRESH_KEY_AFTER_LOST_COMMIT
#define FRESH 4        /* broken: the key a pay takes after its pipelined COMMIT went unanswered */
#define KEYS 5
#define seqKey (fresh -> FRESH : key)
#else
#define KEYS 4
#define seqKey key     /* the sequential transaction's key: the request's own */
#endif
#define ORDERS 3

#define SETTLER 3      /* CardCharge's transaction (the request, a retry or the recovery job) */
#define DEPOSITOR 4    /* AccountService.deposit's transaction */
#define CLOSER 5       /* AutoCloseJob's transaction */

/* order status (OrderStatus) */
#define UNPAID 0
#define PAID 1
#define PAYING 3
#define CLOSED 2

/* the order's payment (pay_record WHERE live_order_id = the order) */
#define NONE 0
#define BY_BALANCE 1
#define CARD_OPEN 2    /* STARTED .. UNKNOWN: waiting for the processor */
#define BY_CARD 3      /* SUCCEEDED; a DECLINED payment has no live_order_id, so it is NONE */

/* answers */
#define NO_ANSWER 0
#define CREATED 201    /* the payment, first or repeat */
#define DECLINED 402   /* INSUFFICIENT_FUNDS, CARD_DECLINED: recorded */
#define RETRY 409      /* IDEMPOTENCY_KEY_IN_USE, CARD_PAYMENT_PENDING, 503, a card's 202: not stored, send again */
#define REFUSED 4091   /* ILLEGAL_TRANSITION, recorded: the order cannot be paid */

/* a pipelined statement's reply */
#define OK 0           /* as expected: a row written, one row changed */
#define DUP 1          /* 1062: the statement alone refused */
#define ZERO 2         /* no row changed */
#define LOCK_WAIT 3    /* 1205: the statement alone rolled back */
#define ABORTED 4      /* 1213: the server rolled the whole transaction back */
#define LOST 5         /* no reply: the connection dropped, whatever the server did */

/* --- MariaDB, committed --- */
bool claimExists[KEYS];        /* idempotency_record (scope, key) */
short claimAnswer[KEYS];       /* its answer; NO_ANSWER while PROCESSING */
byte orderStatus[ORDERS];
byte payment[ORDERS];
/* account.balance; each order costs 1. With B it covers one of the two orders; without B, none until the deposit. */
#ifdef NO_B
#define START_BALANCE 0
#else
#define START_BALANCE 1
#endif
short balance = START_BALANCE;
byte debits = 0;               /* ledger PAYMENT lines */
byte deposits = 0;             /* ledger DEPOSIT lines */

/* --- each row's lock and the value of the transaction holding it --- */
byte claimLock[KEYS];
short claimAnswerTx[KEYS];
byte orderLock[ORDERS];
byte orderWaiter[ORDERS];      /* the first transaction queued for the row: InnoDB grants it next */
byte orderStatusTx[ORDERS];
byte paymentTx[ORDERS];
byte accountLock = 0;
short balanceTx;
byte debitsTx;
byte depositsTx;

/* --- ghosts --- */
byte balancePayments = 0;      /* orders whose committed payment is BY_BALANCE */
byte paidTimes[ORDERS];        /* commits that made the order PAID */
bool refusedPayable = false;   /* a refusal stored for an order that could still be paid */
short firstAnswer[KEYS];       /* the first definite answer each key got */
bool answered[KEYS];

/* --- stalls, and the server's bound on them --- */
bool stalled[CLOSER + 1];
byte stalls = 0;
#ifdef NO_STALL
#define MAX_STALLS 0
#else
#define MAX_STALLS 1
#endif

/* server aborts (deadlock victims, brute-force aborts), and COMMITs whose reply is lost, bounded like the stalls */
byte aborts = 0;
byte lostCommits = 0;
#ifdef PIPELINED
#define MAX_ABORTS 1
#define MAX_LOST_COMMITS 1
#else
#define MAX_ABORTS 0
#define MAX_LOST_COMMITS 0
#endif

chan requests = [2] of { byte };
chan replies[KEYS] = [2] of { short };

#ifdef CARD
#define orderOf(key) 1
#else
#define orderOf(key) (key == B -> 2 : 1)
#endif

/*
 * A statement waiting for a row another transaction holds gives up after innodb_lock_wait_timeout.
 * In the safety check any wait may run out; in the liveness check (-DLIVENESS) only a wait behind a
 * stalled holder does, since a healthy transaction holds a row for microseconds and the wait is
 * seconds long, and a scheduler that timed every wait out for ever would prove nothing about payonce.
 */
#ifdef LIVENESS
#define timesOut(holder) (holder != 0 && holder != me && stalled[holder])
#else
#define timesOut(holder) (holder != 0 && holder != me)
#endif

/* COMMIT: every row this transaction locked gets its value, and its locks go. */
inline commit(me) {
    atomic {
        k = 1;
        do
        :: k < KEYS ->
            if
            :: claimLock[k] == me -> claimExists[k] = true; claimAnswer[k] = claimAnswerTx[k]; claimLock[k] = 0
            :: else -> skip
            fi;
            k++
        :: else -> break
        od;
        k = 1;
        do
        :: k < ORDERS ->
            if
            :: orderLock[k] == me ->
                if
                :: orderStatusTx[k] == PAID && orderStatus[k] != PAID -> paidTimes[k]++
                :: else -> skip
                fi;
                if
                :: payment[k] == BY_BALANCE && paymentTx[k] != BY_BALANCE -> balancePayments--
                :: payment[k] != BY_BALANCE && paymentTx[k] == BY_BALANCE -> balancePayments++
                :: else -> skip
                fi;
                orderStatus[k] = orderStatusTx[k]; payment[k] = paymentTx[k]; orderLock[k] = 0
            :: else -> skip
            fi;
            k++
        :: else -> break
        od;
        if
        :: accountLock == me -> balance = balanceTx; debits = debitsTx; deposits = depositsTx; accountLock = 0
        :: else -> skip
        fi;
        k = 0
    }
}

/* ROLLBACK (or the server ending the transaction): its locks go, its values with them. */
inline rollback(me) {
    atomic {
        k = 1;
        do
        :: k < KEYS -> if :: claimLock[k] == me -> claimLock[k] = 0 :: else -> skip fi; k++
        :: else -> break
        od;
        k = 1;
        do
        :: k < ORDERS -> if :: orderLock[k] == me -> orderLock[k] = 0 :: else -> skip fi; k++
        :: else -> break
        od;
        if :: accountLock == me -> accountLock = 0 :: else -> skip fi;
        k = 0
    }
}

/*
 * A statement that locks order o's row (its live payment with it: every transaction that writes one
 * writes the other). It waits while another transaction holds the row, queued: InnoDB grants a freed
 * row to the transaction that waited first, not to one that comes later. Or it gives up after the
 * lock wait (SqlErrors.isLockWaitTimeout), leaving waited set.
 */
inline lockOrder(me, o, waited, queued) {
    queued = false;
    do
    :: atomic { orderLock[o] == 0 && (orderWaiter[o] == 0 || orderWaiter[o] == me) ->
        orderLock[o] = me; orderWaiter[o] = 0; orderStatusTx[o] = orderStatus[o]; paymentTx[o] = payment[o]; break }
    :: atomic { orderLock[o] != 0 && orderLock[o] != me && orderWaiter[o] == 0 -> orderWaiter[o] = me; queued = true }
    :: atomic { timesOut(orderLock[o]) -> waited = true; if :: orderWaiter[o] == me -> orderWaiter[o] = 0 :: else -> skip fi; break }
    od
}

/*
 * OrderRepository.compareAndSetStatus: UPDATE orders SET status = ? WHERE id = ? AND status = 'UNPAID'.
 * A lookup by the primary key locks the row, waiting for a holder, and then tests what the holder
 * committed. A row that does not match is let go at once (READ COMMITTED), unless the statement
 * had to wait for it: then it stays locked to the end of the transaction. Leaves moved set when it
 * matched.
 */
inline compareAndSetUnpaid(me, o, moved, waited, queued) {
    lockOrder(me, o, waited, queued);
    moved = !waited && orderStatusTx[o] == UNPAID;
    if
    :: !waited && !moved && !queued -> orderLock[o] = 0
    :: else -> skip
    fi
}

inline lockAccount(me, waited) {
    if
    :: atomic { accountLock == 0 -> accountLock = me; balanceTx = balance; debitsTx = debits; depositsTx = deposits }
    :: atomic { timesOut(accountLock) -> waited = true }
    fi
}


/*
 * IdempotencyRepository.claim: INSERT of the key's row. A twin's uncommitted row makes it wait; a
 * committed row is a duplicate key, and the claim lost (IdempotencyGuard.claimed).
 */
inline claim(me, key, answer) {
    if
    :: atomic { claimLock[key] == 0 && !claimExists[key] -> claimLock[key] = me; claimAnswerTx[key] = NO_ANSWER }
    :: atomic { claimLock[key] == 0 && claimExists[key] ->
        /* IdempotencyGuard.replayInTransaction, or begin's openOrReplayed: a finished answer replays;
           an open claim is a twin in flight (409), or for a card a payment to resume (202) */
        answer = (claimAnswer[key] != NO_ANSWER -> claimAnswer[key] : RETRY) }
    :: atomic { timesOut(claimLock[key]) -> answer = RETRY }   /* IDEMPOTENCY_KEY_IN_USE after the lock wait */
    fi
}

/*
 * PaidOrders.existingPayment, after the compare-and-set found the order not UNPAID: the order's
 * status (OrderRepository.findById), then its payment (PaymentRepository.findPayment), two reads of
 * what is committed, each at its own moment. Order.illegalTransitionTo answers a PAYING order with
 * CARD_PAYMENT_PENDING.
 */
inline existingPayment(o, answer) {
#ifdef PAYMENT_BEFORE_ORDER
    /* broken: the payment read first, the order's status after it */
    found = payment[o];
    seen = orderStatus[o];
#else
    seen = orderStatus[o];
    found = payment[o];
#endif
    if
    :: found == BY_BALANCE || found == BY_CARD -> answer = CREATED       /* a repeat */
    :: found == CARD_OPEN -> answer = RETRY                              /* CARD_PAYMENT_PENDING */
    :: found == NONE ->
        if
#ifdef PENDING_AS_REFUSAL
        :: seen == PAYING -> answer = RETRY
        :: seen != PAYING -> answer = REFUSED    /* broken: no payment means the order cannot be paid */
#else
        :: seen == UNPAID || seen == PAYING -> answer = RETRY    /* a card declined in between: CARD_PAYMENT_PENDING */
        :: seen != UNPAID && seen != PAYING -> answer = REFUSED
#endif
        fi
    fi
}

/*
 * Ledger.debit through AccountRepository.debit: UPDATE account SET balance = balance - ? WHERE ...
 * AND balance >= ?, on the row it locks: the balance it tests is the latest, never a snapshot.
 */
inline debit(me, answer, waited) {
#ifdef DEBIT_FROM_SNAPSHOT
    /* broken: the balance read without a lock, tested in the service, then debited unconditionally */
    if
    :: balance < 1 -> answer = DECLINED
    :: else ->
        lockAccount(me, waited);
        if
        :: !waited -> balanceTx--; debitsTx++
        :: else -> skip
        fi
    fi
#else
    lockAccount(me, waited);
    if
    :: !waited && balanceTx >= 1 -> balanceTx--; debitsTx++
    :: !waited && balanceTx < 1 -> accountLock = 0; answer = DECLINED     /* INSUFFICIENT_FUNDS */
    :: waited -> skip
    fi
#endif
}

/* Ghost: a refusal (ILLEGAL_TRANSITION) committed under a key while its order could still be paid. */
inline refusalStored(o, answer) {
    refusedPayable = refusedPayable || (answer == REFUSED && orderStatus[o] != CLOSED)
}

/*
 * IdempotencyGuard.recordRefusal: the refusal's own short transaction, after the pay's rolled back.
 * It claims the key already answered; a twin that claimed the key in between has the key's answer,
 * and this request replays it.
 */
inline recordRefusal(me, key, answer) {
#ifdef REFUSAL_OVERWRITES
    /* broken: the refusal written over whatever the key holds */
    atomic { claimLock[key] == 0 -> claimExists[key] = true; claimAnswer[key] = answer; refusalStored(o, answer) }
#else
    refusal = answer;
    answer = NO_ANSWER;
    claim(me, key, answer);
    if
    :: answer == NO_ANSWER -> claimAnswerTx[key] = refusal; answer = refusal; atomic { commit(me); refusalStored(o, answer) }
    :: else -> skip
    fi
#endif
}

/*
 * A request's instance stalls here, holding what it holds. Its client times out and retries. The
 * server ends the transaction at the stall bound (StallBound), and the instance, resuming, finds its
 * connection closed: it writes nothing more and answers nothing.
 */
inline stallHere(me) {
    if
    :: atomic { stalls < MAX_STALLS -> stalls++; stalled[me] = true }; goto stall
    :: true -> skip
    fi
}

/*
 * The pipelined body's statements (PipelinedBalancePay). Each may be the one at which the server
 * ends the transaction (abortHere): it answers 1213 and the transaction's rows go. What a statement
 * behind the abort does depends on the session: under autocommit=0 (PipelinedTransactions' pool)
 * it opens a new implicit transaction that the gate's ROLLBACK ends; under BEGIN with autocommit=1
 * (-DPIPELINE_UNDER_BEGIN, broken) it commits alone.
 */
inline abortHere(me) {
    atomic { aborts < MAX_ABORTS -> aborts++; rollback(me); aborted = true; res = ABORTED }
}

/* The reply is read, never acted on until the gate; under BEGIN a statement behind an abort has already committed. */
inline replied(me) {
#ifdef PIPELINE_UNDER_BEGIN
    if
    :: aborted && res != ABORTED -> commit(me)
    :: else -> skip
    fi;
#endif
    happy = happy && res == OK
}

/*
 * A pipelined statement never waits for a row: its pool's session sets
 * innodb_lock_wait_timeout = 0 (SessionSettings.forPipelining), so a row another transaction holds, or that is granted next to the
 * first in its queue, is 1205 at once, even in the liveness runs, and the pay falls back to the
 * sequential transaction, which waits.
 */
#define orderFree(me, o) (orderLock[o] == 0 && (orderWaiter[o] == 0 || orderWaiter[o] == me))

/* KeyAnswers.claim: the claim's INSERT, its 1062 read later */
inline pipedClaim(me, key) {
    if
    :: abortHere(me)
    :: atomic {
        if
        :: claimLock[key] == 0 && !claimExists[key] -> claimLock[key] = me; claimAnswerTx[key] = NO_ANSWER; res = OK
        :: claimLock[key] == 0 && claimExists[key] -> res = DUP
        :: else -> res = LOCK_WAIT
        fi }
    fi;
    replied(me)
}

/*
 * OrderRepository.compareAndSetStatus, sent whatever the claim answers. A row that does not match
 * is let go at once (READ COMMITTED): the statement never waited for it.
 */
inline pipedCompareAndSet(me, o) {
    if
    :: abortHere(me)
    :: atomic {
        if
        :: orderFree(me, o) && orderStatus[o] == UNPAID ->
            orderLock[o] = me; orderStatusTx[o] = PAID; paymentTx[o] = payment[o]; res = OK
        :: orderFree(me, o) && orderStatus[o] != UNPAID -> res = ZERO
        :: else -> res = LOCK_WAIT
        fi }
    fi;
    replied(me)
}

/* BalancePaymentRepository.insertPayment: UNIQUE(live_order_id), on the order's row (one lock in this model) */
inline pipedPayment(me, o) {
    if
    :: abortHere(me)
    :: atomic {
        if
        :: orderLock[o] != me && orderFree(me, o) ->
            orderLock[o] = me; orderStatusTx[o] = orderStatus[o]; paymentTx[o] = payment[o]
        :: else -> skip
        fi;
        if
        :: orderLock[o] == me && paymentTx[o] == NONE -> paymentTx[o] = BY_BALANCE; res = OK
        :: orderLock[o] == me && paymentTx[o] != NONE -> res = DUP
        :: else -> res = LOCK_WAIT
        fi }
    fi;
    replied(me)
}

/* Ledger.takeIfCovered: the conditional debit alone; its ledger line is the next flight's, for it names the payment */
inline pipedDebit(me) {
    if
    :: abortHere(me)
    :: atomic {
        if
        :: accountLock == 0 && balance >= 1 ->
            accountLock = me; balanceTx = balance - 1; debitsTx = debits; depositsTx = deposits; res = OK
        :: accountLock == 0 && balance < 1 -> res = ZERO
        :: else -> res = LOCK_WAIT
        fi }
    fi;
    replied(me)
}

/* Ledger.book: the payment's ledger line (the ledger is written under the account's lock in this model) */
inline pipedLedgerLine(me) {
    if
    :: abortHere(me)
    :: atomic {
        if
        :: accountLock == me -> debitsTx++; res = OK
        :: accountLock == 0 -> accountLock = me; balanceTx = balance; debitsTx = debits + 1; depositsTx = deposits; res = OK
        :: else -> res = LOCK_WAIT
        fi }
    fi;
    replied(me)
}

/* KeyAnswers.settle: UPDATE ... SET status = 'DONE' WHERE ... AND status = 'PROCESSING' */
inline pipedStore(me, key) {
    if
    :: abortHere(me)
    :: claimLock[key] == me -> claimAnswerTx[key] = CREATED; res = OK
    :: claimLock[key] != me -> res = ZERO
    fi;
    replied(me)
}

/*
 * PipelinedTransactions.commit: COMMIT, whose own reply may be an abort (a Galera certification
 * failure), or may never come: the connection drops after COMMIT was sent, and the server has
 * committed, or has not (COMMIT never reached it, and the closed session rolled back). The instance
 * cannot tell which: it sees a failure, its ROLLBACK fails or finds nothing to end (rolledBack,
 * killed), and the sequential transaction under the same key meets whatever committed.
 */
inline pipedCommit(me) {
    if
    :: abortHere(me)
    :: commit(me); res = OK
    :: atomic { lostCommits < MAX_LOST_COMMITS -> lostCommits++;
        if
        :: commit(me)
        :: rollback(me)
        fi;
        res = LOST }
    fi;
#ifdef LOST_COMMIT_AS_DONE
    /* broken: a COMMIT sent and never answered is taken as committed (only a 1213 is taken as rolled back) */
    happy = happy && (res == OK || res == LOST)
#else
    happy = happy && res == OK
#endif
}

/*
 * PipelinedTransactions.commitIfExpected running PipelinedBalancePay: ROLLBACK | claim | CAS |
 * pay_record | debit, then the gate; ledger line | outbox | stored answer, then the gate; COMMIT.
 * A body not as expected, or whose COMMIT failed, is rolled back (ROLLBACK) and the pay goes on
 * to the sequential transaction (IdempotencyGuard.run), a fresh one on the same key.
 */
inline pipelinedPay(me, key, o) {
    happy = true;
    aborted = false;
    pipedClaim(me, key);
    pipedCompareAndSet(me, o);
    pipedPayment(me, o);
    pipedDebit(me);
#ifdef COMMIT_UNCHECKED
    /* broken: the second flight and COMMIT sent without reading the first flight's replies */
    pipedLedgerLine(me);
    pipedStore(me, key);
    pipedCommit(me);
#else
    if
    :: happy ->
        stallHere(me);
        pipedLedgerLine(me);
        pipedStore(me, key);
        if
        :: happy -> stallHere(me); pipedCommit(me)
        :: else -> skip
        fi
    :: else -> skip
    fi;
#endif
    if
    :: happy -> answer = CREATED; goto reply
    :: else ->
#ifdef FRESH_KEY_AFTER_LOST_COMMIT
        /* broken: after a COMMIT with no reply, a new key, so as not to meet a claim the lost transaction may have left */
        fresh = (res == LOST);
#endif
        rollback(me); atomic { aborted = false; res = OK }
    fi
}

proctype Handler(byte me) {
    byte key, o, k;
    short answer, refusal;
    byte seen, found;
    bool waited, moved, queued, card;
    bool happy, aborted;
    byte res;
#ifdef FRESH_KEY_AFTER_LOST_COMMIT
    bool fresh;
#endif
end_idle:
    do
    :: requests ? key ->
        o = orderOf(key);
        card = (key == C);
        answer = NO_ANSWER;
        waited = false;
        /* IdempotencyGuard.firstRead: the key's committed answer, read with the order */
        if
        :: claimAnswer[key] != NO_ANSWER -> answer = claimAnswer[key]; goto reply
        :: else -> skip
        fi;
#ifdef PIPELINED
        if
        :: !card -> pipelinedPay(me, key, o)
        :: else -> skip
        fi;
#endif
        /* Transactions.inTransaction: IdempotencyGuard.run (a balance pay) or begin (a card pay) */
        claim(me, seqKey, answer);
        if
        :: answer != NO_ANSWER -> goto reply
        :: else -> skip
        fi;
        stallHere(me);
        compareAndSetUnpaid(me, o, moved, waited, queued);
        if
        :: waited -> rollback(me); answer = RETRY; goto reply     /* 1205: re-run, then 503 */
        :: !waited && moved && !card ->
            orderStatusTx[o] = PAID; paymentTx[o] = BY_BALANCE     /* BalancePaymentRepository.insertPayment */
        :: !waited && moved && card ->
            orderStatusTx[o] = PAYING; paymentTx[o] = CARD_OPEN    /* CardPaymentRepository.insertStarted */
        :: !waited && !moved -> existingPayment(o, answer)
        fi;
        stallHere(me);
        if
        :: answer == RETRY -> rollback(me); goto reply
        :: answer == NO_ANSWER && !card ->
            debit(me, answer, waited);
            if
            :: waited -> rollback(me); answer = RETRY; goto reply
            :: answer == DECLINED -> rollback(me); stallHere(me); recordRefusal(me, seqKey, answer); goto reply
            :: else -> answer = CREATED
            fi;
            stallHere(me)
        :: answer == NO_ANSWER && card -> answer = RETRY           /* 202: the charge goes on after COMMIT */
        :: answer == REFUSED -> rollback(me); recordRefusal(me, seqKey, answer); goto reply
        :: answer == CREATED -> skip
        fi;
        /* IdempotencyGuard.store; a card pay's claim stays open for CardCharge */
        if
        :: answer != RETRY -> claimAnswerTx[seqKey] = answer
        :: else -> skip
        fi;
        commit(me);
        stallHere(me);
reply:
        replies[key] ! answer;
        goto next;
stall:
        replies[key] ! NO_ANSWER;  /* the client's timeout */
        !stalled[me];              /* until the server ends the transaction */
next:
        atomic { key = 0; o = 0; answer = NO_ANSWER; refusal = NO_ANSWER; waited = false; moved = false; queued = false; card = false; seen = 0; found = 0;
                 happy = false; aborted = false; res = OK }
#ifdef FRESH_KEY_AFTER_LOST_COMMIT
        fresh = false;
#endif
    od
}

/* The stall bound: MariaDB ends the transaction of a connection idle past idle_transaction_timeout. */
#ifndef NO_STALL_BOUND
active proctype StallBound() {
    byte k;
end_bound:
    do
    :: atomic { stalled[1] -> rollback(1); stalled[1] = false }
    :: atomic { stalled[2] -> rollback(2); stalled[2] = false }
    :: atomic { stalled[SETTLER] -> rollback(SETTLER); stalled[SETTLER] = false }
    od
}
#endif

/*
 * CardCharge (OperationKind.record): the processor's outcome, recorded once by the phase's compare-and-set, the order
 * moved with it (PAYING -> PAID, or back to UNPAID with the payment no longer live), and the card
 * pay's key completed with its answer (KeyAnswers.settle). The payment's row, which the compare-and-set
 * locks before the order's, is folded into the order's lock here: every path that settles a card payment
 * takes them in that order. Its history line, a row of its own under the payment's, takes no other lock.
 */
active proctype Settler() {
    byte k;
    bool waited, queued, charged;
end_settler:
    do
    :: payment[1] == CARD_OPEN ->
        waited = false;
        lockOrder(SETTLER, 1, waited, queued);
        if
        :: waited -> goto again
        :: !waited && paymentTx[1] != CARD_OPEN -> rollback(SETTLER); goto again
        :: else -> skip
        fi;
        if
        :: charged = true; paymentTx[1] = BY_CARD; orderStatusTx[1] = PAID
        :: charged = false; paymentTx[1] = NONE; orderStatusTx[1] = UNPAID
        fi;
        /* its instance may stall here, holding the order's row, until the stall bound ends the transaction */
        if
        :: atomic { stalls < MAX_STALLS -> stalls++; stalled[SETTLER] = true }; !stalled[SETTLER]; goto again
        :: true -> skip
        fi;
        /* IdempotencyRepository.complete: UPDATE ... WHERE status = 'PROCESSING', on the claim's row */
        if
        :: atomic { claimLock[C] == 0 -> claimLock[C] = SETTLER; claimAnswerTx[C] = (charged -> CREATED : DECLINED) }
        fi;
        commit(SETTLER);
again:
        skip
    :: payment[1] != CARD_OPEN && claimAnswer[C] != NO_ANSWER -> break
    od
}

/* AccountService.deposit: a top-up that covers the second order, at any moment. */
proctype Depositor() {
    byte k;
    bool waited = false;
    do
    :: lockAccount(DEPOSITOR, waited);
       if
       :: !waited -> balanceTx++; depositsTx++; commit(DEPOSITOR); break
       :: else -> waited = false
       fi
    od
}

/* AutoCloseJob through OrderRepository.closeStaleUnpaid: UPDATE orders SET status = 'CLOSED' WHERE status = 'UNPAID'. */
proctype AutoClose() {
    byte k;
    bool waited = false, queued;
    lockOrder(CLOSER, 1, waited, queued);
    if
    :: !waited && orderStatusTx[1] == UNPAID -> orderStatusTx[1] = CLOSED; commit(CLOSER)
    :: !waited && orderStatusTx[1] != UNPAID -> rollback(CLOSER)
    :: waited -> skip
    fi
}

/* A client: the same request under the same key until it gets a definite answer. */
proctype Client(byte key) {
    short answer;
    do
    :: requests ! key;
       replies[key] ? answer;
       if
       :: answer == CREATED || answer == DECLINED || answer == REFUSED ->
           atomic {
               if
               :: !answered[key] -> firstAnswer[key] = answer; answered[key] = true
               :: else -> assert(answer == firstAnswer[key])   /* a key's answers are all equal */
               fi;
               /* an acknowledged payment is in the database */
               assert(answer != CREATED || orderStatus[orderOf(key)] == PAID)
           }
           break
       :: else -> skip
       fi
    od
}

/*
 * Two runs, for a search that fits a CI minute: the balance (A double-clicks, B pays the other
 * order, a deposit comes at some moment) and, with -DCARD, one order paid both ways (A from the
 * balance, C by card, the processor's outcome either way).
 */
init {
    atomic {
        run Handler(1);
        run Handler(2);
        run Client(A);
#ifdef CARD
        run Client(C);
#ifdef NO_B
        answered[B] = true;  /* no B to answer */
#else
        run Client(B);       /* B pays order 1 too, from the balance */
#endif
#ifdef AUTO_CLOSE
        run AutoClose()
#endif
#else
#ifndef ONE_CLICK
        run Client(A);       /* the double click */
#endif
#ifndef NO_B
        run Client(B);
#endif
        run Depositor()
#endif
    }
}

/*
 * The money: the balance never goes below zero and always equals what came in less what went out,
 * and what went out is one ledger line per balance payment; each order is paid once, by one method;
 * no refusal is stored for an order that could be paid.
 */
ltl money { [] (balance >= 0 && balance == START_BALANCE + deposits - debits && debits == balancePayments
                && paidTimes[1] <= 1 && paidTimes[2] <= 1 && !refusedPayable) }

/* Two parts of it on their own, so that a broken variant's counterexample names what it broke. */
ltl covered { [] (balance >= 0) }
ltl refusals_true { [] !refusedPayable }

/* Every key is answered in the end, a stalled holder of its rows notwithstanding (weak fairness). */
#ifdef CARD
ltl answers { <> (answered[A] && answered[B] && answered[C]) }
#else
ltl answers { <> (answered[A] && answered[B]) }
#endif
ltl answers_a { <> answered[A] }
