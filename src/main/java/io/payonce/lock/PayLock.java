package io.payonce.lock;

import io.payonce.config.PayonceConfig;
import io.payonce.metrics.PayonceMetrics;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.UUID;

/**
 * A short Redis lock per order, taken before the pay transaction so that a concurrent twin gets a
 * fast 409 instead of queueing on database row locks. It is an optimisation, not the guarantee:
 * when Redis fails the payment goes ahead without it and the database alone keeps it single.
 */
@ApplicationScoped
public class PayLock {

    private static final Logger LOG = Logger.getLogger(PayLock.class);

    private final LockCommands commands;
    private final PayonceConfig config;
    private final PayonceMetrics metrics;

    public PayLock(LockCommands commands, PayonceConfig config, PayonceMetrics metrics) {
        this.commands = commands;
        this.config = config;
        this.metrics = metrics;
    }

    public Uni<LockHandle> acquire(long orderId) {
        String key = key(orderId);
        String owner = UUID.randomUUID().toString();
        return commands.setIfAbsent(key, owner, config.lock().ttl())
                .map(acquired -> acquired ? LockHandle.held(key, owner) : LockHandle.busy())
                .onFailure().recoverWithUni(failure -> {
                    metrics.lockDegraded();
                    LOG.warnf("Pay lock for order %d unavailable, relying on the database: %s", orderId, failure.toString());
                    // A SET that timed out here may still run in Redis later; its owner is this request, so give it back.
                    return release(LockHandle.held(key, owner)).replaceWith(LockHandle.unavailable());
                });
    }

    /** Best effort: a lock that cannot be released expires with its TTL. */
    public Uni<Void> release(LockHandle handle) {
        if (handle.state() != LockHandle.State.HELD) {
            return Uni.createFrom().voidItem();
        }
        return commands.deleteIfOwner(handle.key(), handle.owner())
                .onFailure().invoke(e -> LOG.debugf("Pay lock %s left to expire: %s", handle.key(), e.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** The hash tag puts each order's lock in one Redis Cluster slot. */
    static String key(long orderId) {
        return "payonce:lock:{order:" + orderId + "}";
    }
}
