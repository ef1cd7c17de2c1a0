/**
 * The Lua scripts of `RedisOAuthStore`, one per method of `OAuthStore`, so each method is one
 * `EVALSHA`: one round trip, and atomic, since Redis runs a script to the end before it serves
 * any other command.
 *
 * Keys (after the store's prefix; `F` is a family id, in braces: a cluster hash tag, so a family
 * and all its tokens live in one slot and one script can touch them together):
 *
 * | key | type | fields |
 * |---|---|---|
 * | `i:<id>` | hash | `r` the interaction (JSON), `e` its `expiresAt` |
 * | `c:<codeHash>` | hash | `r` the code (JSON), `e` its `expiresAt`, `u` how many times it was consumed |
 * | `f:{F}` | hash | `r` the family (JSON, absent for a mark made before the family), `e` its `expiresAt`, `x` `1` when revoked, `m` the mark's `retainUntil` |
 * | `t:{F}:<tokenHash>` | hash | `r` the token (JSON), `e` its `expiresAt`, `k` its kind, `o` when it was rotated, `v` `1` when revoked |
 * | `r:<key>` | string | the remembered key's `expiresAt` |
 *
 * Times arrive as decimal strings written by JavaScript and are stored as those same strings,
 * so no Lua number is ever formatted back into a stored time (Lua 5.1's `tostring` keeps only 14
 * significant digits), except `m` after a reuse, written with `%.0f` (exact for integers up to
 * 2^53). They are compared as Lua numbers (IEEE doubles, like JavaScript numbers).
 *
 * Expiry is decided by the `now` argument only: a record with `e <= now` is absent. `PEXPIRE`
 * sets a key's time to live to the logical time left (relative to `now`, never the server's
 * clock) plus a grace period: garbage collection only, and never shortened by a script.
 *
 * @module
 */
import type { LuaScript } from './script.ts'
import { luaScript } from './script.ts'

/**
 * `keep(key, endsAt, now, grace)`: the key lives at least until `endsAt` (ms, on the caller's
 * clock) plus the grace; a longer time to live already set is kept.
 */
const KEEP = `
local function keep(key, endsAt, now, grace)
  local ttl = math.ceil(endsAt - now + grace)
  if ttl < 1 then ttl = 1 end
  local current = redis.call('PTTL', key)
  if current < 0 or current < ttl then
    redis.call('PEXPIRE', key, string.format('%.0f', ttl))
  end
end
`

/**
 * `save(key, json, expiresAt, now, grace, ...)`: replaces the key with a fresh record hash
 * (fields `r`, `e`, then the extra field-value pairs) living until `expiresAt`.
 */
const SAVE = `${KEEP}
local function save(key, json, expiresAt, now, grace, ...)
  redis.call('DEL', key)
  redis.call('HSET', key, 'r', json, 'e', expiresAt, ...)
  keep(key, tonumber(expiresAt), now, grace)
end
`

/** KEYS: interaction or code. ARGV: record JSON, expiresAt, now, graceMs. Replies 1. */
export const SAVE_RECORD: LuaScript = luaScript(`${SAVE}
save(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
return 1
`)

/**
 * KEYS: interaction. ARGV: now, take (`1` to delete it). Replies the interaction's JSON, or nil
 * when it is absent or expired.
 */
export const FIND_INTERACTION: LuaScript = luaScript(`
local r = redis.call('HMGET', KEYS[1], 'r', 'e')
if not r[1] then return false end
if tonumber(r[2]) <= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return false
end
if ARGV[2] == '1' then redis.call('DEL', KEYS[1]) end
return r[1]
`)

/**
 * KEYS: code. ARGV: now. Replies `{'consumed', json}`, `{'replayed', json}` or `{'absent'}`.
 * A consumed code keeps its key (and time to live) until it expires.
 */
export const CONSUME_CODE: LuaScript = luaScript(`
local r = redis.call('HMGET', KEYS[1], 'r', 'e')
if not r[1] or tonumber(r[2]) <= tonumber(ARGV[1]) then return {'absent'} end
if redis.call('HINCRBY', KEYS[1], 'u', 1) == 1 then return {'consumed', r[1]} end
return {'replayed', r[1]}
`)

/**
 * Saves the tokens given in ARGV from index `firstArg`, three values each (JSON, expiresAt,
 * kind), under KEYS from index 2 or 3 on; a token key that exists already is left as it is.
 */
const SAVE_TOKENS = `${SAVE}
local function saveTokens(firstKey, firstArg, now, grace)
  for index = firstKey, #KEYS do
    -- A token already stored is left as it was (rotated or revoked included).
    if redis.call('EXISTS', KEYS[index]) == 0 then
      local at = firstArg + (index - firstKey) * 3
      save(KEYS[index], ARGV[at], ARGV[at + 1], now, grace, 'k', ARGV[at + 2])
    end
  end
end
`

/**
 * KEYS: family, then one per token. ARGV: now, graceMs, family JSON, family expiresAt, then
 * JSON, expiresAt and kind of each token. Replies `issued` or `revoked` (and then saves
 * nothing). An existing family is left as it is, unless it is past both its end and its mark's
 * `retainUntil`: then it is gone, and made anew.
 */
