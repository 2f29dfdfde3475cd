package io.payonce.broker;

import com.rabbitmq.client.GetResponse;
import io.payonce.support.Broker;
import io.payonce.support.Database;
import io.payonce.support.FreePorts;
import io.payonce.support.InstanceApi;
import io.payonce.support.PackagedInstance;
import io.payonce.support.TcpGate;
import io.payonce.support.Tokens;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The packaged application given two broker addresses (PAYONCE_RABBITMQ_ADDRESSES), each a gate to
 * the tests' broker, as two nodes of a cluster would be: its connections take the first; once that
 * one is gone (every connection through it cut, new ones refused), the consumer's connections and
 * the publisher's move to the second, and a pay command sent then is executed and replied to. Its
 * command queue and dead-letter queue are quorum queues (PAYONCE_COMMANDS_QUEUE_TYPE), as on a cluster.
 */
class BrokerAddressesIT {

    private static final String DATABASE = "payonce_broker_addresses";
    private static final String COMMANDS = Broker.COMMANDS + ".addresses";
    private static final int CONSUMERS = 8;

    @Test
    void aConnectionWhoseNodeIsGoneMovesToTheNextAddress() throws Exception {
        try (TcpGate first = TcpGate.to(Broker.PORT);
             TcpGate second = TcpGate.to(Broker.PORT);
             PackagedInstance instance = PackagedInstance.start("broker-addresses", DATABASE, true, Map.of(
                     "PAYONCE_RABBITMQ_ADDRESSES", "127.0.0.1:" + first.port() + ",127.0.0.1:" + second.port(),
                     // The single address is a closed port: a connection that ignored the list would reach nothing.
                     "PAYONCE_RABBITMQ_PORT", Integer.toString(FreePorts.next()),
                     "PAYONCE_COMMANDS_QUEUE", COMMANDS,
                     "PAYONCE_COMMANDS_QUEUE_TYPE", "quorum"));
             Broker broker = Broker.connect()) {
            try {
                broker.awaitConsumers(COMMANDS, CONSUMERS, Duration.ofSeconds(30));
                assertEquals(Map.of(COMMANDS, "quorum", COMMANDS + ".dlq", "quorum"), typesOf(COMMANDS, COMMANDS + ".dlq"));
                String user = Tokens.newUserId();
                InstanceApi.fund(instance.port(), user, 5000);
                long order = InstanceApi.newOrder(instance.port(), Tokens.user(user), 1200);

                first.shut();
                broker.awaitConsumers(COMMANDS, CONSUMERS, Duration.ofSeconds(30));
                String replies = broker.replyQueue();
                String key = "cmd-" + UUID.randomUUID();
                broker.sendPayTo(COMMANDS, key, replies, key, user, order);
                List<GetResponse> answered = broker.awaitAll(replies, 1, message -> key.equals(message.getProps().getCorrelationId()),
                        Duration.ofSeconds(30));

                assertEquals(201, answered.get(0).getProps().getHeaders().get("x-payonce-status"), Broker.text(answered.get(0)));
                assertEquals(1, Database.named(DATABASE).payments(order));
            } finally {
                broker.deleteCommandObjects(COMMANDS);
            }
        }
    }

    /** The type of each of {@code queues}, as the broker lists them. */
    private static Map<String, String> typesOf(String... queues) throws Exception {
        Process listing = new ProcessBuilder("rabbitmqctl", "-q", "list_queues", "name", "type").redirectErrorStream(true).start();
        String listed = new String(listing.getInputStream().readAllBytes());
        assertEquals(0, listing.waitFor(), listed);
        Map<String, String> types = new TreeMap<>();
        for (String line : listed.lines().toList()) {
            String[] columns = line.split("\\s+");
            if (columns.length == 2 && List.of(queues).contains(columns[0])) {
                types.put(columns[0], columns[1]);
            }
        }
        return types;
    }
}
