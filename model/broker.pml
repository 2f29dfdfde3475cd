/*
 * The broker path of payonce, for spin: a pay command on the queue, consumed by two service
 * instances, redelivered by RabbitMQ whenever its consumer goes away before the ack, and sent again
 * by its sender, under the same message-id, when no reply came in time. The buyer's balance does not
 * cover the order until a deposit, which may come at any moment, so the same command may be
 * declined or paid depending on when it runs.
 *
 * Each step names the method that implements it (io.payonce.commands: CommandConsumer, its intake and
 * MessageSettlement, and the
 * IdempotencyGuard.run it shares with HTTP). A transaction is one atomic step, as in pay.pml, which
 * checks it; statements.pml checks it statement by statement. The broken variant (-D flag) is in
 * model/check.sh with the property it must break.
 */

#define KEYS 4

/* answers */
#define NO_ANSWER 0
#define CREATED 201    /* the payment, first or repeat */
#define DECLINED 402   /* INSUFFICIENT_FUNDS, recorded */

/* --- MariaDB --- */
byte balance = 0;              /* each order costs 1 */
bool orderPaid = false;
byte debits = 0;
bool claimed[KEYS];            /* idempotency_record (the sender's scope, key) */
short stored[KEYS];
bool declined = false;         /* ghost: a 402 was stored for the command */

/* --- RabbitMQ --- */
chan queue = [3] of { bool };  /* payonce-commands: each message's redelivered flag */
byte unacked = 0;              /* delivered, neither acked nor nacked yet */
bool unrepliedMark = false;    /* command_requeue: the unreplied rule sent the command back once (StoredRequeueMarks) */
chan replies = [4] of { short };   /* the sender's reply queue */

/* --- faults --- */
byte crashes = 0;
#define MAX_CRASHES 2
byte lostReplies = 0;
#define MAX_LOST_REPLIES 1
byte outages = 0;
#define MAX_OUTAGES 1

/* --- the sender --- */
bool answered = false;
short firstAnswer = NO_ANSWER;
byte resends = 0;
#define MAX_RESENDS 2

/* The key a delivery runs under: the message-id (CommandIntake.admit); the broken variant makes one per delivery. */
byte deliveries = 0;
inline keyOfThisDelivery(key) {
#ifdef KEY_PER_DELIVERY
    atomic { if :: deliveries < KEYS - 1 -> deliveries++ :: else -> skip fi; key = deliveries }
#else
    key = 1
#endif
}

/*
 * IdempotencyGuard.run through BalancePayments.pay: claim the key, move the order, deduct with the
 * conditional debit, store the answer, in one transaction. A key already answered replays its
 * answer. A decline rolls the transaction back, claim and all, and leaves answer DECLINED for
 * recordRefusal to store.
 */
inline payTransaction(key, answer) {
    atomic {
        if
        :: claimed[key] -> answer = stored[key]
        :: !claimed[key] && orderPaid -> answer = CREATED                  /* PaidOrders.existingPayment */
        :: !claimed[key] && !orderPaid && balance >= 1 ->
            balance--; debits++; orderPaid = true; answer = CREATED        /* Ledger.debit */
        :: !claimed[key] && !orderPaid && balance < 1 -> answer = DECLINED   /* rolled back */
        fi;
        if
        :: answer == CREATED -> claimed[key] = true; stored[key] = answer  /* IdempotencyGuard.store, committed */
        :: else -> skip
        fi
    }
}

/*
 * IdempotencyGuard.recordRefusal: the 402 in a transaction of its own, claiming the key already
 * answered; a delivery that claimed the key in between has the key's answer, and this one replays it.
 */
inline recordRefusal(key, answer) {
    atomic {
        if
        :: claimed[key] -> answer = stored[key]
        :: else -> claimed[key] = true; stored[key] = answer; declined = true
        fi
    }
}

/* The instance crashes or its channel closes: RabbitMQ puts every unacked delivery back, flagged redelivered. */
inline crashHere() {
    if
    :: atomic { crashes < MAX_CRASHES -> crashes++; unacked--; queue ! true }; goto next
    :: true -> skip
    fi
}

proctype Consumer() {
    bool redelivered;
    byte key;
    short answer;
end_consumer:
    do
    :: atomic { queue ? redelivered -> unacked++ }      /* CommandConsumer.consume */
        crashHere();
        /* MessageSettlement.requeue: the database or Redis down ("not now"), nacked back to the queue after a pause */
        if
        :: atomic { outages < MAX_OUTAGES -> outages++; unacked--; queue ! true }; goto next
        :: true -> skip
        fi;
        keyOfThisDelivery(key);
        payTransaction(key, answer);
        crashHere();
        if
        :: answer == DECLINED -> recordRefusal(key, answer); crashHere()
        :: else -> skip
        fi;
        /* MessageSettlement.reply: published to the reply-to, the confirm awaited */
        if
        :: replies ! answer
        :: atomic { lostReplies < MAX_LOST_REPLIES -> lostReplies++ };
            /* MessageSettlement.unreplied: back to the queue once, by the rule's own mark (never the redelivered
               flag, which a crash and a store down set too), then acked */
            if
            :: !unrepliedMark -> atomic { unrepliedMark = true; unacked--; queue ! true }; goto next
            :: unrepliedMark -> skip
            fi
        fi;
        crashHere();
        unacked--;                                      /* MessageSettlement.ack */
next:
        atomic { redelivered = false; key = 0; answer = NO_ANSWER }
    od
}

/* AccountService.deposit: the top-up that covers the order, at any moment. */
active proctype Depositor() {
    balance++
}

/* The sender: the command, then the same command again (same message-id) while no reply has come. */
active proctype Sender() {
    short answer;
    queue ! false;
end_sender:
    do
    :: replies ? answer ->
        atomic {
            if
            :: !answered -> firstAnswer = answer; answered = true
            :: else -> assert(answer == firstAnswer)    /* every reply to the command carries the same answer */
            fi;
            /* a payment it was told of is in the database */
            assert(answer != CREATED || (orderPaid && debits == 1))
        }
    :: atomic { !answered && resends < MAX_RESENDS && len(queue) < 2 -> resends++; queue ! false }
    od
}

init {
    atomic {
        run Consumer();
        run Consumer()
    }
}

/* At most one debit, and a command once declined is never paid after all. */
ltl once { [] (debits <= 1 && !(declined && orderPaid)) }

/* The sender hears back, and no message stays on the queue or unacked for ever (weak fairness, faults bounded). */
ltl settles { <> (answered && len(queue) == 0 && unacked == 0) }
