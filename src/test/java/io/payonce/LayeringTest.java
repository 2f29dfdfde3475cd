package io.payonce;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The house's layering, read from the sources' imports. Four floors, each importing only the floors
 * below it: the foundations (stores, meters, configuration, input rules, digests, the refusal vocabulary
 * {@code errors}); the mechanisms every feature shares (the keyed-write guard, the pay lock, submit
 * tokens, callers, the outbox, the processor's client); the features, the broker edge among them;
 * and {@code api}, the HTTP edge, which only the features' resources use. No two rooms depend on
 * each other, however indirectly, and HTTP stays in the HTTP edge.
 */
class LayeringTest {

    private static final Path SOURCES = Path.of("src/main/java/io/payonce");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.payonce\\.([a-z.]+)\\.([A-Z]\\w*)", Pattern.MULTILINE);
    private static final Pattern JAX_RS = Pattern.compile("^import (?:static )?jakarta\\.ws\\.rs\\.", Pattern.MULTILINE);

    private static final List<Set<String>> FLOORS = List.of(
            Set.of("db", "redis", "broker", "metrics", "config", "input", "tracing", "errors", "shutdown", "digest"),
            Set.of("idempotency", "lock", "token", "auth", "events", "processor"),
            Set.of("account", "order", "payment", "coupon", "commands", "dev", "webhook"),
            Set.of("api"));

    /** What the webhook room may use of the pay paths: their doors for an outcome learnt from the processor's events. */
    private static final Set<String> WEBHOOK_DOORS = Set.of("payment.card.CardCharge", "payment.operation.Notice",
            "payment.refund.RefundToCard");

    /** The client library: a house of its own beside the server's, on no floor of it. */
    private static final String CLIENT = "client";
    /** All the client may import: the JDK and Jackson, which its users' classpaths hold anyway. */
    private static final Pattern CLIENT_MAY_IMPORT = Pattern.compile("(?:java|com\\.fasterxml\\.jackson|io\\.payonce\\.client)\\..*");
    private static final Pattern ANY_IMPORT = Pattern.compile("^import (?:static )?([\\w.]+)", Pattern.MULTILINE);

    /** The room of the one lifecycle that every operation at the processor follows. */
    private static final String LIFECYCLE = "payment.operation";

    /** The pay paths beneath {@code payment}, which share its types and are chosen by its door. */
    private static final Set<String> PAYMENT_ROOMS = Set.of("payment.balance", "payment.card", "payment.refund", "payment.lookup");

    @Test
    void everyRoomStandsOnAFloor() {
        Set<String> unplaced = new TreeSet<>();
        for (Source source : sources()) {
            if (floorOf(source.room()) < 0 && !source.room().equals(CLIENT)) {
                unplaced.add(source.room());
            }
        }
        assertEquals(Set.of(), unplaced, "rooms on no floor of LayeringTest");
    }

    @Test
    void noRoomDependsOnItselfThroughOthers() {
        Map<String, Set<String>> imports = roomImports();
        List<String> cycles = new ArrayList<>();
        for (String start : imports.keySet()) {
            if (reaches(imports, start, start, new TreeSet<>())) {
                cycles.add(start);
            }
        }
        assertEquals(List.of(), cycles, "rooms on an import cycle; imports: " + imports);
    }

    @Test
    void noImportRunsBackUp() {
        Map<String, Set<String>> upward = new TreeMap<>();
        for (Source source : sources()) {
            int floor = floorOf(source.room());
            for (Imported imported : source.imports()) {
                boolean resourceUsesApi = imported.room().equals("api") && source.isResource();
                if (floorOf(imported.room()) > floor && !resourceUsesApi) {
                    upward.computeIfAbsent(source.path(), ignored -> new TreeSet<>()).add(imported.pkg() + "." + imported.type());
                }
            }
        }
        assertEquals(Map.of(), upward, "imports from a floor above, or of api by a class that is no resource");
    }

    /**
     * The client library ships to payonce's users as a jar of its own: it uses nothing of the server
     * (only the JDK and Jackson), and the server uses nothing of it, so that neither drags the other in.
     */
    @Test
    void theClientStandsApartFromTheServer() {
        Map<String, Set<String>> wrong = new TreeMap<>();
        for (Source source : sources()) {
            boolean client = source.room().equals(CLIENT);
            Matcher imported = ANY_IMPORT.matcher(source.text());
            while (imported.find()) {
                String name = imported.group(1);
                if (client ? !CLIENT_MAY_IMPORT.matcher(name).matches() : name.startsWith("io.payonce." + CLIENT + ".")) {
                    wrong.computeIfAbsent(source.path(), ignored -> new TreeSet<>()).add(name);
                }
            }
            if (client && source.text().replace("io.payonce.client", "").contains("io.payonce.")) {
                wrong.computeIfAbsent(source.path(), ignored -> new TreeSet<>()).add("a name of the server's written out");
            }
        }
        assertEquals(Map.of(), wrong);
        assertTrue(sources().stream().anyMatch(source -> source.room().equals(CLIENT)), "the client's sources are where this test reads");
    }

    /** The processor's client is payonce's own outbound HTTP: it never learns what a payment is. */
    @Test
    void theProcessorKnowsNoPayment() {
        Set<String> wrong = new TreeSet<>();
        for (Source source : sources()) {
            if (source.room().equals("processor") && source.imports().stream().anyMatch(imported -> imported.room().equals("payment"))) {
                wrong.add(source.path());
            }
        }
        assertEquals(Set.of(), wrong);
    }

    /**
     * Only the HTTP edge speaks JAX-RS: {@code api}, the resources, and the processor's REST client,
     * whose interface MicroProfile REST Client declares in JAX-RS terms.
     */
    @Test
    void onlyTheHttpEdgeImportsJaxRs() {
        Set<String> wrong = new TreeSet<>();
        for (Source source : sources()) {
            boolean edge = source.room().equals("api") || source.room().equals("processor") || source.isResource();
            if (!edge && JAX_RS.matcher(source.text()).find()) {
                wrong.add(source.path());
            }
        }
        assertEquals(Set.of(), wrong);
    }

    /**
     * The four pay paths stand side by side under {@code payment}: each uses the shared types there,
     * none uses another path, and none calls back through the door that chooses between them.
     */
    @Test
    void paymentRoomsStandSideBySide() {
        Map<String, Set<String>> wrong = new TreeMap<>();
        for (Source source : sources()) {
            if (!PAYMENT_ROOMS.contains(source.pkg())) {
                continue;
            }
            for (Imported imported : source.imports()) {
                boolean sibling = PAYMENT_ROOMS.contains(imported.pkg()) && !imported.pkg().equals(source.pkg());
                boolean door = imported.pkg().equals("payment") && imported.type().equals("Payments");
                if (sibling || door) {
                    wrong.computeIfAbsent(source.path(), ignored -> new TreeSet<>()).add(imported.pkg() + "." + imported.type());
                }
            }
        }
        assertEquals(Map.of(), wrong);
        Set<String> beneath = new TreeSet<>(PAYMENT_ROOMS);
        beneath.add(LIFECYCLE);
        assertEquals(beneath, sources().stream().map(Source::pkg).filter(pkg -> pkg.startsWith("payment."))
                .collect(Collectors.toCollection(TreeSet::new)), "the rooms beneath payment");
    }

    /**
     * The lifecycle of every operation at the processor stands below the operations it drives: the
     * card charge and the refund to the card both stand on it, and it knows none of them, nor any
     * other part of {@code payment}, so that a third kind is a hook class and a repository.
     */
    @Test
    void theLifecycleStandsBelowTheOperationsItDrives() {
        Map<String, Set<String>> upward = new TreeMap<>();
        Set<String> standingOnIt = new TreeSet<>();
        for (Source source : sources()) {
            for (Imported imported : source.imports()) {
                if (source.pkg().equals(LIFECYCLE) && imported.room().equals("payment") && !imported.pkg().equals(LIFECYCLE)) {
                    upward.computeIfAbsent(source.path(), ignored -> new TreeSet<>()).add(imported.pkg() + "." + imported.type());
                }
                if (imported.pkg().equals(LIFECYCLE) && !source.pkg().equals(LIFECYCLE)) {
                    standingOnIt.add(source.pkg());
                }
            }
        }
        assertEquals(Map.of(), upward, "the lifecycle reaching up into payment");
        assertTrue(standingOnIt.containsAll(Set.of("payment.card", "payment.refund")), "rooms on the lifecycle: " + standingOnIt);
    }

    /**
     * The processor's webhooks settle payments and refunds through each kind's one door for outcomes
     * learnt from outside ({@code OperationKind.notice}), never through their repositories: whatever an
     * event says meets the same checks and compare-and-sets as payonce's own calls.
     */
    @Test
    void webhooksReachPaymentsThroughTheirDoorsOnly() {
        Set<String> reached = new TreeSet<>();
        for (Source source : sources()) {
            if (source.room().equals("webhook")) {
                source.imports().stream().filter(imported -> imported.room().equals("payment") && !imported.pkg().equals("payment"))
                        .forEach(imported -> reached.add(imported.pkg() + "." + imported.type()));
            }
        }
        assertEquals(WEBHOOK_DOORS, reached);
    }

    private static int floorOf(String room) {
        for (int floor = 0; floor < FLOORS.size(); floor++) {
            if (FLOORS.get(floor).contains(room)) {
                return floor;
            }
        }
        return -1;
    }

    private static boolean reaches(Map<String, Set<String>> imports, String from, String target, Set<String> visited) {
        for (String next : imports.getOrDefault(from, Set.of())) {
            if (next.equals(target) || (visited.add(next) && reaches(imports, next, target, visited))) {
                return true;
            }
        }
        return false;
    }

    /** For each room (top-level package) under io.payonce, the other rooms its classes import. */
    private static Map<String, Set<String>> roomImports() {
        Map<String, Set<String>> imports = new TreeMap<>();
        for (Source source : sources()) {
            Set<String> targets = imports.computeIfAbsent(source.room(), ignored -> new TreeSet<>());
            source.imports().stream().map(Imported::room).filter(room -> !room.equals(source.room())).forEach(targets::add);
        }
        return imports;
    }

    private static List<Source> sources() {
        try (Stream<Path> files = Files.walk(SOURCES)) {
            return files.filter(file -> file.toString().endsWith(".java")).map(Source::read).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A class named in an import: its package under io.payonce, and the room that package belongs to. */
    private record Imported(String pkg, String type) {

        String room() {
            return pkg.split("\\.")[0];
        }
    }

    /** One source file: its package under io.payonce, its text and what it imports from io.payonce. */
    private record Source(String path, String pkg, String text, List<Imported> imports) {

        static Source read(Path file) {
            try {
                String text = Files.readString(file);
                List<Imported> imports = new ArrayList<>();
                Matcher imported = IMPORT.matcher(text);
                while (imported.find()) {
                    imports.add(new Imported(imported.group(1), imported.group(2)));
                }
                return new Source(SOURCES.relativize(file).toString(), SOURCES.relativize(file.getParent()).toString().replace('/', '.'), text,
                        imports);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        String room() {
            return pkg.split("\\.")[0];
        }

        boolean isResource() {
            return path.endsWith("Resource.java");
        }
    }
}
