/**
 * The Lua scripts of `RedisRateLimitStore`: `CONSUME` runs the whole multi-policy GCRA check of
 * `@api-blocks/rate-limit` (`gcraApply` in its `gcra.ts`) in one `EVALSHA`, all policies
 * charged or none, and `RESET` deletes a key.
 *
 * A key is a hash with one field per policy name, holding `"<tat>:<frac>"` (TAT = `tat +
 * frac / ticksPerMs` ms). Policies of other limiters that share the key are left as they are.
 *
 * **Exact arithmetic.** Lua 5.1 numbers are IEEE doubles, as JavaScript numbers are, and the
 * script performs the same operations in the same order as `gcraApply`, so it gets the same
 * bits. Every value stays an integer below 2^53, where doubles are exact: `compilePolicies`
 * keeps `limitTicks <= 2^51`; a debt is capped at `limitTicks` and grows by `cost * e <=
 * quota * e = limitTicks` (the `cost > quota` test comes first, and Lua's `or` short-circuits
 * as JavaScript's `||` does), so it stays below 2^52; `tat - now` is at most `limitTicks /
 * ticksPerMs` ms when positive, and when it is negative the product is negative and the debt is
 * 0 whatever its rounding; times are milliseconds since the epoch (about 2^41 today).
 * `floor(d / q)` is `(d - fmod(d, q)) / q`: `fmod` is exact and the division then has no
 * remainder. Stored numbers are written with `string.format('%.0f')`, exact for any
 * integer-valued double; Lua's `tostring` (14 significant digits) is never used. Replied numbers
 * are integer replies.
 *
 * **Expiry.** An allowed check sets the key's `PEXPIRE` to the time until its last debt is
 * paid, relative to `now` (never the server's clock), unless the key already lives longer (a
 * policy of another limiter on the same key still carries debt): `PEXPIRE … GT` on a key the
 * check found state in, `PEXPIRE … NX` on a new one, one call in either usual case.
 *
 * @module
 */
import type { LuaScript } from './script.ts'
import { luaScript } from './script.ts'

/**
 * KEYS: the key's hash. ARGV: now, cost, then five per policy: name, ticksPerMs (q),
 * emissionTicks (e), limitTicks (l), quota. Replies `{allowed (1 or 0), d[1], …, d[k]}` as
 * integers: each policy's debt after the check, in ticks. Redis converts a Lua number to an
 * integer reply with a cast to a 64-bit integer, exact for these integer-valued doubles, which
 * saves formatting them as text. Needs Redis 7.0 or later (`PEXPIRE … GT` / `NX`).
 */
export const CONSUME: LuaScript = luaScript(`
local key = KEYS[1]
local now, cost = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = (#ARGV - 2) / 5
-- One policy (the common case): the same steps as below without the tables, which saves a
-- quarter of the script's time on the server.
if n == 1 then
  local q, e, l = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local state = redis.call('HGET', key, ARGV[3])
  local debt = 0
  if state then
    local sep = string.find(state, ':', 1, true)
    debt = (tonumber(string.sub(state, 1, sep - 1)) - now) * q + tonumber(string.sub(state, sep + 1))
    if debt < 0 then debt = 0 elseif debt > l then debt = l end
  end
  if cost > tonumber(ARGV[7]) or debt + cost * e > l then return {0, debt} end
  if cost == 0 then return {1, debt} end
  debt = debt + cost * e
  local frac = math.fmod(debt, q)
  local tat = now + (debt - frac) / q
  redis.call('HSET', key, ARGV[3], string.format('%.0f:%.0f', tat, frac))
  local ttl = tat - now
  if frac > 0 then ttl = ttl + 1 end
  local ttlText = string.format('%.0f', ttl)
  if state then
    -- The key lives (this policy wrote it): extend, never shorten; GT refuses a key without
    -- an expiry, which then gets its first.
    if redis.call('PEXPIRE', key, ttlText, 'GT') == 0 and redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, ttlText)
    end
  elseif redis.call('PEXPIRE', key, ttlText, 'NX') == 0 then
    -- A new field on a key another limiter's policy keeps alive: extend, never shorten.
    redis.call('PEXPIRE', key, ttlText, 'GT')
  end
  return {1, debt}
end
local names = {}
for i = 1, n do names[i] = ARGV[(i - 1) * 5 + 3] end
local stored = redis.call('HMGET', key, unpack(names))
-- d[i] = missing ? 0 : min(max((tat - now) * q + frac, 0), l); violated: cost > quota or d + cost * e > l
local reply = {1}
local allowed = true
for i = 1, n do
  local at = (i - 1) * 5 + 3
  local debt = 0
  local state = stored[i]
  if state then
    local sep = string.find(state, ':', 1, true)
    debt = math.min(math.max(
      (tonumber(string.sub(state, 1, sep - 1)) - now) * tonumber(ARGV[at + 1]) + tonumber(string.sub(state, sep + 1)),
      0), tonumber(ARGV[at + 3]))
  end
  reply[i + 1] = debt
  if cost > tonumber(ARGV[at + 4]) or debt + cost * tonumber(ARGV[at + 2]) > tonumber(ARGV[at + 3]) then
    allowed = false
  end
end
if not allowed then
  reply[1] = 0
  return reply
end
-- Allowed and not free: charge every policy (all or none), then keep the key until paid.
if cost > 0 then
  local fields = {}
  local ttl = 0
  for i = 1, n do
    local at = (i - 1) * 5 + 3
    local q = tonumber(ARGV[at + 1])
    local debt = reply[i + 1] + cost * tonumber(ARGV[at + 2])
    reply[i + 1] = debt
    local frac = math.fmod(debt, q)
    local tat = now + (debt - frac) / q
    fields[2 * i - 1] = names[i]
    fields[2 * i] = string.format('%.0f:%.0f', tat, frac)
    local paidAt = tat
    if frac > 0 then paidAt = tat + 1 end
    if paidAt - now > ttl then ttl = paidAt - now end
  end
  redis.call('HSET', key, unpack(fields))
  -- Extend, never shorten (another limiter's policy on the key may be owed for longer). A key
  -- this check found state in lives: GT, one call (it refuses a key without an expiry, which
  -- then gets its first). Otherwise NX gives a new key its first expiry in one call.
  local ttlText = string.format('%.0f', ttl)
  local found = false
  for i = 1, n do if stored[i] then found = true end end
  if found then
    if redis.call('PEXPIRE', key, ttlText, 'GT') == 0 and redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, ttlText)
    end
  elseif redis.call('PEXPIRE', key, ttlText, 'NX') == 0 then
    redis.call('PEXPIRE', key, ttlText, 'GT')
  end
end
return reply
`)

/** KEYS: the key's hash. Deletes it: every policy's state of the key. */
export const RESET: LuaScript = luaScript(`
redis.call('DEL', KEYS[1])
return '1'
`)
