-- wrk script for bench/run.sh: each thread sends its own slice of prepared pays
-- (path, bearer token, Idempotency-Key per line of the file named by PAYS), once each, in order.
local file = os.getenv("PAYS")
local threads = {}

function setup(thread)
    thread:set("id", #threads)
    table.insert(threads, thread)
end

function init(args)
    local count = tonumber(os.getenv("THREADS"))
    pays = {}
    local n = 0
    for line in io.lines(file) do
        if n % count == id then
            local path, bearer, key = line:match("([^\t]+)\t([^\t]+)\t([^\t]+)")
            table.insert(pays, {path, bearer, key})
        end
        n = n + 1
    end
    next_pay = 1
end

function request()
    local pay = pays[next_pay]
    next_pay = next_pay % #pays + 1
    return wrk.format("POST", pay[1], {["Authorization"] = "Bearer " .. pay[2], ["Idempotency-Key"] = pay[3]}, "")
end

-- One tab-separated result line in PayBench's format: mode, clients, count, seconds, per second,
-- p50, p99, p99.9 (ms), statuses, extras.
function done(summary, latency, requests)
    local seconds = summary.duration / 1e6
    local failed = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format("%s\t%s\t%d\t%.2f\t%.0f\t%.1f\t%.1f\t%.1f\t{2xx=%d, other=%d}\t{generator=wrk}\n",
        os.getenv("MODE"), os.getenv("CLIENTS"), summary.requests, seconds, summary.requests / seconds,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000,
        summary.requests - failed, failed))
end
