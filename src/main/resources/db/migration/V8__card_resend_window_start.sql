-- Until this version a resend never recorded its time, and a first send that could not connect
-- cleared first_sent_at: a payment taken over since (charge_attempts above the first send's 1) may
-- have reached the processor with first_sent_at still NULL, which left it no resend window at all,
-- and a resend after the processor forgot its key (24 h) would charge the card again. Nothing tells
-- such a payment's resends apart, so its window is taken to have started with the payment: past
-- payonce.processor.resend-within of that, a charge the processor cannot find is left UNKNOWN for an
-- operator, never sent again. A payment whose one send could not connect keeps its window unstarted.
UPDATE pay_record SET first_sent_at = created_at
WHERE phase IN ('CHARGE_SENT', 'UNKNOWN') AND first_sent_at IS NULL AND charge_attempts > 1;
