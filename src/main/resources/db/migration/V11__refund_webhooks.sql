-- The processor's refund events (refund.succeeded, refund.failed) settle refunds to the card, as its
-- charge events settle card payments: the refund is found by the key it was made under, and the
-- refund's phase compare-and-set decides, in the transaction that records the event.

-- refund_id: the refund to the card found under the key a refund event names, if any (payment_id
-- stays null for a refund event). outcome gains UNKNOWN_REFUND: no refund under its key, nothing is
-- created. NOT_APPLIED is now only charge.refunded, which names the charge and not the refund.
ALTER TABLE processor_event
    ADD COLUMN refund_id BIGINT NULL AFTER payment_id,
    ADD KEY processor_event_by_refund (refund_id);

ALTER TABLE processor_event
    DROP CONSTRAINT processor_event_outcome;

ALTER TABLE processor_event
    ADD CONSTRAINT processor_event_outcome CHECK (outcome IN ('RECEIVED', 'APPLIED', 'ALREADY_SETTLED', 'CONTRADICTING',
        'UNKNOWN_CHARGE', 'UNKNOWN_REFUND', 'IGNORED_TYPE', 'NOT_APPLIED'));

-- The event whose delivery moved the refund into this phase, when a webhook did (null when payonce's
-- own call or the recovery job learnt the outcome): what proves an event had one effect.
ALTER TABLE refund_phase
    ADD COLUMN event_id VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER detail;
