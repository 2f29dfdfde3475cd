-- An event the broker keeps refusing (a nack, a message over its size limit) is parked instead of
-- holding back every event behind it. The relay publishes unsent, unparked rows in id order.
-- refusals: the times the broker refused the event published alone, so that a refusal is the
--   event's own and never a neighbour's in its batch; the relay parks it once it reaches
--   payonce.outbox.park-after-refusals and the broker takes the event behind it.
-- last_refusal: the broker's words that last time (a nack, or PRECONDITION_FAILED - message size ...).
-- parked_at: set aside for an operator, never published nor deleted by payonce; clearing it (README,
--   "Events") sends the event again, ahead of the newer ones.
ALTER TABLE outbox_event
    ADD COLUMN refusals     INT UNSIGNED NOT NULL DEFAULT 0,
    ADD COLUMN last_refusal VARCHAR(255) CHARACTER SET utf8mb4 NULL,
    ADD COLUMN parked_at    DATETIME(6) NULL;
