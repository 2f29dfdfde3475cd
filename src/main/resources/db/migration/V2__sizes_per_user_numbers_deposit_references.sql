-- Every stored string is sized from the longest value that can reach it; order numbers belong to
-- their user; a deposit is booked under the external reference it settles.

-- target is "account:" + a 64-character user id at its longest (72); "order:" + id is shorter.
-- response_location is the Location of a stored 201: "/orders/" + a 19-digit id at its longest (27).
ALTER TABLE idempotency_record
    MODIFY target VARCHAR(72) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    ADD COLUMN response_location VARCHAR(27) CHARACTER SET ascii COLLATE ascii_bin NULL AFTER response_body;

-- Orders created before this migration replay with their Location too.
UPDATE idempotency_record
SET response_location = CONCAT('/orders/', JSON_UNQUOTE(JSON_EXTRACT(response_body, '$.id')))
WHERE operation = 'create-order' AND status = 'DONE' AND http_status = 201;

-- A user's business number is theirs alone: another user may use the same number, and cannot learn
-- from a conflict that it exists.
ALTER TABLE orders
    DROP INDEX orders_sn_once,
    ADD CONSTRAINT orders_sn_once_per_user UNIQUE (user_id, order_sn);

-- A deposit's ref_id is the external reference it settles, unique per account: whoever sends the
-- same settlement again, with whatever key, the ledger refuses a second credit. Payments and
-- refunds keep their own row ids as references, which are unique anyway.
ALTER TABLE account_entry
    DROP INDEX account_entry_ref_once,
    ADD CONSTRAINT account_entry_ref_once_per_account UNIQUE (user_id, ref_type, ref_id);
