package io.payonce.client;

import io.payonce.client.example.CheckoutExample;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** docs/api/client.md's example is the compiled one, and it runs: a balance pay and its refund, and a card pay through a 202. */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
class ClientExampleTest {

    private static final Path EXAMPLE = Path.of("src/test/java/io/payonce/client/example/CheckoutExample.java");
    private static final Path PAGE = Path.of("docs/api/client.md");

    @TestHTTPResource("/")
    URI payonce;

    private final Database db = Database.forTests();

    @AfterEach
    void heal() {
        processor().heal();
    }

    @Test
    void thePageShowsTheExampleAsItIs() throws IOException {
        String source = Files.readString(EXAMPLE);
        String example = source.substring(source.indexOf("// tag::example[]\n") + "// tag::example[]\n".length(), source.indexOf("// end::example[]"));
        String page = Files.readString(PAGE);

        assertTrue(page.contains("```java\n" + example + "```\n"), "docs/api/client.md shows " + EXAMPLE + " between its tags, as it is");
    }

    @Test
    void theExamplePaysFromTheBalanceAndRefunds() {
        Buyer alice = Buyer.withBalance(0);
        CheckoutExample example = new CheckoutExample(payonce, alice::bearer, Tokens::ops, RetryPolicy.DEFAULT, ClientListener.NONE);

        Refund refund = example.payFromTheBalanceAndRefund(alice.userId(), "sn-" + UUID.randomUUID());

        assertEquals("SUCCEEDED", refund.phase());
        assertEquals(5000 - 1999 + 500, db.balance(alice.userId()));
    }

    /**
     * The processor holds the card's charge until the client has been told "not known yet" once:
     * the example keeps the key, asks again, and is told the payment.
     */
    @Test
    void theExamplesCardPayGoesThroughA202() throws InterruptedException {
        Buyer alice = Buyer.withBalance(0);
        List<String> outcomes = new CopyOnWriteArrayList<>();
        AtomicLong cardOrder = new AtomicLong();
        List<Integer> answers = new CopyOnWriteArrayList<>();
        ClientListener holdingTheFirstAnswer = new ClientListener() {
            @Override
            public void attempted(Attempt attempt) {
                answers.add(attempt.status());
            }

            @Override
            public void ended(String operation, Outcome<?> outcome) {
                outcomes.add(operation + " " + outcome.getClass().getSimpleName());
                if (operation.equals("create-order") && outcome instanceof Outcome.Succeeded<?> created && created.value() instanceof Order order) {
                    cardOrder.set(order.id());
                    processor().failNextChargeOf(order.id(), ProcessorSimulator.Fault.HELD);
                }
                if (operation.equals("card-pay") && outcome instanceof Outcome.Pending<?>) {
                    processor().release(cardOrder.get());
                }
            }
        };
        CheckoutExample example = new CheckoutExample(payonce, alice::bearer, Tokens::ops, RetryPolicy.DEFAULT.withDeadline(Duration.ofSeconds(3)),
                holdingTheFirstAnswer);

        Outcome.Succeeded<?> paid = assertInstanceOf(Outcome.Succeeded.class, example.payByCard("sn-" + UUID.randomUUID()));

        assertEquals("SUCCEEDED", ((Payment) paid.value()).phase());
        assertEquals(List.of("submit-token Succeeded", "create-order Succeeded", "card-pay Pending", "card-pay Succeeded"), outcomes);
        assertTrue(answers.contains(202), "payonce answered the held charge 202: " + answers);
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
