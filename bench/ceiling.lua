-- sysbench script for bench/run.sh: the ceiling, the minimal correct pay transaction with the same
-- guarantees as payonce's, driven by a warm generator written in C that costs the machine little.
--   claim the key, compare-and-set the order UNPAID -> PAID, record the payment (UNIQUE(order_id)),
--   debit the account only if the balance covers it, write the ledger line and the event (outbox),
--   store the answer, COMMIT.
-- With --design=on it is the second reference: payonce's own pay, statement for statement as
-- payonce sends them (the order read with the key's stored answer before the lock, payonce's SQL
-- texts and values), with its two Redis calls around the transaction (SET NX PX, the owner-only
-- release script), spoken over a plain socket. What separates payonce from this reference is the
-- cost of its implementation (HTTP, JWT, JSON, the reactive clients); what separates this reference
-- from the ceiling is the cost of its design.
-- Each thread pays its own share of the orders seeded for this run: the i-th of them has the id
-- first_order + i * order_step (PayBench seed-orders prints both: a Galera node hands out every
-- third id), thread t taking i = t, t + threads, ...; it belongs to user bench-<i mod users>, as the
-- seeding spreads them.
--
--   sysbench bench/ceiling.lua --mysql-host=127.0.0.1 --mysql-db=... --threads=N --time=S \
--       --first_order=ID --order_step=1 --orders=N --amount=100 [--design=on --redis_port=6379] run

sysbench.cmdline.options = {
   first_order = {"id of the first seeded order", 0},
   order_step = {"how far apart the seeded orders' ids are", 1},
   orders = {"how many orders were seeded", 0},
   users = {"how many users the orders are spread over", 2000},
   amount = {"the amount of every seeded order", 100},
   design = {"payonce's own statements and Redis calls instead of the minimal pay", false},
   redis_port = {"the Redis that payonce's lock uses, on 127.0.0.1", 6379},
}

-- Redis over a TCP socket through LuaJIT's FFI: sysbench has no Redis client, and this costs no more
-- than the system calls themselves.
local ffi = require("ffi")
ffi.cdef[[
struct bench_sockaddr_in { uint16_t family; uint16_t port; uint32_t addr; uint8_t zero[8]; };
int socket(int domain, int type, int protocol);
int connect(int fd, const void *addr, uint32_t length);
int setsockopt(int fd, int level, int name, const void *value, uint32_t length);
long write(int fd, const void *buffer, size_t count);
long read(int fd, void *buffer, size_t count);
int close(int fd);
]]
local reply_buffer = ffi.new("char[1024]")

local function redis_connect(port)
   local fd = ffi.C.socket(2, 1, 0)
   local address = ffi.new("struct bench_sockaddr_in")
   address.family = 2
   address.port = bit.bor(bit.rshift(port, 8), bit.lshift(bit.band(port, 0xff), 8))
   address.addr = 0x0100007f
   assert(ffi.C.connect(fd, address, ffi.sizeof(address)) == 0, "cannot connect to Redis on port " .. port)
   ffi.C.setsockopt(fd, 6, 1, ffi.new("int[1]", 1), 4)
   return fd
end

