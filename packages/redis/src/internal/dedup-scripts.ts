/**
 * The Lua scripts of `RedisDedupStore`: `CLAIM` is `SET key 1 NX PX ttl` (the first claim of
 * an id writes it, with its time to live; a repeat finds it and writes nothing) answering 1 or
 * 0, and `RELEASE` deletes the key. Scripts rather than the plain commands so that every store
 * of this package runs through one client interface (`RedisScriptClient`: `EVALSHA`, with
 * `EVAL` on `NOSCRIPT`), which node-redis clients, clusters and sentinels all have.
 *
 * @module
 */
import type { LuaScript } from './script.ts'
import { luaScript } from './script.ts'

/** KEYS: the id's key. ARGV: the time to live in milliseconds. Replies 1 (first) or 0 (a repeat). */
export const CLAIM: LuaScript = luaScript(`
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
`)

/** KEYS: the id's key. Deletes it. */
export const RELEASE: LuaScript = luaScript(`
redis.call('DEL', KEYS[1])
return 1
`)
