#!/usr/bin/env bash
# Prints "SimpleName<TAB>fully.qualified.Name" for every class the native executable can hold: the JDK's,
# the native-image runtime's (the toolchain's builder jars, where the collector and monitors live) and those
# of the jars given (the application and its libraries, as the native build handed them to the builder).
# The executable's symbols name a method by its class's simple name only (NioEventLoop_run_<hash>), so
# bench/cpu-by-component.awk reads this index to find the package, and so the component, of each one.
#
#   bench/class-index.sh target/*-native-image-source-jar/*.jar target/*-native-image-source-jar/lib/*.jar
set -euo pipefail
jdk=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
toolchain=${PAYONCE_NATIVE_HOME:-$HOME/.cache/payonce-native}
{
    "$jdk/bin/jimage" list "$jdk/lib/modules" | awk '/\.class$/ {print $1}'
    for jar in "$@" "$toolchain"/lib/svm/builder/*.jar; do
        unzip -Z1 "$jar" | grep '\.class$' || true
    done
} | awk '{
    name = $0
    sub(/\.class$/, "", name); sub(/^META-INF\/versions\/[0-9]+\//, "", name); gsub(/\//, ".", name)
    if (name ~ /(^|\.)(module-info|package-info)$/) next
    simple = name; sub(/.*\./, "", simple)
    print simple "\t" name
}' | sort -u
