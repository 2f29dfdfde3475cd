/*
 * The card hop of payonce, for spin: one card payment whose charge goes to a processor that honours
 * an Idempotency-Key, where any call may charge and then lose its answer, or fail before reaching
 * the processor. The request that started the payment, the client's retry with the same key and the
 * recovery job on two instances all race to settle it, as they may once a worker's lease has run
 * out: the model gives them no lease at all, the worst case, since the lease only saves calls.
 * Steps name the methods that implement them (io.payonce.payment, io.payonce.processor).
 */

/* PaymentPhase */
#define STARTED 0
#define CHARGE_SENT 1
#define SUCCEEDED 2
#define UNKNOWN 3

#define KEYS 4

byte phase = STARTED;          /* pay_record.phase, set only by compare-and-set */
bool orderPaid = false;        /* orders.status PAID, moved with SUCCEEDED in one transaction */
bool charged[KEYS];            /* the processor's ledger: a charge under each key */
byte charges = 0;              /* charges the processor made for this order */
byte nextKey = 1;              /* the payment's processor key, derived from the request (ProcessorKeys.charge, CardPay.insertStarted) */
byte lostAnswers = 0;
#define MAX_LOST 2
byte settlements = 0;          /* outcomes recorded: each one an event and a stored answer */
bool wasSucceeded = false;

/*
 * Processor.charge under key: the processor charges once per key (a known key answers with its
 * charge). The answer may be lost after the charge (a timeout, a 500, a reset), or the call may
 * never reach the processor (refused connection): both are Unclear outcomes.
 */
inline sendCharge(key, definite) {
    atomic {
        if
        :: lostAnswers < MAX_LOST -> lostAnswers++; definite = false      /* never reached */
        :: true ->
            if
            :: !charged[key] -> charged[key] = true; charges++
            :: else -> skip
            fi;
            if
            :: lostAnswers < MAX_LOST -> lostAnswers++; definite = false  /* charged, answer lost */
            :: true -> definite = true
            fi
        fi
    }
}

/* OperationKind.record then CardCharge.succeeded: compare-and-set from an unsettled phase, the order PAID with it. */
inline settle() {
    atomic {
#ifdef SETTLE_WITHOUT_EXPECTED
        phase = SUCCEEDED; orderPaid = true; settlements++; wasSucceeded = true
#else
        if
        :: phase != SUCCEEDED -> phase = SUCCEEDED; orderPaid = true; settlements++; wasSucceeded = true
        :: else -> skip
        fi
#endif
    }
}

/* OperationKind.unknown: compare-and-set to UNKNOWN, never out of a settled phase. */
inline markUnknown() {
    atomic {
#ifdef SETTLE_WITHOUT_EXPECTED
        phase = UNKNOWN
#else
        if
        :: phase != SUCCEEDED -> phase = UNKNOWN
        :: else -> skip
        fi
#endif
    }
}

/* The key a send carries: the payment's own, fixed at STARTED; the broken variant makes a new one. */
inline keyOfThisSend(key) {
#ifdef FRESH_PROCESSOR_KEY
    atomic { if :: nextKey < KEYS - 1 -> nextKey++ :: else -> skip fi; key = nextKey }
#else
    key = 1
#endif
}

/*
 * Lifecycle.advance from STARTED: CHARGE_SENT committed by compare-and-set, then the charge. The request
 * may crash right after STARTED committed, or while its charge is out.
 */
inline sendFirst(key, definite, sent) {
    sent = false;
    atomic { if :: phase == STARTED -> phase = CHARGE_SENT; sent = true :: else -> skip fi }
    if
    :: sent ->
        keyOfThisSend(key);
        sendCharge(key, definite);
        if
        :: definite -> settle()
        :: else -> markUnknown()
        fi
    :: else -> skip
    fi
}

active proctype Request() {
    byte key;
    bool definite;
    bool sent;
    if
    :: sendFirst(key, definite, sent)
    :: skip                     /* crashed after STARTED: the recovery job takes it from there */
    fi
}

/*
 * Lifecycle.advance from CHARGE_SENT or UNKNOWN, from a retry of the client (Lifecycle.resume) or
 * from the recovery job (RecoveryJob.recover) on either instance: look the charge up under the key
 * (Processor.chargeUnder); settle if found, else send the same charge again under the same key.
 */
proctype Resumer() {
    byte key;
    bool definite;
    bool sent;
end_resumer:
    do
    :: phase == STARTED -> sendFirst(key, definite, sent)
    :: phase == CHARGE_SENT || phase == UNKNOWN ->
        keyOfThisSend(key);
        if
        :: charged[key] -> settle()                            /* the lookup found the charge */
        :: charged[key] && lostAnswers < MAX_LOST -> lostAnswers++; markUnknown()   /* the lookup's answer lost */
        :: !charged[key] ->
            sendCharge(key, definite);
            if
            :: definite -> settle()
            :: else -> markUnknown()
            fi
        fi
    :: phase == SUCCEEDED -> break
    od
}

init {
    atomic {
        run Resumer();     /* the client's retry with the same Idempotency-Key */
        run Resumer();     /* the recovery job on instance 1 */
        run Resumer()      /* the recovery job on instance 2 */
    }
}

/*
 * The card is charged at most once, a SUCCEEDED payment is one the processor charged, its outcome
 * is recorded once (one event, one stored answer), and SUCCEEDED is never left.
 */
ltl charged_once { [] (charges <= 1 && (phase != SUCCEEDED || charges == 1) && settlements <= 1 && (!wasSucceeded || phase == SUCCEEDED)) }

/* Every payment ends definite: no UNKNOWN left for good (weak fairness, lost answers bounded). */
ltl settles { <> (phase == SUCCEEDED && orderPaid) }
