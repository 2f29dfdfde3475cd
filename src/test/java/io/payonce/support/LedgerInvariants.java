package io.payonce.support;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * After a test class, checks the invariants money must keep across the whole test database: every
 * balance equals the sum of its ledger; no order has two payments; every payment and every refund
 * has exactly one ledger line of its amount, with the sign of what moved the money; a payment
 * matches its order's amount, payer and currency, and never belongs to an unpaid or closed order;
 * an order's refunded total is the sum of its refunds. Plain JDBC, independent of the code under
 * test. What a CHECK constraint already makes impossible (a negative balance, refunds beyond the
 * amount) is left to the schema.
 */
public class LedgerInvariants implements AfterAllCallback {

    @Override
    public void afterAll(ExtensionContext context) throws SQLException {
        try (Connection connection = Database.forTests().connect();
             Statement statement = connection.createStatement()) {
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM account a
                    WHERE a.balance <> (SELECT COALESCE(SUM(e.delta), 0) FROM account_entry e WHERE e.user_id = a.user_id)"""),
                    "accounts whose balance differs from the sum of their entries");
            // UNIQUE(pay_record.order_id) forbids this today; the check stays so that a migration dropping that index is caught.
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM (SELECT order_id FROM pay_record GROUP BY order_id HAVING COUNT(*) > 1) twice"""),
                    "orders paid more than once");
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM pay_record p
                    WHERE (SELECT COUNT(*) FROM account_entry e
                           WHERE e.ref_type = 'PAYMENT' AND e.ref_id = CAST(p.id AS CHAR CHARACTER SET ascii) AND e.delta = -p.amount) <> 1"""),
                    "payments without exactly one ledger line of their amount");
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM refund_record r
                    WHERE (SELECT COUNT(*) FROM account_entry e
                           WHERE e.ref_type = 'REFUND' AND e.ref_id = CAST(r.id AS CHAR CHARACTER SET ascii) AND e.delta = r.amount) <> 1"""),
                    "refunds without exactly one ledger line of their amount");
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM account_entry e
                    WHERE (e.ref_type = 'PAYMENT' AND e.delta >= 0) OR (e.ref_type IN ('REFUND', 'DEPOSIT') AND e.delta <= 0)"""),
                    "ledger lines whose sign does not match what moved the money");
            // The CHECK orders_refund_cap keeps refunded_amount within the amount; this compares it with the refunds themselves.
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM orders o
                    WHERE o.refunded_amount <> (SELECT COALESCE(SUM(r.amount), 0) FROM refund_record r WHERE r.order_id = o.id)"""),
                    "orders whose refunded total disagrees with their refunds");
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM pay_record p JOIN orders o ON o.id = p.order_id
                    WHERE o.status IN ('UNPAID', 'CLOSED')"""),
                    "payments of orders that are unpaid or closed");
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM pay_record p JOIN orders o ON o.id = p.order_id
                    WHERE p.amount <> o.amount OR p.user_id <> o.user_id OR p.currency <> o.currency"""),
                    "payments whose amount, payer or currency differ from their order's");
            // Users without an account own only orders that state-machine tests moved by direct SQL.
            assertEquals(0, count(statement, """
                    SELECT COUNT(*) FROM orders o
                    WHERE o.status IN ('PAID', 'SHIPPED', 'COMPLETED', 'REFUNDED')
                      AND NOT EXISTS (SELECT 1 FROM pay_record p WHERE p.order_id = o.id)
                      AND o.user_id IN (SELECT user_id FROM account)"""),
                    "paid orders of account holders without a payment");
        }
    }

    private static long count(Statement statement, String sql) throws SQLException {
        try (ResultSet rows = statement.executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }
}
