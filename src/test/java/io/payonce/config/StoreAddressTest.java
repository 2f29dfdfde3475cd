package io.payonce.config;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A store's address as a log line shows it: its hosts and ports, and nothing of a password, however the password is written. */
class StoreAddressTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', nullValues = "NONE", value = {
            "redis://127.0.0.1:6379                                | 127.0.0.1:6379",
            "redis://:s3cret@redis.internal:6379/0                 | redis.internal:6379",
            "redis://payonce:s3cret@redis.internal:6379            | redis.internal:6379",
            "jdbc:mariadb://db.internal:3306/payonce?sslMode=trust | db.internal:3306",
            "jdbc:mariadb://db1,db2:3306/payonce                   | db1,db2:3306",
            "jdbc:mariadb://db.internal/payonce?password=p@ss      | NONE",
            "redis://:pa#ss@redis.internal:6379                    | NONE",
            "redis://:pa?ss@redis.internal:6379                    | NONE",
            "redis://:pa/ss@redis.internal:6379                    | NONE",
            "redis://:pa^ss@redis.internal:6379                    | NONE",
            "redis://:pa ss@redis.internal:6379                    | NONE",
            "redis.internal:6379                                   | NONE",
    })
    void showsTheHostsAndPortsAndNeverAPassword(String url, String shown) {
        assertEquals(shown, StoreAddress.of(url));
    }
}
