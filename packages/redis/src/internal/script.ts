/**
 * Lua scripts run by digest: `EVALSHA` first, and `EVAL` with the source only when the server
 * answers `NOSCRIPT` (after a restart, a failover to a replica that never saw the script, or
 * `SCRIPT FLUSH`). `EVAL` puts the script back in the server's cache, so the fallback costs one
 * extra round trip once per server, and every later call is one `EVALSHA` again. This is what
 * node-redis does for scripts declared with `defineScript`; it is done here because those must be
 * registered when the client is created, and the stores accept a client the caller created.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { RedisScriptClient } from '../client.ts'

/** A Lua script and the SHA1 digest of its source, by which `EVALSHA` names it. */
export interface LuaScript {
  readonly source: string
  readonly sha1: string
}

/** Prepares a script: computes its digest once, when the module loads. */
export function luaScript(source: string): LuaScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

/** Runs `script` with `EVALSHA`, falling back to `EVAL` on `NOSCRIPT`. */
export async function runScript(
  client: RedisScriptClient,
  script: LuaScript,
  keys: string[],
  args: string[],
): Promise<unknown> {
  const call = { keys, arguments: args }
  try {
    return await client.evalSha(script.sha1, call)
  } catch (error) {
    if (!isNoScript(error)) throw error
    return await client.eval(script.source, call)
  }
}

const decoder = new TextDecoder()

/**
 * A bulk string of a reply as text. node-redis answers strings by default and Buffers when the
 * caller mapped blob strings to Buffer (`withTypeMapping`); both are accepted.
 */
export function replyText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (value instanceof Uint8Array) return decoder.decode(value)
  return undefined
}

/** The elements of an array reply, each as text (`undefined` for a nil or another type). */
export function replyTexts(value: unknown): (string | undefined)[] | undefined {
  return Array.isArray(value) ? value.map(replyText) : undefined
}
