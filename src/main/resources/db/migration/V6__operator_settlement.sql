-- A card payment's lease, apart from the recovery job's backoff.

-- leased_until: while it lies ahead, a worker (the request, a retry of it or the recovery job) is in
-- the middle of one step of the payment, a call to the processor and the recording of its outcome.
-- busy_until cannot tell that: it also holds the recovery job's backoff, during which nobody works
-- on the payment. A worker that ends its step with the outcome still unknown clears the lease, under
-- the charge_attempts it took it with, so that a stale worker never clears the lease of the one that
-- took the payment over. An operator's settlement waits for a lease, never for a backoff.
ALTER TABLE pay_record
    ADD COLUMN leased_until DATETIME(6) NULL AFTER busy_until;
