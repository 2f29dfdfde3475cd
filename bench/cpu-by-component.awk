# Sums perf's self-time percentages (perf report --no-children --sort dso,sym --stdio) by the part of
# the stack each symbol belongs to, so that the JVM's and the native executable's profiles, whose
# symbols are spelt differently (io.netty.Foo::bar or Lio/netty/Foo;::bar), read side by side.
# The native executable's symbols name a class by its simple name (NioEventLoop_run_<hash>): with
# -v classes=FILE, bench/class-index.sh's output, each is looked up there and counted with its package's
# component; a simple name whose classes lie in different components counts as "ambiguous", one the index
# does not hold (classes the builder generates) as "native code outside the class index".
# Prints "component<TAB>percent", largest first.
BEGIN {
    while (classes != "" && (getline entry < classes) > 0) {
        split(entry, field, "\t")
        found = classify("", field[2])
        if (!(field[1] in componentOf)) componentOf[field[1]] = found
        else if (componentOf[field[1]] != found) componentOf[field[1]] = "ambiguous"
    }
}
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
    component = isNative(dso, symbol) ? nativeComponent(symbol) : classify(dso, symbol)
    sum[component] += share
}
# A method of the native executable: its dso is the executable, and its symbol ends with a hash of 16 or more characters.
function isNative(dso, symbol,    parts, n) {
    if (classes == "" || index(symbol, ".") > 0 || dso ~ /kernel|vdso|\.so|\.map/) return 0
    n = split(symbol, parts, "_")
    return n >= 2 && length(parts[n]) >= 16
}
# The longest run of the symbol's leading parts (Class, Class_Bean, ...) the index holds, its hash dropped;
# else, for a class name the builder cut short at the front, the index's names that end with it.
function nativeComponent(symbol,    parts, n, k, i, name, candidate, found) {
    n = split(symbol, parts, "_") - 1
    for (k = n; k >= 1; k--) {
        name = parts[1]
        for (i = 2; i <= k; i++) name = name "_" parts[i]
        if (name in componentOf) return componentOf[name]
    }
    if (parts[1] in bySuffix) return bySuffix[parts[1]]
    found = ""
    for (candidate in componentOf) {
        if (length(candidate) > length(parts[1]) && substr(candidate, length(candidate) - length(parts[1]) + 1) == parts[1]) {
            found = found == "" || found == componentOf[candidate] ? componentOf[candidate] : "ambiguous"
        }
    }
    return bySuffix[parts[1]] = (found == "" ? "native code outside the class index" : found)
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
    # The collector and the monitors apart from the rest of the runtime: where the native executable's profile differs.
    if (symbol ~ /com\.oracle\.svm\.core\.(genscavenge|heap)\./ || dso ~ /libjvm/ && symbol ~ /G1|GC|[Oo]op|Scavenge|Evacuat/) return "runtime: garbage collector"
    if (symbol ~ /com\.oracle\.svm\.core\.monitor\./ || dso ~ /libjvm/ && symbol ~ /ObjectMonitor|ObjectSynchronizer/) return "runtime: monitors"
    if (symbol ~ /com\.oracle\.svm|jdk\.graal|org\.graalvm/ || dso ~ /libjvm/) return "runtime (compiler, safepoints, threads)"
    if (symbol ~ /^(java|jdk|sun)\./) return "JDK classes"
    if (symbol ~ /Interpreter|StubRoutines|vtable|itable|^0x[0-9a-f]+$|unknown/) return "unresolved (interpreter, stubs)"
    return "other"
}
# perf prints each symbol's share rounded to 0.01 %: with a few thousand samples the rounding adds up to more than
# a percent, so the sums are scaled to 100 %.
END {
    for (component in sum) total += sum[component]
    for (component in sum) printf "%s\t%.1f\n", component, sum[component] * 100 / total
}
