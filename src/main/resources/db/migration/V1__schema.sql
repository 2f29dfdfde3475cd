-- payonce schema. Runs unchanged on MariaDB 10.11 and MySQL 8.
-- Identifiers chosen by callers are ASCII with binary collation, so 'A1' and 'a1' are two keys.
-- Money is BIGINT minor units; every balance change is a row in account_entry.

CREATE TABLE account (
    user_id     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    balance     BIGINT      NOT NULL DEFAULT 0,
    currency    CHAR(3)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    PRIMARY KEY (user_id),
    -- The conditional deduct (balance >= amount) keeps this true; the check catches any bug that would not.
    CONSTRAINT account_balance_not_negative CHECK (balance >= 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'One money account per user; balance always equals the sum of its entries';

CREATE TABLE account_entry (
    id            BIGINT      NOT NULL AUTO_INCREMENT,
    user_id       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    delta         BIGINT      NOT NULL,
    balance_after BIGINT      NOT NULL,
    ref_type      VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    ref_id        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at    DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- A payment, refund or deposit moves money once: its second entry is refused here.
    CONSTRAINT account_entry_ref_once UNIQUE (ref_type, ref_id),
    KEY account_entry_by_user (user_id, id),
    CONSTRAINT account_entry_account FOREIGN KEY (user_id) REFERENCES account (user_id),
    CONSTRAINT account_entry_ref_type CHECK (ref_type IN ('PAYMENT', 'REFUND', 'DEPOSIT'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'The ledger: one row per balance change, never updated or deleted';

CREATE TABLE orders (
    id              BIGINT      NOT NULL AUTO_INCREMENT,
    order_sn        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    user_id         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    amount          BIGINT      NOT NULL,
    currency        CHAR(3)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    status          VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'UNPAID',
    submit_token    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
    refunded_amount BIGINT      NOT NULL DEFAULT 0,
    created_at      DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at      DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- The caller's business number: a resubmitted order finds the first one here.
    CONSTRAINT orders_sn_once UNIQUE (order_sn),
    -- A submit token creates at most one order, even if Redis forgot that it was consumed.
    CONSTRAINT orders_submit_token_once UNIQUE (submit_token),
    KEY orders_by_user (user_id, id),
    -- The auto-close job scans stale UNPAID orders through this index.
    KEY orders_by_status_age (status, created_at),
    CONSTRAINT orders_amount_positive CHECK (amount > 0),
    CONSTRAINT orders_refund_cap CHECK (refunded_amount >= 0 AND refunded_amount <= amount),
    CONSTRAINT orders_status_known CHECK (status IN ('UNPAID', 'PAID', 'SHIPPED', 'COMPLETED', 'CLOSED', 'REFUNDED'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Orders; status changes only by compare-and-set on the current status';

CREATE TABLE pay_record (
    id         BIGINT      NOT NULL AUTO_INCREMENT,
    order_id   BIGINT      NOT NULL,
    user_id    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    amount     BIGINT      NOT NULL,
    currency   CHAR(3)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    idem_key   VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- The last gate: whatever slipped past the lock, the key and the status CAS, an order is paid once.
    CONSTRAINT pay_record_order_once UNIQUE (order_id),
    CONSTRAINT pay_record_order FOREIGN KEY (order_id) REFERENCES orders (id),
    CONSTRAINT pay_record_amount_positive CHECK (amount > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'The one payment of an order';

CREATE TABLE refund_record (
    id         BIGINT      NOT NULL AUTO_INCREMENT,
    order_id   BIGINT      NOT NULL,
    refund_no  VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    user_id    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    amount     BIGINT      NOT NULL,
    created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- The caller's refund number: a repeated refund request finds the first refund here.
    CONSTRAINT refund_record_no_once UNIQUE (order_id, refund_no),
    CONSTRAINT refund_record_order FOREIGN KEY (order_id) REFERENCES orders (id),
    CONSTRAINT refund_record_amount_positive CHECK (amount > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Partial or full refunds; their sum never exceeds the payment';

CREATE TABLE coupon_grant (
    id          BIGINT      NOT NULL AUTO_INCREMENT,
    user_id     VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    activity_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    created_at  DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (id),
    -- One coupon per user per activity, however often the grant is requested.
    CONSTRAINT coupon_grant_once UNIQUE (user_id, activity_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Coupons granted to users by promotional activities';

CREATE TABLE idempotency_record (
    scope         VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    idem_key      VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    operation     VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    target        VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    fingerprint   CHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    request_body  VARCHAR(4096) NOT NULL,
    status        VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    http_status   SMALLINT     NULL,
    response_body MEDIUMTEXT   NULL,
    created_at    DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at    DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
    -- A concurrent twin's INSERT waits on this key until the first request commits, then replays.
    PRIMARY KEY (scope, idem_key),
    -- The retention job deletes the oldest records through this index.
    KEY idempotency_record_by_age (created_at),
    CONSTRAINT idempotency_record_status CHECK (status IN ('PROCESSING', 'DONE'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COMMENT = 'Idempotency-Key claims and the answers they replay, scoped to the caller';
