-- Refunds of card payments go back to the card through the processor. Such a refund advances through
-- committed phases on its row (STARTED -> SENT -> SUCCEEDED | FAILED | UNKNOWN, UNKNOWN -> SUCCEEDED |
-- FAILED), as a card payment does; a refund of a balance payment is SUCCEEDED from its first commit and
-- credits the balance, as before, which the defaults below make of every existing row. While a card
-- refund is unsettled its amount is reserved in orders.refunded_amount (the CHECK orders_refund_cap
-- keeps the reservations within the payment), and a FAILED refund gives it back.

-- idem_scope, idem_key: the request that began the refund (its caller's scope and key), whose answer
-- is stored when the processor's outcome is learnt, by whichever instance learns it.
-- processor_key is the refund's Idempotency-Key at the processor, derived from the request's scope and
-- key, the charge refunded and the refund number, so that a retry after the database lost the row
-- meets the processor's first refund; processor_charge_id is the charge refunded.
-- attempts: each worker that takes the refund's next step counts one, and what it writes later
-- names its count, so that a worker that stalled past its lease cannot undo the work of the next.
-- first_sent_at: when a send that may have reached the processor first went out; a refund the
-- processor cannot find is sent again only within payonce.processor.resend-within of it, well
-- inside the processor's key retention.
-- busy_until: while it lies ahead, one worker owns the refund's next step; once it has passed, the
-- recovery job takes it.
ALTER TABLE refund_record
    ADD COLUMN method              VARCHAR(8)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'BALANCE' AFTER amount,
    ADD COLUMN phase               VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'SUCCEEDED' AFTER method,
    ADD COLUMN idem_scope          VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL AFTER phase,
    ADD COLUMN idem_key            VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL AFTER idem_scope,
    ADD COLUMN processor_key       VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL AFTER idem_key,
    ADD COLUMN processor_charge_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER processor_key,
    ADD COLUMN processor_refund_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER processor_charge_id,
    ADD COLUMN failure_code        VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL AFTER processor_refund_id,
    ADD COLUMN attempts            INT          NOT NULL DEFAULT 0 AFTER failure_code,
    ADD COLUMN first_sent_at       DATETIME(6)  NULL AFTER attempts,
    ADD COLUMN busy_until          DATETIME(6)  NULL AFTER first_sent_at,
    ADD COLUMN updated_at          DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    -- One refund per key at the processor: the key names one refund number of one charge.
    ADD CONSTRAINT refund_record_processor_key_once UNIQUE (processor_key),
    -- The recovery job finds the refunds nobody is working on through this index.
    ADD KEY refund_record_unsettled (phase, busy_until),
    ADD CONSTRAINT refund_record_method CHECK (method IN ('BALANCE', 'CARD')),
    ADD CONSTRAINT refund_record_phase CHECK (phase IN ('STARTED', 'SENT', 'SUCCEEDED', 'FAILED', 'UNKNOWN'));

-- One row per phase a card refund entered, for GET /refunds/{id}.
CREATE TABLE refund_phase (
    id          BIGINT       NOT NULL AUTO_INCREMENT,
    refund_id   BIGINT       NOT NULL,
    phase       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- Plain words, or a refund id of up to 255 characters with a word before it.
    detail      VARCHAR(300) CHARACTER SET ascii COLLATE ascii_bin NULL,
    created_at  DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    KEY refund_phase_by_refund (refund_id, id),
    CONSTRAINT refund_phase_refund FOREIGN KEY (refund_id) REFERENCES refund_record (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'The phases each card refund went through, in order';
