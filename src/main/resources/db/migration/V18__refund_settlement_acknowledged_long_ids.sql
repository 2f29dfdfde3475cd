-- An operator's not_refunded may acknowledge the processor's refunds by ids longer than the 255
-- characters payonce keeps of an id (up to 1000, as the processor wrote them): at most 10 of them,
-- comma-separated. Widening a VARCHAR whose length already takes two bytes is done in place
-- (ALGORITHM=INSTANT): where the server could not, the statement fails instead of rebuilding the
-- table. The same statement runs again harmlessly after a migration that stopped.
ALTER TABLE refund_settlement
    MODIFY COLUMN acknowledged VARCHAR(10010) CHARACTER SET ascii COLLATE ascii_bin NULL,
    ALGORITHM = INSTANT;
