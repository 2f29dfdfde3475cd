package io.payonce.support;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The invariants money must keep in a payonce database, whatever happened to it: each one a query
 * that counts the rows breaking it. The tests assert them after every test class
 * ({@link LedgerInvariants}) and the chaos checker after every fault run, from this one list. Plain
 * JDBC, independent of the code under test. What a CHECK constraint already makes impossible (a
 * negative balance, refunds beyond the amount) is left to the schema. Each query reaches its
 * correlated rows through an index (the ledger's leads with user_id), so that the checker can run
 * them on the hundreds of thousands of rows of a full chaos run.
 */
public final class MoneyInvariants {

    /** What each invariant forbids, and the query that counts the rows that break it. */
    private static final Map<String, String> QUERIES = new LinkedHashMap<>();

    static {
        QUERIES.put("accounts whose balance differs from the sum of their entries", """
                SELECT COUNT(*) FROM account a
                WHERE a.balance <> (SELECT COALESCE(SUM(e.delta), 0) FROM account_entry e WHERE e.user_id = a.user_id)""");
        // UNIQUE(pay_record.live_order_id) forbids this today; the check stays so that a migration dropping that index is caught.
        // A declined card payment charged nothing, and its order may be paid again.
        QUERIES.put("orders paid more than once", """
                SELECT COUNT(*) FROM (SELECT order_id FROM pay_record WHERE phase <> 'DECLINED' GROUP BY order_id HAVING COUNT(*) > 1) twice""");
        QUERIES.put("keys that paid more than once", """
                SELECT COUNT(*) FROM (SELECT user_id, idem_key FROM pay_record GROUP BY user_id, idem_key HAVING COUNT(*) > 1) twice""");
        QUERIES.put("balance payments without exactly one ledger line of their amount", """
                SELECT COUNT(*) FROM pay_record p
                WHERE p.method = 'BALANCE' AND (SELECT COUNT(*) FROM account_entry e
                       WHERE e.user_id = p.user_id AND e.ref_type = 'PAYMENT' AND e.ref_id = CAST(p.id AS CHAR CHARACTER SET ascii)
                         AND e.delta = -p.amount) <> 1""");
        QUERIES.put("payment ledger lines without a balance payment", """
                SELECT COUNT(*) FROM account_entry e
                WHERE e.ref_type = 'PAYMENT'
                  AND NOT EXISTS (SELECT 1 FROM pay_record p WHERE p.id = CAST(e.ref_id AS UNSIGNED) AND p.method = 'BALANCE')""");
        QUERIES.put("balance refunds without exactly one ledger line of their amount", """
                SELECT COUNT(*) FROM refund_record r
                WHERE r.method = 'BALANCE' AND (SELECT COUNT(*) FROM account_entry e
                       WHERE e.user_id = r.user_id AND e.ref_type = 'REFUND' AND e.ref_id = CAST(r.id AS CHAR CHARACTER SET ascii)
                         AND e.delta = r.amount) <> 1""");
        QUERIES.put("refund ledger lines without a balance refund", """
                SELECT COUNT(*) FROM account_entry e
                WHERE e.ref_type = 'REFUND'
                  AND NOT EXISTS (SELECT 1 FROM refund_record r WHERE r.id = CAST(e.ref_id AS UNSIGNED) AND r.method = 'BALANCE')""");
        // A refund to the card goes back to the card: the balance never sees it.
        QUERIES.put("card refunds of orders not paid by card", """
                SELECT COUNT(*) FROM refund_record r
                WHERE r.method = 'CARD'
                  AND NOT EXISTS (SELECT 1 FROM pay_record p WHERE p.order_id = r.order_id AND p.method = 'CARD' AND p.phase = 'SUCCEEDED'
                                    AND p.processor_charge_id = r.processor_charge_id)""");
        QUERIES.put("ledger lines whose sign does not match what moved the money", """
                SELECT COUNT(*) FROM account_entry e
                WHERE (e.ref_type = 'PAYMENT' AND e.delta >= 0) OR (e.ref_type IN ('REFUND', 'DEPOSIT') AND e.delta <= 0)""");
        // The CHECK orders_refund_cap keeps refunded_amount within the amount; this compares it with the refunds themselves:
        // those that succeeded, and those to the card still in flight, whose amounts are reserved. A failed one gave its back.
        QUERIES.put("orders whose refunded total disagrees with their refunds", """
                SELECT COUNT(*) FROM orders o
                WHERE o.refunded_amount <> (SELECT COALESCE(SUM(r.amount), 0) FROM refund_record r WHERE r.order_id = o.id AND r.phase <> 'FAILED')""");
        QUERIES.put("refunded orders with a refund still waiting for the processor", """
                SELECT COUNT(*) FROM orders o
                WHERE o.status = 'REFUNDED'
                  AND EXISTS (SELECT 1 FROM refund_record r WHERE r.order_id = o.id AND r.phase IN ('STARTED', 'SENT', 'UNKNOWN'))""");
        QUERIES.put("succeeded payments of orders that are unpaid, being paid or closed", """
                SELECT COUNT(*) FROM pay_record p JOIN orders o ON o.id = p.order_id
                WHERE p.phase = 'SUCCEEDED' AND o.status IN ('UNPAID', 'PAYING', 'CLOSED')""");
        // A card payment waits for its processor in PAYING, and only there.
        QUERIES.put("unsettled card payments whose order is not PAYING", """
                SELECT COUNT(*) FROM pay_record p JOIN orders o ON o.id = p.order_id
                WHERE p.phase IN ('STARTED', 'CHARGE_SENT', 'UNKNOWN') AND o.status <> 'PAYING'""");
        QUERIES.put("PAYING orders without exactly one unsettled card payment", """
                SELECT COUNT(*) FROM orders o
                WHERE o.status = 'PAYING'
                  AND (SELECT COUNT(*) FROM pay_record p WHERE p.order_id = o.id AND p.phase IN ('STARTED', 'CHARGE_SENT', 'UNKNOWN')) <> 1""");
        QUERIES.put("payments whose amount, payer or currency differ from their order's", """
                SELECT COUNT(*) FROM pay_record p JOIN orders o ON o.id = p.order_id
                WHERE p.amount <> o.amount OR p.user_id <> o.user_id OR p.currency <> o.currency""");
        // The outbox: an event exists if and only if the money moved (one per ledger line, of its amount), and names how it moved.
        QUERIES.put("ledger lines without exactly one event of their amount", """
                SELECT COUNT(*) FROM account_entry e
                WHERE (SELECT COUNT(*) FROM outbox_event o
                       WHERE o.user_id = e.user_id AND o.ref_id = e.ref_id AND o.event_type = CASE e.ref_type
                           WHEN 'PAYMENT' THEN 'payment.succeeded' WHEN 'REFUND' THEN 'refund.created' ELSE 'deposit.credited' END
                         AND JSON_VALUE(o.payload, '$.amount') = ABS(e.delta)
                         AND (e.ref_type = 'DEPOSIT' OR JSON_VALUE(o.payload, '$.method') = 'balance')) <> 1""");
        QUERIES.put("events without the ledger line, card payment, card refund or operator settlement of their money", """
                SELECT COUNT(*) FROM outbox_event o
                WHERE NOT EXISTS (SELECT 1 FROM account_entry e
                                  WHERE e.user_id = o.user_id AND e.ref_id = o.ref_id AND e.ref_type = CASE o.event_type
                                      WHEN 'payment.succeeded' THEN 'PAYMENT' WHEN 'refund.created' THEN 'REFUND' ELSE 'DEPOSIT' END)
                  AND NOT EXISTS (SELECT 1 FROM pay_record p
                                  WHERE o.event_type = 'payment.succeeded' AND p.id = CAST(o.ref_id AS UNSIGNED) AND p.method = 'CARD'
                                    AND p.phase = 'SUCCEEDED' AND p.user_id = o.user_id)
                  AND NOT EXISTS (SELECT 1 FROM operator_settlement s JOIN pay_record p ON p.id = s.payment_id
                                  WHERE o.event_type = 'payment.settled-by-operator' AND s.payment_id = CAST(o.ref_id AS UNSIGNED)
                                    AND p.user_id = o.user_id)
                  AND NOT EXISTS (SELECT 1 FROM refund_record r
                                  WHERE o.event_type = 'refund.created' AND r.id = CAST(o.ref_id AS UNSIGNED) AND r.method = 'CARD'
                                    AND (r.phase = 'SUCCEEDED' OR EXISTS (SELECT 1 FROM refund_reversal v WHERE v.refund_id = r.id))
                                    AND r.user_id = o.user_id)
                  AND NOT EXISTS (SELECT 1 FROM refund_reversal v JOIN refund_record r ON r.id = v.refund_id
                                  WHERE o.event_type = 'refund.reversed' AND v.refund_id = CAST(o.ref_id AS UNSIGNED)
                                    AND r.user_id = o.user_id)
                  AND NOT EXISTS (SELECT 1 FROM refund_settlement s JOIN refund_record r ON r.id = s.refund_id
                                  WHERE o.event_type = 'refund.settled-by-operator' AND s.refund_id = CAST(o.ref_id AS UNSIGNED)
                                    AND r.user_id = o.user_id)""");
        QUERIES.put("succeeded card payments without exactly one event of their amount", """
                SELECT COUNT(*) FROM pay_record p
                WHERE p.method = 'CARD' AND p.phase = 'SUCCEEDED'
                  AND (SELECT COUNT(*) FROM outbox_event o
                       WHERE o.user_id = p.user_id AND o.event_type = 'payment.succeeded' AND o.ref_id = CAST(p.id AS CHAR CHARACTER SET ascii)
                         AND JSON_VALUE(o.payload, '$.amount') = p.amount AND JSON_VALUE(o.payload, '$.method') = 'card') <> 1""");
        QUERIES.put("succeeded or reversed card refunds without exactly one event of their amount", """
                SELECT COUNT(*) FROM refund_record r
                WHERE r.method = 'CARD' AND (r.phase = 'SUCCEEDED' OR EXISTS (SELECT 1 FROM refund_reversal v WHERE v.refund_id = r.id))
                  AND (SELECT COUNT(*) FROM outbox_event o
                       WHERE o.user_id = r.user_id AND o.event_type = 'refund.created' AND o.ref_id = CAST(r.id AS CHAR CHARACTER SET ascii)
                         AND JSON_VALUE(o.payload, '$.amount') = r.amount AND JSON_VALUE(o.payload, '$.method') = 'card') <> 1""");
        // An operator settles a payment once, as the processor confirmed, and says so downstream.
        QUERIES.put("operator settlements not recorded on their payment as asked", """
                SELECT COUNT(*) FROM operator_settlement s JOIN pay_record p ON p.id = s.payment_id
                WHERE p.method <> 'CARD'
                   OR (s.outcome = 'charged' AND (p.phase <> 'SUCCEEDED' OR p.processor_charge_id <> s.charge_id))
                   OR (s.outcome = 'not_charged' AND (p.phase <> 'DECLINED' OR p.decline_code <> 'settled_not_charged'))""");
        QUERIES.put("operator settlements without exactly one event of their outcome", """
                SELECT COUNT(*) FROM operator_settlement s JOIN pay_record p ON p.id = s.payment_id
                WHERE (SELECT COUNT(*) FROM outbox_event o
                       WHERE o.user_id = p.user_id AND o.event_type = 'payment.settled-by-operator'
                         AND o.ref_id = CAST(p.id AS CHAR CHARACTER SET ascii) AND JSON_VALUE(o.payload, '$.outcome') = s.outcome) <> 1""");
        QUERIES.put("payments settled as not charged without an operator's settlement", """
                SELECT COUNT(*) FROM pay_record p
                WHERE p.decline_code = 'settled_not_charged' AND NOT EXISTS (SELECT 1 FROM operator_settlement s WHERE s.payment_id = p.id)""");
        QUERIES.put("operator settlements of refunds not recorded on their refund as asked", """
                SELECT COUNT(*) FROM refund_settlement s JOIN refund_record r ON r.id = s.refund_id
                WHERE r.method <> 'CARD'
                   OR (s.outcome = 'refunded' AND (r.phase <> 'SUCCEEDED' AND NOT EXISTS (SELECT 1 FROM refund_reversal v WHERE v.refund_id = r.id)
                                                   OR r.processor_refund_id <> s.processor_refund_id))
                   OR (s.outcome = 'not_refunded' AND (r.phase <> 'FAILED' OR r.failure_code <> 'settled_not_refunded'))""");
        QUERIES.put("operator settlements of refunds without exactly one event of their outcome", """
                SELECT COUNT(*) FROM refund_settlement s JOIN refund_record r ON r.id = s.refund_id
                WHERE (SELECT COUNT(*) FROM outbox_event o
                       WHERE o.user_id = r.user_id AND o.event_type = 'refund.settled-by-operator'
                         AND o.ref_id = CAST(r.id AS CHAR CHARACTER SET ascii) AND JSON_VALUE(o.payload, '$.outcome') = s.outcome) <> 1""");
        QUERIES.put("refunds settled as not refunded without an operator's settlement", """
                SELECT COUNT(*) FROM refund_record r
                WHERE r.failure_code = 'settled_not_refunded' AND NOT EXISTS (SELECT 1 FROM refund_settlement s WHERE s.refund_id = r.id)""");
        // A reversal moved a refund to the card that had succeeded to FAILED, and says so downstream once, of its amount.
        QUERIES.put("reversals not recorded on their refund", """
                SELECT COUNT(*) FROM refund_reversal v JOIN refund_record r ON r.id = v.refund_id
                WHERE r.phase <> 'FAILED' OR r.method <> 'CARD' OR r.processor_refund_id IS NULL
                   OR NOT EXISTS (SELECT 1 FROM refund_phase h WHERE h.refund_id = r.id AND h.phase = 'SUCCEEDED')
                   OR v.order_after = 'REFUNDED' OR (v.order_before <> 'REFUNDED' AND v.order_after <> v.order_before)""");
        QUERIES.put("refunded orders whose refunded total is not their amount", """
                SELECT COUNT(*) FROM orders o
                WHERE o.status = 'REFUNDED' AND o.refunded_amount <> o.amount
                  AND EXISTS (SELECT 1 FROM pay_record p WHERE p.order_id = o.id AND p.phase = 'SUCCEEDED')""");
        QUERIES.put("reversals without exactly one event of their amount", """
                SELECT COUNT(*) FROM refund_reversal v JOIN refund_record r ON r.id = v.refund_id
                WHERE (SELECT COUNT(*) FROM outbox_event o
                       WHERE o.user_id = r.user_id AND o.event_type = 'refund.reversed' AND o.ref_id = CAST(r.id AS CHAR CHARACTER SET ascii)
                         AND JSON_VALUE(o.payload, '$.amount') = r.amount) <> 1""");
        // Users without an account own only orders that state-machine tests moved by direct SQL.
        QUERIES.put("paid orders of account holders without a payment", """
                SELECT COUNT(*) FROM orders o
                WHERE o.status IN ('PAID', 'SHIPPED', 'COMPLETED', 'REFUNDED')
                  AND NOT EXISTS (SELECT 1 FROM pay_record p WHERE p.order_id = o.id AND p.phase = 'SUCCEEDED')
                  AND o.user_id IN (SELECT user_id FROM account)""");
    }

    private MoneyInvariants() {
    }

    /** Each invariant, in a fixed order, with the number of rows that break it. */
    public static Map<String, Long> violations(Connection connection) throws SQLException {
        Map<String, Long> violations = new LinkedHashMap<>();
        try (Statement statement = connection.createStatement()) {
            for (Map.Entry<String, String> invariant : QUERIES.entrySet()) {
                try (ResultSet rows = statement.executeQuery(invariant.getValue())) {
                    rows.next();
                    violations.put(invariant.getKey(), rows.getLong(1));
                }
            }
        }
        return violations;
    }
}
