-- An operator's not_refunded may acknowledge the processor's refunds of the charge that payonce did
-- not make as it recorded them: one made by hand in the processor's dashboard, or one of payonce's
-- that the processor contradicted since. Each is named by its processor refund id (at most 10, up to
-- 255 characters, comma-separated), kept beside the settlement they let through.
-- Nullable and without a default, the column is added in place (ALGORITHM=INSTANT), as V13's.
ALTER TABLE refund_settlement
    ADD COLUMN IF NOT EXISTS acknowledged VARCHAR(2600) CHARACTER SET ascii COLLATE ascii_bin NULL,
    ALGORITHM = INSTANT;
