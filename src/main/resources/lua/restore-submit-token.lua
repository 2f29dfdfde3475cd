-- Gives a consumed token back to its owner when creating the order failed for a transient reason,
-- so that the same form can be submitted again instead of being reloaded.
-- KEYS[1] the token, KEYS[2] its consumed marker; ARGV[1] the caller, ARGV[2] token lifetime in ms.
if redis.call('GET', KEYS[2]) == ARGV[1] then
    redis.call('DEL', KEYS[2])
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')
    return 1
end
return 0
