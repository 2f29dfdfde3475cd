package io.payonce.broker;

import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.FreePorts;
import io.payonce.support.PackagedInstance;
import io.payonce.support.TcpGate;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged application started while the broker is away: it starts and serves (readiness depends
 * on the database alone), and says once, at WARN, that RabbitMQ cannot be reached, naming its
 * address, why, and the settings to check; the consumer's connections, which retry every 2 s, and
 * the outbox relay, which retries every second, add nothing a minute of log would bury it under.
 * When the broker answers again it says so, and every command consumer is back.
 */
class BrokerAwayAtStartIT {

    private static final String DATABASE = "payonce_broker_away";
    private static final String COMMANDS = Broker.COMMANDS + ".broker-away";
    /** The consumer's connections retry every 2 s, the relay every second: three rounds of both. */
    private static final Duration AWAY = Duration.ofSeconds(7);
    private static final int CONSUMERS = 8;

    @Test
    void aStartWithoutTheBrokerSaysSoOnceAtWarnAndTellsItsReturn() throws Exception {
        int away = FreePorts.next();
        String warning = "RabbitMQ at 127.0.0.1:" + away + " cannot be reached (Connection refused): events wait in the outbox, "
                + "and no command is taken, until it can; check PAYONCE_RABBITMQ_HOST and PAYONCE_RABBITMQ_PORT";
        String back = "RabbitMQ at 127.0.0.1:" + away + " takes payonce's connection again";
        try (PackagedInstance instance = PackagedInstance.start("broker-away", DATABASE, true,
                Map.of("PAYONCE_RABBITMQ_PORT", Integer.toString(away), "PAYONCE_COMMANDS_QUEUE", COMMANDS));
             Broker broker = Broker.connect()) {
            try {
                Await.until(() -> instance.linesContaining(warning) >= 1, Duration.ofSeconds(15), "the start telling the broker is away");
                assertEquals(200, RestAssured.given().port(instance.managementPort()).get("/q/health/ready").statusCode(), "ready without the broker");
                Thread.sleep(AWAY.toMillis());

                String log = Files.readString(instance.log());
                assertEquals(1, instance.linesContaining(warning), "told once:\n" + log);
                assertTrue(log.lines().anyMatch(each -> each.contains(warning) && each.contains(" WARN ")), "at WARN:\n" + log);
                assertEquals(0, instance.linesContaining("SRMSG17007"), "no connection said established before one was:\n" + log);
                assertEquals(0, instance.linesContaining("Could not connect to rabbitmq"), "no stack trace per try:\n" + log);
                assertTrue(instance.linesContaining("Outbox relay stopped early") <= 1, "the relay's failure told once:\n" + log);

                try (TcpGate broughtBack = TcpGate.on(away, Broker.PORT)) {
                    Await.until(() -> instance.linesContaining(back) == 1, Duration.ofSeconds(15), "the broker's return told");
                    broker.awaitConsumers(COMMANDS, CONSUMERS, Duration.ofSeconds(15));
                    assertTrue(Files.readString(instance.log()).lines().anyMatch(each -> each.contains(back) && each.contains(" INFO ")),
                            "at INFO:\n" + Files.readString(instance.log()));
                }
            } finally {
                broker.deleteCommandObjects(COMMANDS);
            }
        }
    }
}
