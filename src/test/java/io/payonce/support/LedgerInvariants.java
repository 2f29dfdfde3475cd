package io.payonce.support;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** After a test class, asserts every {@link MoneyInvariants money invariant} across the whole test database. */
public class LedgerInvariants implements AfterAllCallback {

    @Override
    public void afterAll(ExtensionContext context) throws SQLException {
        try (Connection connection = Database.forTests().connect()) {
            for (Map.Entry<String, Long> invariant : MoneyInvariants.violations(connection).entrySet()) {
                assertEquals(0, invariant.getValue(), invariant.getKey());
            }
        }
    }
}
