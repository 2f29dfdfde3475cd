# Sourced by bench/run.sh and bench/galera-cost.sh: the database's own ceiling, measured by sysbench.
# The ceiling (mode "ceiling") or the design reference (mode "design": payonce's own statements and
# Redis calls) for $2 clients over $3 seconds, on orders seeded before ($4: the first id and the space
# between two ids, as PayBench seed-orders prints them; $5: their count): one result line in PayBench's
# format, latencies from sysbench's histogram (milliseconds). It reads $root, $out and $database, the
# database at PAYONCE_DB_PORT as PAYONCE_DB_USER, and the Redis at PAYONCE_REDIS_PORT.
ceiling() {
    local mode=$1 clients=$2 seconds=$3 first step count=$5
    read -r first step <<<"$4"
    : "${step:?PayBench seed-orders printed no step: the bench classes are older than bench/ceiling.sh; rebuild them}"
    sysbench "$root/bench/ceiling.lua" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PAYONCE_DB_PORT" \
        --mysql-user="$PAYONCE_DB_USER" --mysql-password="$PAYONCE_DB_PASSWORD" --mysql-db=$database \
        --threads="$clients" --time="$seconds" --first_order="$first" --order_step="$step" --orders="$count" --histogram=on \
        --design=$([ "$mode" = design ] && echo on || echo off) --redis_port="${PAYONCE_REDIS_PORT:-6379}" \
        run >"$out/sysbench-$mode-$clients.txt"
    awk -v c="$clients" -v mode="$mode" '
        /\|/ && $1 ~ /^[0-9.]+$/ {value[n] = $1; hits[n] = $NF; total += $NF; n++}
        /transactions:/ {count = $2}
        /total time:/ {seconds = $3 + 0}
        /ignored errors:|^ *errors:/ {errors += $3}
        END {
            for (i = 0; i < n; i++) {
                seen += hits[i]
                if (!p50 && seen >= total * 0.50) p50 = value[i]
                if (!p99 && seen >= total * 0.99) p99 = value[i]
                if (!p999 && seen >= total * 0.999) p999 = value[i]
            }
            printf "%s\t%d\t%d\t%.2f\t%.1f\t%.2f\t%.2f\t%.2f\t{committed=%d, errors=%d}\t{}\n", mode, c, count, seconds, count / seconds, p50, p99, p999, count, errors
        }' "$out/sysbench-$mode-$clients.txt"
}
