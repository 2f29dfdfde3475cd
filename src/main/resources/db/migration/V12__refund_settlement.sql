-- Operator settlement of refunds to the card: a refund the processor cannot account for (UNKNOWN,
-- too long after its first send to be sent again) is settled by ops, refunded or not refunded, after
-- payonce has looked the refund up at the processor; each settlement leaves one audit row, written in
-- its transaction. As for card payments (V6).

-- leased_until: while it lies ahead, a worker (the request, a retry of it or the recovery job) is in
-- the middle of one step of the refund, a call to the processor and the recording of its outcome.
-- busy_until cannot tell that: it also holds the recovery job's backoff, during which nobody works
-- on the refund. A worker that ends its step with the outcome still unknown clears the lease, under
-- the attempts it took it with, so that a stale worker never clears the lease of the one that took
-- the refund over. An operator's settlement waits for a lease, never for a backoff.
-- processor_refund_id once: one refund at the processor settles one refund in payonce, whoever
-- records it (a lookup, a webhook, an operator naming it); a refund not yet settled has none (NULL).
ALTER TABLE refund_record
    ADD COLUMN leased_until DATETIME(6) NULL AFTER busy_until,
    ADD CONSTRAINT refund_record_processor_refund_once UNIQUE (processor_refund_id);

-- Instances of the release before take their leases in busy_until alone, and keep doing so during a
-- rolling deploy: a refund one of them is working on must not look free to an operator. Its lease is
-- carried over here; an old instance's lease taken after this runs is not (settle only once the
-- rollout is done). A backoff carried over only delays a settlement until it runs out.
UPDATE refund_record SET leased_until = busy_until
WHERE phase IN ('STARTED', 'SENT', 'UNKNOWN') AND busy_until IS NOT NULL;

-- A table of its own rather than operator_settlement generalized: each audit row keeps a foreign key
-- to the one row it settled, its uniqueness per settled row, and CHECKs in its own words (refunded
-- names the processor's refund, charged its charge). One table for both would need two nullable
-- foreign keys and a CHECK that exactly one is set, and every reader would filter by kind.
CREATE TABLE refund_settlement (
    id                  BIGINT        NOT NULL AUTO_INCREMENT,
    refund_id           BIGINT        NOT NULL,
    -- Who: the operator's JWT subject; under their Idempotency-Key, in their scope.
    operator_id         VARCHAR(64)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    idem_key            VARCHAR(64)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- What the operator asked: refunded (naming the processor's refund) or not_refunded.
    outcome             VARCHAR(16)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    processor_refund_id VARCHAR(255)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    -- Why, in the operator's words: printable ASCII, checked at the edge.
    reason              VARCHAR(500)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- What the processor said when payonce looked the refund up: two processor refund ids of up to
    -- 255 characters, the charges they refund, references, amounts and words.
    processor_said      VARCHAR(2000) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at          DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- The last gate: whatever slipped past the key and the phase's compare-and-set, a refund is
    -- settled by an operator once.
    CONSTRAINT refund_settlement_once UNIQUE (refund_id),
    CONSTRAINT refund_settlement_refund FOREIGN KEY (refund_id) REFERENCES refund_record (id),
    CONSTRAINT refund_settlement_outcome CHECK (outcome IN ('refunded', 'not_refunded')),
    CONSTRAINT refund_settlement_processor_refund CHECK ((outcome = 'refunded') = (processor_refund_id IS NOT NULL))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Refunds to the card settled by an operator: who, when, why, and what the processor said';
