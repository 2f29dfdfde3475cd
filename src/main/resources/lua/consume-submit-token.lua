-- Consumes a submit token for its owner in one atomic step, so two clicks can never both win.
-- KEYS[1] the token, KEYS[2] its consumed marker; ARGV[1] the caller, ARGV[2] marker lifetime in ms.
-- Returns 1: consumed now by this caller; 2: consumed earlier by this caller; 0: unknown, expired or not theirs.
if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
    return 1
end
if redis.call('GET', KEYS[2]) == ARGV[1] then
    return 2
end
return 0
