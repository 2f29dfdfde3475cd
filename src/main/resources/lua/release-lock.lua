-- Releases a lock only for the owner that took it, so that a holder whose lock expired while it
-- was paused can never delete the lock a later request took since.
-- KEYS[1] the lock; ARGV[1] the owner token. Returns 1 when released, 0 when held by someone else or gone.
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
