-- The commands that one of payonce's "back to the queue once" rules sent back, one row per rule,
-- keyed by the command's broker-checked sender and its message-id: the rule finds its own row when
-- the command comes back, whatever the broker's redelivered flag says, which payonce's other
-- requeues (a store down, an instance stopping) and a lost connection set too. Rows older than
-- payonce.idempotency.retention are deleted (StoredRequeueMarks).
CREATE TABLE IF NOT EXISTS command_requeue (
    sender      VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    message_id  VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    rule_name   VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    requeued_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (sender, message_id, rule_name),
    KEY command_requeue_by_age (requeued_at)
) ENGINE = InnoDB COMMENT = 'Which once-only rule sent which command back to the queue, and when';
