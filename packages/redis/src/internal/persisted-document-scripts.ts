/**
 * The Lua scripts of `RedisPersistedDocumentStore`: `GET` reads a document and, when found,
 * refreshes its time to live in the same script (a document in use never expires); `SET`
 * writes it with its time to live (or none).
 *
 * @module
 */
import type { LuaScript } from './script.ts'
import { luaScript } from './script.ts'

/**
 * KEYS: the document's key. ARGV: the time to live in milliseconds ('0': none). Replies the
 * document, or nil.
 */
export const GET: LuaScript = luaScript(`
local document = redis.call('GET', KEYS[1])
if document and ARGV[1] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return document
`)

/** KEYS: the document's key. ARGV: the document, the time to live in milliseconds ('0': none). */
export const SET: LuaScript = luaScript(`
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
`)
