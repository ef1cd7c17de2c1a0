/**
 * The Lua scripts of `RedisRateLimitStore`: `CONSUME` runs the whole multi-policy GCRA check of
 * `@api-blocks/rate-limit` (`gcraApply` in its `gcra.ts`) in one `EVALSHA`, all policies
 * charged or none, and `RESET` deletes a key.
 *
 * A key is a hash with one field per policy name, holding the policy's `GcraState` as 16 bytes:
 * `tat` and `frac` as two little-endian IEEE doubles, `struct.pack('<dd', tat, frac)` (TAT =
 * `tat + frac / ticksPerMs` ms). Policies of other limiters that share the key are left as they
 * are. Binary rather than text because the state is read and written on every check, and
 * `struct` (a library Redis loads into every script, as Valkey and KeyDB do) copies the bits
 * where decimal text costs a `printf` and a `strtod` per number: about a tenth of the script's
 * time. To read a field by hand: `EVAL "return {struct.unpack('<dd', redis.call('HGET',
 * KEYS[1], ARGV[1]))}" 1 <key> <policy>` (the third number is the position after them).
 *
 * **Exact arithmetic.** Lua 5.1 numbers are IEEE doubles, as JavaScript numbers are, and the
 * script performs the same operations in the same order as `gcraApply`, so it gets the same
 * bits. Every value stays an integer below 2^53, where doubles are exact: `compilePolicies`
 * keeps `limitTicks <= 2^51`, and `limitTicks` is computed here as `quota * emissionTicks`, the
 * very product `compilePolicies` computed; a debt is capped at `limitTicks` and grows by `cost *
 * e <= quota * e = limitTicks` (the `cost > quota` test comes first, and Lua's `or`
 * short-circuits as JavaScript's `||` does), so it stays below 2^52; `tat - now` is at most
 * `limitTicks / ticksPerMs` ms when positive, and when it is negative the product is negative
 * and the debt is 0 whatever its rounding; times are milliseconds since the epoch (about 2^41
 * today). `floor(d / q)` is `(d - fmod(d, q)) / q`: `fmod` is exact and the division then has
 * no remainder. The stored doubles are the computed ones, bit for bit.
 *
 * **Text in and out.** Arguments are read by arithmetic (`ARGV[1] + 0`): Lua 5.1 converts a
 * string operand with the same `strtod` as `tonumber`, once, without a function call. The TTL
 * is written with `string.format('%d')` below 2^31 ms (a C `long`, at least 32 bits on every
 * build) and `'%.0f'` above, both exact for an integer-valued double; Lua's `tostring` (14
 * significant digits) is never used. Replied numbers are integer replies: Redis casts a Lua
 * number to a 64-bit integer, exact for these integer-valued doubles.
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
 * KEYS: the key's hash. ARGV: now, cost, then four per policy: name, ticksPerMs (q),
 * emissionTicks (e), quota; `limitTicks` (l) is `quota * e` (the store refuses a policy where it
 * is not). Needs Redis 7.0 or later (`PEXPIRE … GT` / `NX`).
 *
 * Replies with integers: each policy's debt after the check, in ticks. With one policy (the
 * common case) one integer: the debt `d` when allowed, `-1 - d` when denied; a single integer
 * reply costs the server (and the client's parser) less than an array. With several, the
 * array `{allowed (1 or 0), d[1], …, d[k]}`.
 */
