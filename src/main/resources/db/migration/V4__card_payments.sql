-- Card payments through an external processor. A card pay advances through committed phases on its
-- payment row (STARTED -> CHARGE_SENT -> SUCCEEDED | DECLINED | UNKNOWN, UNKNOWN -> SUCCEEDED |
-- DECLINED) while its order moves UNPAID -> PAYING -> PAID, or back to UNPAID when declined. A
-- payment of the balance is SUCCEEDED from its first commit, as before. DROP CONSTRAINT needs MySQL
-- 8.0.19 or later there; MariaDB 10.11 has it.

ALTER TABLE orders
    DROP CONSTRAINT orders_status_known,
    ADD CONSTRAINT orders_status_known CHECK (status IN ('UNPAID', 'PAYING', 'PAID', 'SHIPPED', 'COMPLETED', 'CLOSED', 'REFUNDED'));

-- The foreign key keeps an index of its own, so that the one-payment rule below can replace the old one.
ALTER TABLE pay_record ADD KEY pay_record_by_order (order_id);

-- processor_key is the charge's Idempotency-Key at the processor: random, made once when the
-- payment starts and the same on every send, by any instance, after any crash; random rather than
-- derived from the id, so that a database restored from a backup, or another environment on the same
-- processor account, can never meet a key the processor already holds.
-- first_sent_at: when the charge was first sent; a charge the processor cannot find is sent again
-- only within payonce.processor.resend-within of it, well inside the processor's key retention.
-- busy_until: while it lies ahead, one worker (the request, a retry of it or the recovery job)
-- owns the payment's next step; once it has passed, nobody does, and the recovery job takes it.
ALTER TABLE pay_record
    ADD COLUMN method              VARCHAR(8)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'BALANCE' AFTER currency,
    ADD COLUMN phase               VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'SUCCEEDED' AFTER method,
    ADD COLUMN card_token          VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER idem_key,
    ADD COLUMN processor_key       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER card_token,
    ADD COLUMN processor_charge_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER processor_key,
    ADD COLUMN decline_code        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER processor_charge_id,
    ADD COLUMN charge_attempts     INT         NOT NULL DEFAULT 0 AFTER decline_code,
    ADD COLUMN first_sent_at       DATETIME(6) NULL AFTER charge_attempts,
    ADD COLUMN busy_until          DATETIME(6) NULL AFTER charge_attempts,
    ADD COLUMN updated_at          DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    -- The order while this payment can still pay it; NULL once it is declined.
    ADD COLUMN live_order_id       BIGINT AS (IF(phase = 'DECLINED', NULL, order_id)) STORED,
    DROP INDEX pay_record_order_once,
    -- The last gate: whatever slipped past the lock, the key and the status CAS, an order has at most
    -- one payment that is not declined, so it is charged once.
    ADD CONSTRAINT pay_record_order_once UNIQUE (live_order_id),
    ADD CONSTRAINT pay_record_processor_key_once UNIQUE (processor_key),
    -- The recovery job finds the payments nobody is working on through this index.
    ADD KEY pay_record_unsettled (phase, busy_until),
    ADD CONSTRAINT pay_record_method CHECK (method IN ('BALANCE', 'CARD')),
    ADD CONSTRAINT pay_record_phase CHECK (phase IN ('STARTED', 'CHARGE_SENT', 'SUCCEEDED', 'DECLINED', 'UNKNOWN'));

-- One row per phase a payment entered, for GET /payments/{id}.
CREATE TABLE payment_phase (
    id          BIGINT      NOT NULL AUTO_INCREMENT,
    payment_id  BIGINT      NOT NULL,
    phase       VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- Plain words, or a charge id of up to 255 characters with a word before it.
    detail      VARCHAR(300) CHARACTER SET ascii COLLATE ascii_bin NULL,
    created_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    KEY payment_phase_by_payment (payment_id, id),
    CONSTRAINT payment_phase_payment FOREIGN KEY (payment_id) REFERENCES pay_record (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'The phases each payment went through, in order';

-- A 202 names the payment it accepted: "/payments/" + a 19-digit id at its longest (29).
ALTER TABLE idempotency_record
    MODIFY response_location VARCHAR(29) CHARACTER SET ascii COLLATE ascii_bin NULL;
