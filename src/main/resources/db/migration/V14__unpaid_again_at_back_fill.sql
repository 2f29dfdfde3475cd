-- Orders given back before V13, still UNPAID: their last move to UNPAID is the decline recorded in the
-- payment's history, in the transaction that moved the order. updated_at is named so that ON UPDATE
-- leaves it as it was: the order did not change for its readers. A transaction of its own, so that a
-- failure leaves nothing half done and the migration can simply run again.
UPDATE orders o
SET o.unpaid_again_at = (
        SELECT MAX(ph.created_at)
        FROM pay_record p
        JOIN payment_phase ph ON ph.payment_id = p.id AND ph.phase = 'DECLINED'
        WHERE p.order_id = o.id),
    o.updated_at = o.updated_at
WHERE o.status = 'UNPAID'
  AND o.unpaid_again_at IS NULL
  AND EXISTS (SELECT 1 FROM pay_record p WHERE p.order_id = o.id AND p.phase = 'DECLINED');