export const CONSUME: LuaScript = luaScript(`
local key, now, cost = KEYS[1], ARGV[1] + 0, ARGV[2] + 0
-- One policy (the common case): the same steps as below without the tables.
if #ARGV == 6 then
  local name, q, e, quota = ARGV[3], ARGV[4] + 0, ARGV[5] + 0, ARGV[6] + 0
  local l = quota * e
  local state = redis.call('HGET', key, name)
  local debt = 0
  -- 16 bytes or it is not ours (a field of the first version's text form): no debt, and the
  -- check writes it anew.
  if state and #state == 16 then
    local tat, frac = struct.unpack('<dd', state)
    debt = (tat - now) * q + frac
    if debt < 0 then debt = 0 elseif debt > l then debt = l end
  end
  if cost > quota or debt + cost * e > l then return -1 - debt end
  if cost == 0 then return debt end
  debt = debt + cost * e
  local frac = math.fmod(debt, q)
  local tat = now + (debt - frac) / q
  redis.call('HSET', key, name, struct.pack('<dd', tat, frac))
  local ttl = tat - now
  if frac > 0 then ttl = ttl + 1 end
  if ttl < 2147483648 then ttl = string.format('%d', ttl) else ttl = string.format('%.0f', ttl) end
  if state then
    -- The key lives (this policy wrote it): extend, never shorten; GT refuses a key without
    -- an expiry, which then gets its first.
    if redis.call('PEXPIRE', key, ttl, 'GT') == 0 and redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, ttl)
    end
  elseif redis.call('PEXPIRE', key, ttl, 'NX') == 0 then
    -- A new field on a key another limiter's policy keeps alive: extend, never shorten.
    redis.call('PEXPIRE', key, ttl, 'GT')
  end
  return debt
end
local n = (#ARGV - 2) / 4
local names = {}
for i = 1, n do names[i] = ARGV[4 * i - 1] end
local stored = redis.call('HMGET', key, unpack(names))
-- d[i] = missing ? 0 : min(max((tat - now) * q + frac, 0), l); violated: cost > quota or d + cost * e > l
local reply = {1}
local found = false
for i = 1, n do
  local q, e, quota = ARGV[4 * i] + 0, ARGV[4 * i + 1] + 0, ARGV[4 * i + 2] + 0
  local l = quota * e
  local debt = 0
  local state = stored[i]
  if state then found = true end
  if state and #state == 16 then
    local tat, frac = struct.unpack('<dd', state)
    debt = (tat - now) * q + frac
    if debt < 0 then debt = 0 elseif debt > l then debt = l end
  end
  reply[i + 1] = debt
  if cost > quota or debt + cost * e > l then reply[1] = 0 end
end
-- Denied, or allowed and free: nothing to write.
if reply[1] == 0 or cost == 0 then return reply end
-- Charge every policy (all or none), then keep the key until paid.
local fields = {}
local ttl = 0
for i = 1, n do
  local q, e = ARGV[4 * i] + 0, ARGV[4 * i + 1] + 0
  local debt = reply[i + 1] + cost * e
  reply[i + 1] = debt
  local frac = math.fmod(debt, q)
  local tat = now + (debt - frac) / q
  fields[2 * i - 1] = names[i]
  fields[2 * i] = struct.pack('<dd', tat, frac)
  local paidAt = tat
  if frac > 0 then paidAt = tat + 1 end
  if paidAt - now > ttl then ttl = paidAt - now end
end
redis.call('HSET', key, unpack(fields))
if ttl < 2147483648 then ttl = string.format('%d', ttl) else ttl = string.format('%.0f', ttl) end
-- Extend, never shorten (another limiter's policy on the key may be owed for longer). A key
-- this check found state in lives: GT, one call (it refuses a key without an expiry, which
-- then gets its first). Otherwise NX gives a new key its first expiry in one call.
if found then
  if redis.call('PEXPIRE', key, ttl, 'GT') == 0 and redis.call('PTTL', key) == -1 then
    redis.call('PEXPIRE', key, ttl)
  end
elseif redis.call('PEXPIRE', key, ttl, 'NX') == 0 then
  redis.call('PEXPIRE', key, ttl, 'GT')
end
return reply
`)

/** KEYS: the key's hash. Deletes it: every policy's state of the key. */
export const RESET: LuaScript = luaScript(`
redis.call('DEL', KEYS[1])
return '1'
`)
