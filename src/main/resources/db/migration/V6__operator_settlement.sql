-- Operator settlement: a card payment the processor cannot account for (UNKNOWN, too long after its
-- first send to be sent again) is settled by ops, charged or not charged, after payonce has looked
-- the charge up at the processor; each settlement leaves one audit row, written in its transaction.

-- leased_until: while it lies ahead, a worker (the request, a retry of it or the recovery job) is in
-- the middle of one step of the payment, a call to the processor and the recording of its outcome.
-- busy_until cannot tell that: it also holds the recovery job's backoff, during which nobody works
-- on the payment. A worker that ends its step with the outcome still unknown clears the lease, under
-- the charge_attempts it took it with, so that a stale worker never clears the lease of the one that
-- took the payment over. An operator's settlement waits for a lease, never for a backoff.
ALTER TABLE pay_record
    ADD COLUMN leased_until DATETIME(6) NULL AFTER busy_until;

-- Instances of the release before take their leases in busy_until alone, and keep doing so during a
-- rolling deploy: a payment one of them is working on must not look free to an operator. Its lease is
-- carried over here; an old instance's lease taken after this runs is not (settle only once the
-- rollout is done). A backoff carried over only delays a settlement until it runs out.
UPDATE pay_record SET leased_until = busy_until
WHERE phase IN ('STARTED', 'CHARGE_SENT', 'UNKNOWN') AND busy_until IS NOT NULL;

CREATE TABLE operator_settlement (
    id             BIGINT        NOT NULL AUTO_INCREMENT,
    payment_id     BIGINT        NOT NULL,
    -- Who: the operator's JWT subject; under their Idempotency-Key, in their scope.
    operator_id    VARCHAR(64)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    idem_key       VARCHAR(64)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- What the operator asked: charged (naming the processor's charge) or not_charged.
    outcome        VARCHAR(16)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    charge_id      VARCHAR(255)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    -- Why, in the operator's words: printable ASCII, checked at the edge.
    reason         VARCHAR(500)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- What the processor said when payonce looked the charge up: two processor ids of up to 255
    -- characters, two references, amounts and words.
    processor_said VARCHAR(1000) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at     DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- The last gate: whatever slipped past the key and the phase's compare-and-set, a payment is
    -- settled by an operator once.
    CONSTRAINT operator_settlement_once UNIQUE (payment_id),
    CONSTRAINT operator_settlement_payment FOREIGN KEY (payment_id) REFERENCES pay_record (id),
    CONSTRAINT operator_settlement_outcome CHECK (outcome IN ('charged', 'not_charged')),
    CONSTRAINT operator_settlement_charge CHECK ((outcome = 'charged') = (charge_id IS NOT NULL))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Card payments settled by an operator: who, when, why, and what the processor said';
