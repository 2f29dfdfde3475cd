/*
 * The outbox relay of payonce, for spin: three events, committed in id order, published by the
 * relays of two instances (io.payonce.events.OutboxRelay). A relay's transaction is one at a time:
 * the rows' locks (OutboxRepository.LOCK_UNSENT, FOR UPDATE) make the other relay wait, then find
 * what the first marked. A relay may crash inside its transaction: what it marked, counted and
 * parked rolls back; what it published stays published.
 *
 * The broker (ConfirmedPublisher, ConfirmingChannel) refuses either nothing or one event (the poison: a
 * message over its size limit, the channel closed with 406), or nacks one event or every event (a full
 * queue that rejects what overflows it, bound to that event's routing key or to all), chosen at the
 * start. A refused message may still reach the consumers' queue (another queue took it); a nacked one
 * does (the full queue is another). A nack is no refusal: the relay is told the event was not
 * confirmed, as by a broker that is away, and waits. A
 * call's answer is what the relay is told (ConfirmedPublisher.Confirmed): how many of its events, from
 * the first on, were confirmed, and whether the broker refused one of the rest. That one is not named:
 * the broker closes the channel on a message too large, and the confirms of the messages before it
 * may be lost with the channel, so the confirmed part is any length up to the refused event. Any call
 * may also go unconfirmed (the broker slow, the connection lost), a bounded number of times.
 *
 * Each step names the method that implements it. The broken variants (-D flags) are in model/check.sh
 * with the property each must break: NAIVE_BLAME counts a batch's refusal against its first unconfirmed
 * event; NACK_IS_REFUSAL is the release that counted a nack as a refusal (a full queue bound to one
 * event's routing key had that event parked while the others were taken); NO_PARKING is the relay
 * before parking.
 */

#define EVENTS 3
#define BOUND 2                 /* payonce.outbox.park-after-refusals */
#define NONE 255
#define ALL 254

byte refused = NONE;            /* what the broker refuses (406): NONE, or one event */
byte nacked = NONE;             /* what a full queue makes the broker nack: NONE, ALL, or one event */

/* --- MariaDB: outbox_event --- */
bool sent[EVENTS];
bool parked[EVENTS];
byte refusals[EVENTS];
bool locked = false;            /* the batch's row locks, held by one relay's transaction */

/* --- the consumers' queue --- */
bool delivered[EVENTS];

/* --- faults --- */
byte unconfirmed = 0;
#define MAX_UNCONFIRMED 2
byte crashes = 0;
#define MAX_CRASHES 1

#define innocent(e) (refused != e)
#define nackedByBroker(e) (nacked == ALL || nacked == e)
/* What the relay is told is refused. */
#ifdef NACK_IS_REFUSAL
#define refusedByBroker(e) (!innocent(e) || nackedByBroker(e))
#else
#define refusedByBroker(e) (!innocent(e))
#endif
/* Nothing left to do for the event: sent, parked, or the poison with no event behind it to let past. */
#define settled(e) (sent[e] || parked[e] || (refused == e && e == EVENTS - 1))

/*
 * The event reaches the consumers' queue. An innocent event reaches it first only after every
 * innocent event before it: the events behind a parked one go on in commit order.
 */
inline deliver(e) {
    atomic {
        if
        :: innocent(e) && !delivered[e] ->
            for (k : 0 .. e - 1) {
                assert(!innocent(k) || delivered[k])
            }
        :: else -> skip
        fi;
        delivered[e] = true;
        k = 0
    }
}

/* OutboxRepository.markSent: only what the broker confirmed, which it received. */
inline markSent(e) {
    assert(delivered[e]);
    sent[e] = true
}

/* The first unsent, unparked event from `from` on, in id order; EVENTS if none (OutboxRepository.LOCK_UNSENT). */
inline nextFrom(from, e) {
    atomic {
        e = from;
        do
        :: e < EVENTS && (sent[e] || parked[e]) -> e++
        :: else -> break
        od
    }
}

/*
 * OutboxRelay.alone: one event published by itself. Taken (delivered and confirmed), refused (by
 * the broker, perhaps delivered all the same), or unconfirmed (a fault; perhaps delivered).
 */
#define TAKEN 1
#define REFUSED 2
#define UNCONFIRMED 3
inline alone(e, result) {
    if
    :: !refusedByBroker(e) && !nackedByBroker(e) -> deliver(e); result = TAKEN
    :: !refusedByBroker(e) && nackedByBroker(e) -> deliver(e); result = UNCONFIRMED
    :: refusedByBroker(e) -> result = REFUSED;
        if :: deliver(e) :: !innocent(e) fi
    :: atomic { unconfirmed < MAX_UNCONFIRMED -> unconfirmed++ }; result = UNCONFIRMED;
        if :: deliver(e) :: skip fi
    fi
}

/*
 * OutboxRelay.publishAll's call (ConfirmedPublisher.publish): the events from `first` on, in id
 * order, skipping parked ones. Delivered in order: those before the first unconfirmed one always,
 * the others perhaps. The answer: `confirmed`, the first event not confirmed (EVENTS if all were), and
 * `wasRefused`, whether the broker refused one from it on. Short of the refused event, the confirmed
 * part stops where the confirms were lost with the closed channel, or timed out.
 */
