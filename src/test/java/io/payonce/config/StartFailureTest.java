package io.payonce.config;

import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.sql.SQLException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLSyntaxErrorException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a failed start's last line says of its cause, from the failure's chain alone: a database that
 * cannot be reached and one that refuses the login name the settings to check; any other error of
 * the database, or a refusal to use one of its databases, names none, so the whole chain is logged
 * before the line. A chain that loops ends.
 */
class StartFailureTest {

    @Test
    void aRefusedConnectionIsADatabaseThatCannotBeReached() {
        StartFailure failure = StartFailure.of(new RuntimeException("Failed to start quarkus",
                new SQLException("Socket fail to connect", "08000", new ConnectException("Connection refused"))));

        assertEquals("database", failure.store());
        assertEquals("PAYONCE_DB_HOST, PAYONCE_DB_PORT", failure.settings());
        assertEquals("Connection refused", failure.cause());
    }

    @Test
    void aRefusedLoginNamesTheUserAndPassword() {
        StartFailure failure = StartFailure.of(new RuntimeException(new SQLInvalidAuthorizationSpecException(
                "(conn=5) Access denied for user 'payonce'@'localhost' (using password: YES)", "28000", 1045)));

        assertEquals("PAYONCE_DB_USER, PAYONCE_DB_PASSWORD", failure.settings());
    }

    @Test
    void noRightOnADatabaseIsAnErrorOfTheDatabaseNotALogin() {
        StartFailure failure = StartFailure.of(new RuntimeException(new SQLSyntaxErrorException(
                "(conn=6) Access denied for user 'payonce'@'%' to database 'payonce_locl'", "42000", 1044)));

        assertEquals("database", failure.store());
        assertNull(failure.settings(), "no settings to check: the chain is logged at ERROR");
        assertTrue(failure.sentence().endsWith(" answered with an error ((conn=6) Access denied for user 'payonce'@'%' to database "
                + "'payonce_locl')"), failure.sentence());
    }

    @Test
    void aRefusalOfPayoncesOwnNamesTheVariablesItNames() {
        StartFailure failure = StartFailure.of(new IllegalStateException("PAYONCE_PROCESSOR_WEBHOOK_SECRET has surrounding whitespace"));

        assertNull(failure.store());
        assertEquals("PAYONCE_PROCESSOR_WEBHOOK_SECRET", failure.settings());
    }

    @Test
    void aChainThatLoopsEnds() {
        RuntimeException first = new RuntimeException("first");
        RuntimeException second = new RuntimeException("second", first);
        first.initCause(second);

        assertEquals("second", StartFailure.of(first).cause());
    }
}