export const ISSUE: LuaScript = luaScript(`${SAVE_TOKENS}
local family = KEYS[1]
local now, grace = tonumber(ARGV[1]), tonumber(ARGV[2])
local f = redis.call('HMGET', family, 'r', 'x', 'e', 'm')
if f[1] or f[2] then
  -- Past the family's end and its mark's retainUntil the entry is gone: made anew.
  local ends = -math.huge
  if f[3] then ends = tonumber(f[3]) end
  if f[4] and tonumber(f[4]) > ends then ends = tonumber(f[4]) end
  if ends <= now then
    redis.call('DEL', family)
    f = {false, false}
  end
end
if f[2] == '1' then return 'revoked' end
if not f[1] then
  redis.call('HSET', family, 'r', ARGV[3], 'e', ARGV[4])
  keep(family, tonumber(ARGV[4]), now, grace)
end
saveTokens(2, 5, now, grace)
return 'issued'
`)

/**
 * KEYS: family, token. ARGV: now. Replies `{familyJson, tokenJson}` when the token is active,
 * else nil.
 */
export const FIND_TOKEN: LuaScript = luaScript(`
local now = tonumber(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'r', 'e', 'x')
if not f[1] or f[3] == '1' or tonumber(f[2]) <= now then return false end
local t = redis.call('HMGET', KEYS[2], 'r', 'e', 'o', 'v')
if not t[1] or t[3] or t[4] == '1' or tonumber(t[2]) <= now then return false end
return {f[1], t[1]}
`)

/**
 * KEYS: family, token, then one per new token. ARGV: now, the grace window (graceMs of the
 * call), the key grace (ttlGraceMs), then JSON, expiresAt and kind of each new token. Replies
 * `{'rotated', familyJson}`, `{'reused', familyJson}` (the family is now revoked),
 * `{'reused-in-grace'}`, `{'revoked'}`, `{'expired'}` or `{'absent'}`, checked in that order of
 * the conformance suite: absent, expired, rotated before (reuse), revoked, else rotate.
 */
export const ROTATE_REFRESH: LuaScript = luaScript(`${SAVE_TOKENS}
local family, token = KEYS[1], KEYS[2]
local now, window, grace = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local f = redis.call('HMGET', family, 'r', 'e', 'x', 'm')
local t = redis.call('HMGET', token, 'r', 'e', 'k', 'o', 'v')
if not f[1] or not t[1] or t[3] ~= 'refresh_token' then return {'absent'} end
local familyEnd = tonumber(f[2])
if familyEnd <= now or tonumber(t[2]) <= now then return {'expired'} end
if t[4] then
  -- A window of 0 is off, even for a now before the rotation (a clock running behind).
  if window > 0 and now < tonumber(t[4]) + window then return {'reused-in-grace'} end
  -- RFC 9700 section 4.14.2: a rotated refresh token presented again revokes the whole grant.
  local retain = familyEnd
  if f[4] and tonumber(f[4]) > retain then retain = tonumber(f[4]) end
  redis.call('HSET', family, 'x', '1', 'm', string.format('%.0f', retain))
  keep(family, retain, now, grace)
  return {'reused', f[1]}
end
if f[3] == '1' or t[5] == '1' then return {'revoked'} end
redis.call('HSET', token, 'o', ARGV[1])
saveTokens(3, 4, now, grace)
return {'rotated', f[1]}
`)

/** KEYS: token. Marks it revoked when it exists (an unknown token gets no key). Replies 1. */
export const REVOKE_TOKEN: LuaScript = luaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'v', '1') end
return 1
`)

/**
 * KEYS: family. ARGV: now, retainUntil, graceMs. Marks the family revoked, whether or not it
 * exists yet, and keeps the mark until the later of retainUntil and any earlier mark (and at
 * least as long as the family). Replies 1.
 */
export const REVOKE_FAMILY: LuaScript = luaScript(`${KEEP}
local family = KEYS[1]
local now, grace = tonumber(ARGV[1]), tonumber(ARGV[3])
local f = redis.call('HMGET', family, 'e', 'm')
local retain = ARGV[2]
if f[2] and tonumber(f[2]) > tonumber(retain) then retain = f[2] end
redis.call('HSET', family, 'x', '1', 'm', retain)
local endsAt = tonumber(retain)
if f[1] and tonumber(f[1]) > endsAt then endsAt = tonumber(f[1]) end
keep(family, endsAt, now, grace)
return 1
`)

/**
 * KEYS: remembered key. ARGV: now, expiresAt, graceMs. Replies 1 when the key was not
 * remembered at now (and remembers it until expiresAt), else 0.
 */
export const REMEMBER: LuaScript = luaScript(`
local now = tonumber(ARGV[1])
local seen = redis.call('GET', KEYS[1])
if seen and tonumber(seen) > now then return 0 end
local ttl = math.ceil(tonumber(ARGV[2]) - now + tonumber(ARGV[3]))
if ttl < 1 then ttl = 1 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', string.format('%.0f', ttl))
return 1
`)