inline batch(first, confirmed, wasRefused) {
    nextFrom(first, e);
    wasRefused = false;
    do
    :: e == EVENTS -> confirmed = EVENTS; break
    :: e < EVENTS && !refusedByBroker(e) && !nackedByBroker(e) -> deliver(e); nextFrom(e + 1, e)
    :: e < EVENTS && !refusedByBroker(e) && !nackedByBroker(e) && unconfirmed < MAX_UNCONFIRMED ->
        /* its confirm, and every later one, lost or late */
        unconfirmed++; confirmed = e; break
    :: e < EVENTS && !refusedByBroker(e) && nackedByBroker(e) -> confirmed = e; break   /* nacked: not confirmed */
    :: e < EVENTS && refusedByBroker(e) -> confirmed = e; wasRefused = true; break
    od;
    /*
     * The rest reaches the queue in order (a nack does not stop the messages behind it), up to where
     * the channel or the connection ended; a refused message perhaps, which another queue took.
     */
    do
    :: e < EVENTS && !innocent(e) -> if :: deliver(e) :: skip fi; nextFrom(e + 1, e)
    :: e < EVENTS && innocent(e) -> deliver(e); nextFrom(e + 1, e)
    :: break
    od;
    /* the confirms lost with a channel the broker closed: any shorter part counts as confirmed */
    if
    :: wasRefused && unconfirmed < MAX_UNCONFIRMED ->
        unconfirmed++;
        nextFrom(first, e);
        do
        :: e < confirmed -> if :: confirmed = e; break :: nextFrom(e + 1, e) fi
        :: else -> break
        od
    :: true -> skip
    fi
}

/*
 * OutboxRepository.countRefusal. The count stops at the bound here: past it, the relay does the same
 * whatever the count, and a count that grows for ever (a broker refusing every event) would make the
 * state space endless.
 */
inline countRefusal(e) {
    if
    :: refusals[e] < BOUND -> refusals[e]++
    :: else -> skip
    fi
}

/* A crash before COMMIT: what the transaction wrote rolls back (InnoDB), the row locks go with it. */
inline crashHere() {
    if
    :: atomic { crashes < MAX_CRASHES -> crashes++;
        for (k : 0 .. EVENTS - 1) {
            sent[k] = savedSent[k]; parked[k] = savedParked[k]; refusals[k] = savedRefusals[k]
        };
        k = 0; locked = false }; goto next
    :: true -> skip
    fi
}

proctype Relay() {
    byte e, n, i, k, confirmed, result;
    bool wasRefused;
    bool savedSent[EVENTS];
    bool savedParked[EVENTS];
    byte savedRefusals[EVENTS];
end_relay:
    do
    :: atomic { !locked -> locked = true;                      /* OutboxRepository.lockUnsent */
        for (k : 0 .. EVENTS - 1) {
            savedSent[k] = sent[k]; savedParked[k] = parked[k]; savedRefusals[k] = refusals[k]
        };
        k = 0 };
        nextFrom(0, e);
publishAll:                                                    /* OutboxRelay.publishAll */
        if
        :: e == EVENTS -> goto commit
#ifndef NAIVE_BLAME
        :: e < EVENTS && refusals[e] > 0 -> goto refusedBefore
#endif
        :: else -> skip
        fi;
        i = e;
        batch(i, confirmed, wasRefused);
        crashHere();
        nextFrom(i, e);
        do                                                     /* the confirmed ones, from the first on */
        :: e < confirmed -> markSent(e); nextFrom(e + 1, e)
        :: else -> break
        od;
        if
        :: !wasRefused -> goto commit
#ifdef NAIVE_BLAME
        :: wasRefused -> goto refusal                          /* blamed on the first unconfirmed event */
#else
        :: wasRefused -> skip
#endif
        fi;
oneByOne:                                                      /* OutboxRelay.oneByOne */
        alone(e, result);
        crashHere();
        if
        :: result == TAKEN -> markSent(e); nextFrom(e + 1, e);
            if :: e == EVENTS -> goto commit :: else -> goto oneByOne fi
        :: result == REFUSED -> goto refusal
        :: result == UNCONFIRMED -> goto commit
        fi;
refusedBefore:                                                 /* OutboxRelay.refusedBefore */
        alone(e, result);
        crashHere();
        if
        :: result == TAKEN -> markSent(e); nextFrom(e + 1, e); goto publishAll
        :: result == REFUSED -> skip
        :: result == UNCONFIRMED -> goto commit
        fi;
refusal:                                                       /* OutboxRelay.refused */
        countRefusal(e);
        nextFrom(e + 1, n);
        if
        :: refusals[e] < BOUND || n == EVENTS -> goto commit
        :: else -> skip
        fi;
#ifndef NO_PARKING
        alone(n, result);                                      /* OutboxRelay.parkIfTheNextIsTaken */
        crashHere();
        if
        :: result == TAKEN -> parked[e] = true; markSent(n); nextFrom(n + 1, e); goto publishAll
        :: result == REFUSED -> countRefusal(n)
        :: result == UNCONFIRMED -> skip
        fi;
#endif
commit:
        locked = false;
next:
        atomic { e = 0; n = 0; i = 0; confirmed = 0; result = 0; wasRefused = false;
            for (k : 0 .. EVENTS - 1) {
                savedSent[k] = false; savedParked[k] = false; savedRefusals[k] = 0
            };
            k = 0 }
    od
}

init {
    atomic {
        if
        :: skip
        :: refused = 0
        :: refused = 1
        :: refused = 2
        :: nacked = ALL
        :: nacked = 0
        :: nacked = 1
        :: nacked = 2
        fi;
        run Relay();
        run Relay()
    }
}

/* Only an event the broker refuses is parked: never an innocent neighbour, never a nacked event. */
ltl blame { [] ((!parked[0] || refused == 0) && (!parked[1] || refused == 1) && (!parked[2] || refused == 2)) }

/*
 * Every event the broker takes is sent, and the one it refuses is parked once an event behind it is
 * taken: the outbox flows (weak fairness, faults bounded). A broker that nacks an event is waited for.
 */
ltl flows { <> (nacked != NONE || (settled(0) && settled(1) && settled(2))) }
