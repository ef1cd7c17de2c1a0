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
 * remainder. Stored and replied numbers are written with `string.format('%.0f')`, exact for
 * any integer-valued double; Lua's `tostring` (14 significant digits) is never used.
 *
 * **Expiry.** An allowed check sets the key's `PEXPIRE` to the time until its last debt is
 * paid, relative to `now` (never the server's clock), unless the key already lives longer (a
 * policy of another limiter on the same key still carries debt).
 *
 * @module
 */
import type { LuaScript } from './script.ts'
import { luaScript } from './script.ts'

/**
 * KEYS: the key's hash. ARGV: now, cost, then five per policy: name, ticksPerMs (q),
 * emissionTicks (e), limitTicks (l), quota. Replies `{allowed ('1' or '0'), d[1], …, d[k]}`:
 * each policy's debt after the check, in ticks.
 */
export const CONSUME: LuaScript = luaScript(`
local key = KEYS[1]
local now, cost = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = (#ARGV - 2) / 5
local names, q, e, l, quota = {}, {}, {}, {}, {}
for i = 1, n do
  local at = 3 + (i - 1) * 5
  names[i] = ARGV[at]
  q[i], e[i], l[i], quota[i] =
    tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])
end
local stored = redis.call('HMGET', key, unpack(names))
-- d[i] = missing ? 0 : min(max((tat - now) * q + frac, 0), l); violated: cost > quota or d + cost * e > l
local debts = {}
local allowed = true
for i = 1, n do
  local debt = 0
  local state = stored[i]
  if state then
    local sep = string.find(state, ':', 1, true)
    local tat, frac = tonumber(string.sub(state, 1, sep - 1)), tonumber(string.sub(state, sep + 1))
    debt = math.min(math.max((tat - now) * q[i] + frac, 0), l[i])
  end
  debts[i] = debt
  if cost > quota[i] or debt + cost * e[i] > l[i] then allowed = false end
end
-- Allowed and not free: charge every policy (all or none), then keep the key until paid.
if allowed and cost > 0 then
  local fields = {}
  local ttl = 0
  for i = 1, n do
    local debt = debts[i] + cost * e[i]
    debts[i] = debt
    local frac = math.fmod(debt, q[i])
    local tat = now + (debt - frac) / q[i]
    fields[2 * i - 1] = names[i]
    fields[2 * i] = string.format('%.0f', tat) .. ':' .. string.format('%.0f', frac)
    local paidAt = tat
    if frac > 0 then paidAt = tat + 1 end
    if paidAt - now > ttl then ttl = paidAt - now end
  end
  redis.call('HSET', key, unpack(fields))
  if redis.call('PTTL', key) < ttl then
    redis.call('PEXPIRE', key, string.format('%.0f', ttl))
  end
end
local reply = {'0'}
if allowed then reply[1] = '1' end
for i = 1, n do reply[i + 1] = string.format('%.0f', debts[i]) end
return reply
`)

/** KEYS: the key's hash. Deletes it: every policy's state of the key. */
export const RESET: LuaScript = luaScript(`
redis.call('DEL', KEYS[1])
return '1'
`)
