/*
 * The Redis pay lock of payonce, for spin: three pay requests for one order, two of them served at
 * once by instance 1 and one by instance 2. The lock's key may expire at any moment (its TTL ran out
 * while the holder stalled, or Redis restarted empty), and a SET whose reply timed out may still land
 * in Redis later. No payment depends on the lock (pay.pml and statements.pml check that the database
 * decides); what is checked here is that a request's release never deletes a lock another request
 * holds, so that the lock does what it is for: a twin gets a fast 409 instead of queueing on rows.
 *
 * Each step names the method that implements it (io.payonce.lock). The broken variant (-D flag) is
 * in model/check.sh with the property it must break.
 */

#define NOBODY 0

byte lockValue = NOBODY;       /* payonce:lock:{order:<id>}: the owner token it holds */
byte lockRequest = NOBODY;     /* ghost: the request whose SET put it there */
byte pendingSet = NOBODY;      /* a SET whose reply timed out, not applied yet: its request */
byte pendingToken = NOBODY;    /* and the token it carries */
bool timedOut = false;         /* one SET's reply times out, whichever */
bool stolen = false;           /* ghost: a release deleted a lock another request's SET had put there */

/* PayLock.acquire's owner token: a random UUID per request; the broken variant names the instance. */
#ifdef OWNER_PER_INSTANCE
#define tokenOf(request, instance) instance
#else
#define tokenOf(request, instance) request
#endif

/* LockCommands.setIfAbsent: SET key token NX PX ttl. */
inline setIfAbsent(request, token) {
    if
    :: lockValue == NOBODY -> lockValue = token; lockRequest = request
    :: else -> skip
    fi
}

/*
 * LockCommands.deleteIfOwner, release-lock.lua: deletes the key only if it still holds this token.
 * A delete is this request's to make only if its own SET put the lock there.
 */
inline deleteIfOwner(request, token) {
    atomic {
        if
        :: lockValue == token -> stolen = stolen || lockRequest != request; lockValue = NOBODY; lockRequest = NOBODY
        :: else -> skip
        fi
    }
}

proctype Request(byte me; byte instance) {
    bool held = false;
    /* PayLock.acquire */
    if
    :: atomic { setIfAbsent(me, tokenOf(me, instance)); held = (lockRequest == me) }
    :: atomic { !timedOut -> timedOut = true; pendingSet = me; pendingToken = tokenOf(me, instance) }
        /* the reply timed out: the pay goes on without the lock, and gives back what the SET may have taken */
        deleteIfOwner(me, tokenOf(me, instance))
    fi;
    /* the pay's transaction runs here; a twin that found the lock busy was told 409 */
    if
    :: held -> deleteIfOwner(me, tokenOf(me, instance))    /* PayLock.release */
    :: else -> skip
    fi
}

/* The timed-out SET lands in Redis after all, at any later moment. */
active proctype LateSet() {
end_late:
    atomic { pendingSet != NOBODY -> setIfAbsent(pendingSet, pendingToken); pendingSet = NOBODY }
}

/* The key's TTL running out, or Redis restarting empty. */
active proctype Expiry() {
end_expiry:
    do
    :: atomic { lockValue != NOBODY -> lockValue = NOBODY; lockRequest = NOBODY }
    od
}

/* A release deletes only the lock its own request's SET put there. */
ltl own_lock { [] !stolen }

init {
    atomic {
        run Request(1, 1);
        run Request(2, 1);     /* a twin on the same instance, at the same time */
        run Request(3, 2)
    }
}
