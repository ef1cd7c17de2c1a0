/**
 * What the stores need from a Redis client, as a structural interface: run a Lua script by its
 * SHA1 digest (`EVALSHA`) or by its source (`EVAL`). The client that node-redis's
 * `createClient()` returns satisfies it, and so do `createCluster()` and `createSentinel()`
 * (every script touches one key, named in `keys`, so a cluster routes it to the key's slot).
 * The caller creates, connects, observes and closes the client; a store never opens a
 * connection of its own.
 *
 * @module
 */

/**
 * The keys and arguments of one script call, as node-redis's `evalSha` and `eval` take them.
 *
 * @example
 * ```ts
 * const call: RedisScriptCall = { keys: ['api-blocks:idempotency:abc'], arguments: ['owner-1'] }
 * await client.evalSha(sha1, call)
 * ```
 */
export interface RedisScriptCall {
  /** The keys the script reads and writes (`KEYS` in Lua). */
  keys: string[]
  /** The other arguments (`ARGV` in Lua), as strings. */
  arguments: string[]
}

/**
 * A Redis client that can run Lua scripts: a connected node-redis client, cluster or sentinel,
 * or an adapter over another client.
 *
 * A rejection whose message starts with `NOSCRIPT` (the server's reply when its script cache
 * does not hold the digest) makes the store send the source with `eval` instead, which also
 * caches it on the server again.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const scripts: RedisScriptClient = client
 * ```
 */
export interface RedisScriptClient {
  /** `EVALSHA sha1 numkeys key… arg…`: resolves with the script's reply. */
  evalSha(sha1: string, call: RedisScriptCall): Promise<unknown>
  /** `EVAL script numkeys key… arg…`: resolves with the script's reply. */
  eval(script: string, call: RedisScriptCall): Promise<unknown>
}
