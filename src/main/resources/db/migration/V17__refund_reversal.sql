-- An operator's reversal of a refund to the card that the processor failed after it had succeeded
-- (its refund.failed event came after its refund.created, and was kept as CONTRADICTING): payonce
-- recorded the money as gone back to the card, the processor says it never went. Once the
-- processor's lookup by the refund's own id says it failed, the reversal moves the refund from
-- SUCCEEDED to FAILED by compare-and-set, gives its amount back to the order's refundable total and,
-- if the order was REFUNDED, moves it back to the status it was refunded from.

-- refunded_from: the status an order had when its refunds to the card made it REFUNDED, stamped by
-- the compare-and-set that moves it there and spent by the reversal; NULL for an order never
-- refunded so, or refunded so by the release before this one, whose reversal gives it back as
-- COMPLETED: never shippable again, still refundable. Nullable and without a default, the column
-- is added in place (ALGORITHM=INSTANT), as V13's.
ALTER TABLE orders
    ADD COLUMN IF NOT EXISTS refunded_from VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL,
    ALGORITHM = INSTANT;

-- One audit row per reversal, written in its transaction. Its own table rather than a row of
-- refund_settlement: a refund an operator settled as refunded may be reversed later, and that
-- table keeps one settlement per refund. The primary key is the last gate: a refund is reversed once.
CREATE TABLE IF NOT EXISTS refund_reversal (
    refund_id      BIGINT        NOT NULL,
    -- Who: the operator's JWT subject; under their Idempotency-Key, in their scope.
    operator_id    VARCHAR(64)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    idem_key       VARCHAR(64)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- Why, in the operator's words: printable ASCII, checked at the edge.
    reason         VARCHAR(500)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- What the processor said of the refund, looked up by its id: the id, its status and failure
    -- code, amount, charge and reference.
    processor_said VARCHAR(1000) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    -- The order's status before and after: REFUNDED and the status it was refunded from, or the same twice.
    order_before   VARCHAR(16)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    order_after    VARCHAR(16)   CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at     DATETIME(6)   NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (refund_id),
    CONSTRAINT refund_reversal_refund FOREIGN KEY (refund_id) REFERENCES refund_record (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Refunds to the card reversed by an operator once the processor failed them: who, when, why, and what the processor said';
