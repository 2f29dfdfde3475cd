-- One processor charge pays for one payment. Every path that records a charge id records the charge
-- made under that payment's own processor key (succeeded, or declined: a declined charge has an id
-- of its own too), so no two payments can hold the same id; an operator's settlement names a charge
-- by hand, and two stuck payments of the same amount settled with one charge would count money the
-- processor took once as paid twice. NULL (no charge known) repeats freely.
ALTER TABLE pay_record
    ADD CONSTRAINT pay_record_one_payment_per_charge UNIQUE (processor_charge_id);
