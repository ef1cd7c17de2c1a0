/**
 * The four Lua scripts of `RedisIdempotencyStore`, one per operation of `IdempotencyStore`, so
 * each operation is one `EVALSHA`: one round trip, and atomic, since Redis runs a script to the
 * end before it serves any other command.
 *
 * A record is a hash under one key:
 *
 * | field | holds |
 * |---|---|
 * | `s` | `claimed` or `completed` |
 * | `f` | the fingerprint |
 * | `o` | the owner token |
 * | `l` | `leaseExpiresAt` (ms) |
 * | `e` | `expiresAt` (ms), once checkpointed or completed |
 * | `p` | the recovery point, if any |
 * | `r` | the response, as `encodeStoredResponse` text (body in base64: binary-safe) |
 *
 * Times arrive as decimal strings written by JavaScript and are stored as those same strings, so
 * no Lua number is ever formatted back into a stored time (Lua 5.1's `tostring` keeps only 14
 * significant digits). They are compared as Lua numbers (IEEE doubles, like JavaScript
 * numbers), which is exact for every integer up to 2^53 ms. The only number formatted in Lua
 * is a `PEXPIRE` duration, with `%.0f` after `math.ceil`: exact.
 *
 * Expiry is decided by the `now` argument only. `PEXPIRE` sets the key's time to live to the
 * logical time left (relative to `now`, never to the server's clock) plus a grace period: that
 * is garbage collection, and a record is never dropped before its logical end, even by an
 * instance whose clock runs up to the grace period behind.
 *
 * @module
 */
import type { LuaScript } from './script.ts'
import { luaScript } from './script.ts'

/** Sets the key's time to live to cover `endsAt` (ms, on the caller's clock) plus the grace. */
const KEEP = `
local function keep(key, endsAt, now, grace)
  local ttl = math.ceil(endsAt - now + grace)
  if ttl < 1 then ttl = 1 end
  redis.call('PEXPIRE', key, string.format('%.0f', ttl))
end
`

/**
 * KEYS: record. ARGV: fingerprint, owner, now, leaseExpiresAt (now + leaseMs), graceMs.
 * Replies `{'claimed'}`, `{'claimed', point}`, `{'in-flight', leaseExpiresAt}`,
 * `{'completed', response}` or `{'mismatch'}`: the table of `IdempotencyStore.claim`.
 */
export const CLAIM: LuaScript = luaScript(`${KEEP}
local key = KEYS[1]
local fingerprint, owner, lease = ARGV[1], ARGV[2], ARGV[4]
local now, grace = tonumber(ARGV[3]), tonumber(ARGV[5])
local r = redis.call('HMGET', key, 's', 'f', 'l', 'e', 'p', 'r')
local state, leaseEnd, expiresAt, point = r[1], tonumber(r[3]), tonumber(r[4]), r[5]
-- The record's logical state at now (see IdempotencyStore): nil stands for absent.
local logical = nil
if state == 'completed' then
  if expiresAt > now then logical = 'completed' end
elseif state == 'claimed' then
  if leaseEnd > now then
    logical = 'live'
  elseif point and expiresAt > now then
    logical = 'resumable'
  end
end
if logical == nil then
  -- Absent (or expired but not yet collected): a fresh live claim replaces whatever is there
  -- (a new key, the usual case, has nothing to delete).
  if state then redis.call('DEL', key) end
  redis.call('HSET', key, 's', 'claimed', 'f', fingerprint, 'o', owner, 'l', lease)
  keep(key, tonumber(lease), now, grace)
  return {'claimed'}
end
if r[2] ~= fingerprint then return {'mismatch'} end
if logical == 'completed' then return {'completed', r[6]} end
if logical == 'live' then return {'in-flight', r[3]} end
-- Resumable, same fingerprint: a new owner and lease; the point and expiresAt stay.
redis.call('HSET', key, 'o', owner, 'l', lease)
keep(key, math.max(tonumber(lease), expiresAt), now, grace)
return {'claimed', point}
`)

/**
 * KEYS: record. ARGV: owner, now, expiresAt (now + retentionMs), response, graceMs.
 * Replies `'1'` when the live claim of `owner` became completed, else `'0'`.
 */
export const COMPLETE: LuaScript = luaScript(`${KEEP}
local key = KEYS[1]
local now, grace = tonumber(ARGV[2]), tonumber(ARGV[5])
local r = redis.call('HMGET', key, 's', 'o', 'l', 'p')
if r[1] ~= 'claimed' or r[2] ~= ARGV[1] or not (tonumber(r[3]) > now) then return '0' end
if r[4] then redis.call('HDEL', key, 'p') end
redis.call('HSET', key, 's', 'completed', 'e', ARGV[3], 'r', ARGV[4])
keep(key, tonumber(ARGV[3]), now, grace)
return '1'
`)

/**
 * KEYS: record. ARGV: owner. Replies `'1'` when a claim of `owner` was found: deleted, or its
 * lease ended (`l = 0`) when it carries a recovery point; else `'0'`. The time to live is left
 * as it is: it already covers `expiresAt`, which is all a resumable record still needs.
 */
export const RELEASE: LuaScript = luaScript(`
local key = KEYS[1]
local r = redis.call('HMGET', key, 's', 'o', 'p')
if r[1] ~= 'claimed' or r[2] ~= ARGV[1] then return '0' end
if r[3] then
  redis.call('HSET', key, 'l', '0')
else
  redis.call('DEL', key)
end
return '1'
`)

/**
 * KEYS: record. ARGV: owner, now, recoveryPoint, expiresAt (now + retentionMs), graceMs.
 * Replies `'1'` when the live claim of `owner` got the recovery point, else `'0'`.
 */
export const CHECKPOINT: LuaScript = luaScript(`${KEEP}
local key = KEYS[1]
local now, grace = tonumber(ARGV[2]), tonumber(ARGV[5])
local r = redis.call('HMGET', key, 's', 'o', 'l')
if r[1] ~= 'claimed' or r[2] ~= ARGV[1] or not (tonumber(r[3]) > now) then return '0' end
redis.call('HSET', key, 'p', ARGV[3], 'e', ARGV[4])
keep(key, math.max(tonumber(r[3]), tonumber(ARGV[4])), now, grace)
return '1'
`)
