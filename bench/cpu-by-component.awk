# Sums perf's self-time percentages (perf report --no-children --sort dso,sym --stdio) by the part of
# the stack each symbol belongs to, so that the JVM's and the native executable's profiles, whose
# symbols are spelt differently (io.netty.Foo::bar or Lio/netty/Foo;::bar), read side by side.
# Prints "component<TAB>percent", largest first.
/^#/ || NF < 3 { next }
{
    share = $1; sub(/%/, "", share)
    dso = $2
    symbol = $0; sub(/^[^\]]*\] /, "", symbol)
    gsub(/\//, ".", symbol)
    # The JVM's map names a method with its return and parameter types: only the method's own name counts.
    if (index(symbol, "(") > 0) {
        symbol = substr(symbol, 1, index(symbol, "(") - 1); sub(/.* /, "", symbol)
    }
    component = classify(dso, symbol)
    sum[component] += share
}
function classify(dso, symbol) {
    if (dso ~ /kernel/) return "kernel (network, scheduling, memory)"
    if (dso ~ /^libc|^ld-linux|libpthread/) return "libc"
    if (symbol ~ /io\.payonce/) return "payonce's own code"
    if (symbol ~ /io\.opentelemetry|io\.quarkus\.opentelemetry/) return "tracing (OpenTelemetry)"
    if (symbol ~ /io\.micrometer|io\.quarkus\.micrometer/) return "metrics (Micrometer)"
    if (symbol ~ /io\.smallrye\.context|org\.eclipse\.microprofile\.context|io\.quarkus\.arc|io\.vertx\.core\.impl\.(Duplicated)?Context|LocalContext/) return "context propagation and CDI"
    if (symbol ~ /io\.vertx\.(mysqlclient|sqlclient)/) return "MySQL client (Vert.x)"
    if (symbol ~ /io\.vertx\.redis|io\.quarkus\.redis/) return "Redis client"
    if (symbol ~ /com\.rabbitmq|io\.vertx\.rabbitmq|io\.smallrye\.reactive\.messaging/) return "RabbitMQ client and messaging"
    if (symbol ~ /io\.netty/) return "netty"
    if (symbol ~ /io\.smallrye\.mutiny/) return "Mutiny"
    if (symbol ~ /com\.fasterxml|io\.vertx\.core\.json/) return "JSON"
    if (symbol ~ /org\.jose4j|io\.smallrye\.jwt/) return "JWT"
    if (symbol ~ /io\.vertx/) return "Vert.x core and HTTP"
    if (symbol ~ /io\.quarkus|org\.jboss\.resteasy|io\.smallrye/) return "Quarkus, REST and SmallRye"
    if (symbol ~ /com\.oracle\.svm|jdk\.graal|org\.graalvm/ || dso ~ /libjvm/) return "runtime (GC, compiler, safepoints)"
    if (symbol ~ /^(java|jdk|sun)\./) return "JDK classes"
    if (symbol ~ /Interpreter|StubRoutines|vtable|itable|^0x[0-9a-f]+$|unknown/) return "unresolved (interpreter, stubs)"
    return "other"
}
END {
    for (component in sum) printf "%s\t%.1f\n", component, sum[component]
}
