-- sysbench script for bench/run.sh: the ceiling, the minimal correct pay transaction with the same
-- guarantees as payonce's, driven by a warm generator written in C that costs the machine little.
--   claim the key, compare-and-set the order UNPAID -> PAID, record the payment (UNIQUE(order_id)),
--   debit the account only if the balance covers it, write the ledger line and the event (outbox),
--   store the answer, COMMIT.
-- Each thread pays its own share of the orders seeded for this run: ids first_order .. first_order +
-- orders - 1 (PayBench seed-orders), thread t taking first_order + t, + t + threads, ...; order
-- first_order + i belongs to user bench-<i mod users>, as the seeding spreads them.
--
--   sysbench bench/ceiling.lua --mysql-host=127.0.0.1 --mysql-db=... --threads=N --time=S \
--       --first_order=ID --orders=N --amount=100 run

sysbench.cmdline.options = {
   first_order = {"id of the first seeded order", 0},
   orders = {"how many orders were seeded", 0},
   users = {"how many users the orders are spread over", 2000},
   amount = {"the amount of every seeded order", 100},
}

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   con:query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
   first = sysbench.opt.first_order
   count = sysbench.opt.orders
   amount = sysbench.opt.amount
   users = sysbench.opt.users
   threads = sysbench.opt.threads
   next_slot = sysbench.tid
   stmt = {
      claim = con:prepare([[INSERT INTO idempotency_record (scope, idem_key, operation, target, fingerprint, request_body, status)
                            VALUES (?, ?, 'pay', ?, ?, '{}', 'PROCESSING')]]),
      cas = con:prepare("UPDATE orders SET status = 'PAID' WHERE id = ? AND status = 'UNPAID'"),
      record = con:prepare("INSERT INTO pay_record (order_id, user_id, amount, currency, idem_key) VALUES (?, ?, ?, 'EUR', ?)"),
      debit = con:prepare("UPDATE account SET balance = balance - ? WHERE user_id = ? AND currency = 'EUR' AND balance >= ?"),
      entry = con:prepare([[INSERT INTO account_entry (user_id, delta, balance_after, ref_type, ref_id)
                            SELECT user_id, ?, balance, 'PAYMENT', (SELECT id FROM pay_record WHERE order_id = ?) FROM account WHERE user_id = ?]]),
      event = con:prepare([[INSERT INTO outbox_event (event_id, event_type, user_id, ref_id, idem_key, payload)
                            SELECT UUID(), 'payment.succeeded', user_id, id, idem_key,
                                   CONCAT('{"eventId":"', UUID(), '","type":"payment.succeeded","userId":"', user_id, '","orderId":',
                                          order_id, ',"ref":"', id, '","amount":', amount, ',"currency":"EUR","idempotencyKey":"', idem_key, '"}')
                            FROM pay_record WHERE order_id = ?]]),
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
   p.entry = {stmt.entry:bind_create(sysbench.sql.type.BIGINT), stmt.entry:bind_create(sysbench.sql.type.BIGINT),
              stmt.entry:bind_create(sysbench.sql.type.VARCHAR, 64)}
   stmt.entry:bind_param(unpack(p.entry))
   p.event = stmt.event:bind_create(sysbench.sql.type.BIGINT)
   stmt.event:bind_param(p.event)
   p.store = {stmt.store:bind_create(sysbench.sql.type.VARCHAR, 64), stmt.store:bind_create(sysbench.sql.type.VARCHAR, 64)}
   stmt.store:bind_param(unpack(p.store))
end

-- A fresh key per pay, as every first pay has.
function event()
   if next_slot >= count then
      error("ran out of seeded orders: seed more for this duration")
   end
   local order = first + next_slot
   next_slot = next_slot + threads
   local user = "bench-" .. ((order - first) % users)
   local key = string.format("ceiling-%d-%d", order, sysbench.tid)
   con:query("BEGIN")
   p.claim[1]:set(user); p.claim[2]:set(key); p.claim[3]:set("order:" .. order); p.claim[4]:set(string.rep("0", 64))
   stmt.claim:execute()
   p.cas:set(order)
   stmt.cas:execute()
   p.record[1]:set(order); p.record[2]:set(user); p.record[3]:set(amount); p.record[4]:set(key)
   stmt.record:execute()
   p.debit[1]:set(amount); p.debit[2]:set(user); p.debit[3]:set(amount)
   stmt.debit:execute()
   p.entry[1]:set(-amount); p.entry[2]:set(order); p.entry[3]:set(user)
   stmt.entry:execute()
   p.event:set(order)
   stmt.event:execute()
   p.store[1]:set(user); p.store[2]:set(key)
   stmt.store:execute()
   con:query("COMMIT")
end

function thread_done()
   con:disconnect()
end
