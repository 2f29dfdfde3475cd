-- The transactional outbox: an event is written in the transaction that moves the money, so that it
-- exists if and only if the money moved. The relay publishes unsent rows in id order and marks them
-- sent after the broker's confirm; sent rows are deleted after payonce.outbox.retention.
-- event_id is the event's identity downstream: the same on every publish of the row, so consumers
-- can drop a duplicate. idem_key is the key of the request that caused it, carried downstream.
CREATE TABLE outbox_event (
    id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    event_id    CHAR(36)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    event_type  VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    user_id     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    ref_id      VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    idem_key    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    payload     TEXT        CHARACTER SET utf8mb4 NOT NULL,
    created_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    sent_at     DATETIME(6) NULL,
    PRIMARY KEY (id),
    CONSTRAINT outbox_event_id_once UNIQUE (event_id),
    -- One event per movement of money, as the ledger has one line per movement.
    CONSTRAINT outbox_event_once_per_movement UNIQUE (user_id, event_type, ref_id),
    INDEX outbox_unsent (sent_at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Events of money movements, written with them, published after COMMIT';
