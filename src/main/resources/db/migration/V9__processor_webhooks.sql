-- The inbox of the processor's webhook events (POST /processor/webhooks). Processors deliver each
-- event at least once, retry for days and out of order: an event is recorded here in the
-- transaction of its effect, so that its id has at most one effect however often it arrives, and
-- a redelivery finds its row and changes nothing. Every event payonce accepts (its signature
-- checked) is kept, with what payonce made of it, for ops: including those that changed nothing.
-- event_id, object_id: the processor's ids of the event and of the charge or refund it is about.
-- processor_key: the Idempotency-Key the object was made under, as the event names it: how payonce
-- finds its payment. payment_id: the payment found under that key, if any.
-- outcome: APPLIED (it settled the payment), ALREADY_SETTLED (the payment had that outcome already),
-- CONTRADICTING (it says otherwise than the payment's recorded outcome, or names another amount,
-- currency or order: changed nothing, for ops to look at), UNKNOWN_CHARGE (no payment under its key:
-- nothing is created), IGNORED_TYPE (a type payonce does not act on), NOT_APPLIED (a refund event,
-- received and kept while refunds are not settled from events), RECEIVED only inside the
-- transaction that records the event, before its effect is known.
CREATE TABLE processor_event (
    id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    event_id      VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    event_type    VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    object_id     VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
    processor_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
    payment_id    BIGINT       NULL,
    outcome       VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    received_at   DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- One effect per event: a second delivery's INSERT waits on this key until the first commits,
    -- then is refused and answered from the first's row.
    CONSTRAINT processor_event_once UNIQUE (event_id),
    -- What ops look for: the events that changed nothing for a reason, recent first.
    KEY processor_event_by_outcome (outcome, received_at),
    KEY processor_event_by_payment (payment_id),
    CONSTRAINT processor_event_outcome CHECK (outcome IN ('RECEIVED', 'APPLIED', 'ALREADY_SETTLED', 'CONTRADICTING',
        'UNKNOWN_CHARGE', 'IGNORED_TYPE', 'NOT_APPLIED'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Webhook events of the processor, each applied at most once';

-- The event whose delivery moved the payment into this phase, when a webhook did (null when
-- payonce's own call or the recovery job learnt the outcome): what proves an event had one effect.
ALTER TABLE payment_phase
    ADD COLUMN event_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER detail;
