-- Auto-close counts from an order's last move to UNPAID, not from its creation: an order a card
-- payment gave back (declined, or settled not charged by an operator) after the delay had run would
-- be closed at the job's next run, and the client's pay with a new key, which its 402 invites,
-- refused 409 ILLEGAL_TRANSITION.
-- unpaid_again_at: when the order last became UNPAID again, stamped by the statement that moves it
-- back (NOW(6), UTC); NULL while it never did, so that its delay runs from created_at, as before,
-- for every order inserted by this release or the one before. Always later than created_at, so the
-- job still scans orders_by_status_age (status, created_at).
-- Nullable and without a default, the column is added in place (ALGORITHM=INSTANT): where the server
-- could not, the statement fails instead of rebuilding the table, which on Galera would block every
-- node's writes for the rebuild. IF NOT EXISTS lets a migration that stopped after it run again. The
-- back-fill is V14, a transaction of its own: DDL commits at once in MariaDB.
ALTER TABLE orders
    ADD COLUMN IF NOT EXISTS unpaid_again_at DATETIME(6) NULL,
    ALGORITHM = INSTANT;