-- One command, its whole reply (every reply this script expects is one short line, or a bulk string).
local function redis(fd, ...)
   local parts = {"*" .. select("#", ...) .. "\r\n"}
   for _, argument in ipairs({...}) do
      parts[#parts + 1] = "$" .. #argument .. "\r\n" .. argument .. "\r\n"
   end
   local command = table.concat(parts)
   assert(ffi.C.write(fd, command, #command) == #command, "cannot write to Redis")
   local reply = ""
   repeat
      local n = ffi.C.read(fd, reply_buffer, 1024)
      assert(n > 0, "Redis closed the connection")
      reply = reply .. ffi.string(reply_buffer, n)
   until reply:sub(-2) == "\r\n" and (reply:sub(1, 1) ~= "$" or select(2, reply:gsub("\r\n", "")) == 2)
   return reply
end

local RELEASE_LOCK = [[
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0]]

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   con:query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
   first = sysbench.opt.first_order
   step = sysbench.opt.order_step
   count = sysbench.opt.orders
   amount = sysbench.opt.amount
   users = sysbench.opt.users
   threads = sysbench.opt.threads
   next_slot = sysbench.tid
   if sysbench.opt.design then
      design_init()
      return
   end
   stmt = {
      claim = con:prepare([[INSERT INTO idempotency_record (scope, idem_key, operation, target, fingerprint, request_body, status)
                            VALUES (?, ?, 'pay', ?, ?, '{}', 'PROCESSING')]]),
      cas = con:prepare("UPDATE orders SET status = 'PAID' WHERE id = ? AND status = 'UNPAID'"),
      record = con:prepare("INSERT INTO pay_record (order_id, user_id, amount, currency, idem_key) VALUES (?, ?, ?, 'EUR', ?)"),
      debit = con:prepare("UPDATE account SET balance = balance - ? WHERE user_id = ? AND currency = 'EUR' AND balance >= ?"),
      -- Single-row VALUES, not INSERT ... SELECT: InnoDB takes a table-level AUTO-INC lock for the
      -- statement of an INSERT ... SELECT (a bulk insert), which concurrent pays queue on.
      entry = con:prepare([[INSERT INTO account_entry (user_id, delta, balance_after, ref_type, ref_id)
                            VALUES (?, ?, (SELECT balance FROM account WHERE user_id = ?), 'PAYMENT', (SELECT id FROM pay_record WHERE order_id = ?))]]),
      event = con:prepare([[INSERT INTO outbox_event (event_id, event_type, user_id, ref_id, idem_key, payload)
                            VALUES (UUID(), 'payment.succeeded', ?, (SELECT id FROM pay_record WHERE order_id = ?), ?,
                                    CONCAT('{"eventId":"', UUID(), '","type":"payment.succeeded","userId":"', ?, '","orderId":', ?,
                                           ',"ref":"', (SELECT id FROM pay_record WHERE order_id = ?), '","amount":', ?,
                                           ',"currency":"EUR","idempotencyKey":"', ?, '"}'))]]),
      store = con:prepare([[UPDATE idempotency_record SET status = 'DONE', http_status = 201, response_body = '{}'
                            WHERE scope = ? AND idem_key = ?]]),
   }
   p = {}
   p.claim = {stmt.claim:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.claim:bind_create(sysbench.sql.type.VARCHAR, 64),
              stmt.claim:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.claim:bind_create(sysbench.sql.type.VARCHAR, 64)}
   stmt.claim:bind_param(unpack(p.claim))
   p.cas = stmt.cas:bind_create(sysbench.sql.type.BIGINT)
   stmt.cas:bind_param(p.cas)
   p.record = {stmt.record:bind_create(sysbench.sql.type.BIGINT), stmt.record:bind_create(sysbench.sql.type.VARCHAR, 64),
               stmt.record:bind_create(sysbench.sql.type.BIGINT), stmt.record:bind_create(sysbench.sql.type.VARCHAR, 64)}
   stmt.record:bind_param(unpack(p.record))
   p.debit = {stmt.debit:bind_create(sysbench.sql.type.BIGINT), stmt.debit:bind_create(sysbench.sql.type.VARCHAR, 64),
              stmt.debit:bind_create(sysbench.sql.type.BIGINT)}
   stmt.debit:bind_param(unpack(p.debit))
   p.entry = {stmt.entry:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.entry:bind_create(sysbench.sql.type.BIGINT),
              stmt.entry:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.entry:bind_create(sysbench.sql.type.BIGINT)}
   stmt.entry:bind_param(unpack(p.entry))
   p.event = {stmt.event:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.event:bind_create(sysbench.sql.type.BIGINT),
              stmt.event:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.event:bind_create(sysbench.sql.type.VARCHAR, 64),
              stmt.event:bind_create(sysbench.sql.type.BIGINT), stmt.event:bind_create(sysbench.sql.type.BIGINT),
              stmt.event:bind_create(sysbench.sql.type.BIGINT), stmt.event:bind_create(sysbench.sql.type.VARCHAR, 64)}
   stmt.event:bind_param(unpack(p.event))
   p.store = {stmt.store:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.store:bind_create(sysbench.sql.type.VARCHAR, 64)}
   stmt.store:bind_param(unpack(p.store))
end

-- payonce's statements, as its repositories write them (the payment id reaches the ledger line and
-- the event as LAST_INSERT_ID and a subquery, where payonce carries it from the INSERT's answer; a
-- pay's answer has no Location, bound as NULL by payonce and written as NULL here).
function design_init()
   local V, B = sysbench.sql.type.VARCHAR, sysbench.sql.type.BIGINT
   local function prepared(sql, ...)
      local statement = con:prepare(sql)
      local params = {}
      for i, kind in ipairs({...}) do
         params[i] = kind == B and statement:bind_create(B) or statement:bind_create(V, kind)
      end
      statement:bind_param(unpack(params))
      return {statement = statement, params = params}
   end
   design = {
      order = prepared([[SELECT o.id, o.order_sn, o.user_id, o.amount, o.currency, o.status, o.refunded_amount, o.created_at, o.updated_at,
                                r.operation AS record_operation, r.target AS record_target, r.fingerprint AS record_fingerprint,
                                r.request_body AS record_request_body, r.status AS record_status, r.http_status AS record_http_status,
                                r.response_body AS record_response_body, r.response_location AS record_response_location
                         FROM orders o LEFT JOIN idempotency_record r ON r.scope = ? AND r.idem_key = ? WHERE o.id = ?]], 64, 64, B),
      claim = prepared([[INSERT INTO idempotency_record (scope, idem_key, operation, target, fingerprint, request_body, status)
                         VALUES (?, ?, ?, ?, ?, ?, 'PROCESSING')]], 64, 64, 16, 64, 64, 16),
      cas = prepared("UPDATE orders SET status = ? WHERE id = ? AND status = ?", 16, B, 16),
      record = prepared("INSERT INTO pay_record (order_id, user_id, amount, currency, idem_key) VALUES (?, ?, ?, ?, ?)", B, 64, B, 3, 64),
      debit = prepared("UPDATE account SET balance = balance - ? WHERE user_id = ? AND currency = ? AND balance >= ?", B, 64, 3, B),
      entry = prepared([[INSERT INTO account_entry (user_id, delta, balance_after, ref_type, ref_id)
                         VALUES (?, ?, (SELECT balance FROM account WHERE user_id = ?), ?, LAST_INSERT_ID())]], 64, B, 64, 16),
      event = prepared([[INSERT INTO outbox_event (event_id, event_type, user_id, ref_id, idem_key, payload)
                         VALUES (?, ?, ?, (SELECT id FROM pay_record WHERE order_id = ?), ?, ?)]], 36, 32, 64, B, 64, 512),
      store = prepared([[UPDATE idempotency_record SET status = 'DONE', http_status = ?, response_body = ?, response_location = NULL
                         WHERE scope = ? AND idem_key = ?]], B, 512, 64, 64),
   }
   redis_fd = redis_connect(sysbench.opt.redis_port)
   release_sha = redis(redis_fd, "SCRIPT", "LOAD", RELEASE_LOCK):match("\r\n(%x+)\r\n")
end

local function run(step, ...)
   for i, value in ipairs({...}) do
      step.params[i]:set(value)
   end
   step.statement:execute()
end

local function design_pay(order, user, key)
   local target = "order:" .. order
   local lock = "payonce:lock:{order:" .. order .. "}"
   local owner = string.format("%08x-0000-4000-8000-%012x", sysbench.tid, order)
   run(design.order, user, key, order)
   assert(redis(redis_fd, "SET", lock, owner, "NX", "PX", "5000") == "+OK\r\n", "the lock was taken")
   con:query("BEGIN")
   run(design.claim, user, key, "pay", target, string.rep("0", 64), "null")
   run(design.cas, "PAID", order, "UNPAID")
   run(design.record, order, user, amount, "EUR", key)
   run(design.debit, amount, user, "EUR", amount)
   run(design.entry, user, -amount, user, "PAYMENT")
   local event_id = string.format("%08x-0000-4000-8000-%012x", sysbench.tid + 65536, order)
   run(design.event, event_id, "payment.succeeded", user, order, key, string.format(
      '{"eventId":"%s","type":"payment.succeeded","userId":"%s","orderId":%d,"ref":"%d","amount":%d,"currency":"EUR","idempotencyKey":"%s"}',
      event_id, user, order, order, amount, key))
   run(design.store, 201, string.format('{"paymentId":%d,"orderId":%d,"amount":%d,"currency":"EUR"}', order, order, amount), user, key)
   con:query("COMMIT")
   redis(redis_fd, "EVALSHA", release_sha, "1", lock, owner)
end

-- A fresh key per pay, as every first pay has.
function event()
   if next_slot >= count then
      error("ran out of seeded orders: seed more for this duration")
   end
   local order = first + next_slot * step
   local user = "bench-" .. (next_slot % users)
   next_slot = next_slot + threads
   local key = string.format("ceiling-%d-%d", order, sysbench.tid)
   if sysbench.opt.design then
      return design_pay(order, user, key)
   end
   con:query("BEGIN")
   p.claim[1]:set(user); p.claim[2]:set(key); p.claim[3]:set("order:" .. order); p.claim[4]:set(string.rep("0", 64))
   stmt.claim:execute()
   p.cas:set(order)
   stmt.cas:execute()
   p.record[1]:set(order); p.record[2]:set(user); p.record[3]:set(amount); p.record[4]:set(key)
   stmt.record:execute()
   p.debit[1]:set(amount); p.debit[2]:set(user); p.debit[3]:set(amount)
   stmt.debit:execute()
   p.entry[1]:set(user); p.entry[2]:set(-amount); p.entry[3]:set(user); p.entry[4]:set(order)
   stmt.entry:execute()
   p.event[1]:set(user); p.event[2]:set(order); p.event[3]:set(key); p.event[4]:set(user)
   p.event[5]:set(order); p.event[6]:set(order); p.event[7]:set(amount); p.event[8]:set(key)
   stmt.event:execute()
   p.store[1]:set(user); p.store[2]:set(key)
   stmt.store:execute()
   con:query("COMMIT")
end

function thread_done()
   if redis_fd then
      ffi.C.close(redis_fd)
   end
   con:disconnect()
end
