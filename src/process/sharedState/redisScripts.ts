/**
 * The Lua scripts the {@link RedisStateStore} (./redisStateStore.ts) runs. Each changes a map's
 * hash, its expiry set and the change log in one atomic step, so the log's order is the order of
 * the hash's changes. Expiries are scored with Redis's own `TIME` (ms), never a node's clock.
 * Every key a script touches is passed in `KEYS` and shares the namespace's hash tag, so the
 * scripts run in a Redis Cluster too.
 */
export const REDIS_SCRIPTS = {
  /**
   * KEYS: hash, expiries, log, touched. ARGV: map, key, JSON value, node, log length, TTL (ms, 0:
   * none), republish (`1` or `0`). Returns the log id, or nil for a republication that is skipped:
   * a node writing back its replica after Redis lost its data never replaces a key that is in the
   * hash or was written (or deleted) since the data was lost, so a stale copy never undoes a newer
   * write of another node.
   */
  set: `
local member = ARGV[1] .. '\\0' .. ARGV[2]
if ARGV[7] == '1' and (redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 or redis.call('SISMEMBER', KEYS[4], member) == 1) then
  return false
end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
local ttl = tonumber(ARGV[6])
if ttl > 0 then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[2], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl, ARGV[2])
else
  redis.call('ZREM', KEYS[2], ARGV[2])
end
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('SADD', KEYS[4], member)
end
return redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'm', ARGV[1], 'k', ARGV[2], 'v', ARGV[3], 'n', ARGV[4])
`,
  /** KEYS: hash, expiries, log, touched. ARGV: map, key, node, log length. Returns the log id. */
  delete: `
redis.call('HDEL', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('SADD', KEYS[4], ARGV[1] .. '\\0' .. ARGV[2])
end
return redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[4], '*', 'm', ARGV[1], 'k', ARGV[2], 'n', ARGV[3])
`,
  /** KEYS: hash, expiries, log. ARGV: map, node, log length. Removes up to 1,000 expired keys; returns how many. */
  sweep: `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
for _, k in ipairs(expired) do
  redis.call('HDEL', KEYS[1], k)
  redis.call('ZREM', KEYS[2], k)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[1], 'k', k, 'n', ARGV[2])
end
return #expired
`,
  /**
   * KEYS: epoch, touched. ARGV: a new epoch, the touched set's lifetime (ms). Returns the
   * namespace's epoch, set to ARGV[1] when missing (a new or emptied Redis); a new epoch starts the
   * touched set (map name, NUL and key of every write from then on, for `set`'s republication test), which
   * expires after ARGV[2] ms so its memory is bounded.
   */
  epoch: `
local e = redis.call('GET', KEYS[1])
if not e then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
  redis.call('SADD', KEYS[2], '')
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  e = ARGV[1]
end
return e
`,
} as const;

/** Orders two Redis Stream ids (`<ms>-<seq>`): negative, zero or positive. */
export function compareStreamIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}
