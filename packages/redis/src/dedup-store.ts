/**
 * `DedupStore` of `@api-blocks/webhooks` on Redis: one key per `webhook-id`, written with
 * `SET NX PX` (first wins, Redis expires it) and deleted on release.
 *
 * @module
 */
import type { DedupStore } from '@api-blocks/webhooks'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { CLAIM, RELEASE } from './internal/dedup-scripts.ts'
import { runScript } from './internal/script.ts'

/**
 * Options of {@link RedisDedupStore}.
 *
 * @example
 * ```ts
 * const options: RedisDedupStoreOptions = { client, prefix: 'orders-receiver:dedup:' }
 * const dedup = new RedisDedupStore(options)
 * ```
 */
export interface RedisDedupStoreOptions {
  /**
   * A connected client: `await createClient({ url }).connect()` from node-redis (a cluster or a
   * sentinel works too), or anything that implements {@link RedisScriptClient}. The store
   * never connects, reconnects or closes it; give it its timeouts (`socket.socketTimeout`,
   * `commandOptions`) and an `'error'` listener.
   */
  client: RedisScriptClient
  /** Put before every id (default `api-blocks:webhook-dedup:`). */
  prefix?: string
}

const DEFAULT_PREFIX = 'api-blocks:webhook-dedup:'
/** Ids are 1 to 256 characters (the contract of `DedupStore.claim`). */
const MAX_ID = 256

function checkId(id: string): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID) {
    throw new RangeError(`a dedup id must be 1 to ${MAX_ID} characters`)
  }
  return id
}

// An integer reply as a number (RESP2 and RESP3 answer numbers; a client mapping integers to
// strings or bigints still gives exact values); NaN for anything else.
function integerReply(value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'string' && /^[0-9]{1,16}$/.test(value)) return Number(value)
  return Number.NaN
}

/**
 * A {@link DedupStore} on Redis: the receiver's memory of the `webhook-id`s it handled, shared
 * by every instance. Passes `runDedupStoreConformance` against a real server.
 *
 * - **`claim`** is `SET <prefix><id> 1 NX PX <ttl>` in one `EVALSHA` (falling back to `EVAL`
 *   once after a server lost its script cache): one round trip, and atomic, so of concurrent
 *   claims of one id exactly one gets `true`. The TTL is Redis's own: the key disappears when
 *   it expires, and the next delivery of the id is handled again.
 * - **`release`** deletes the key, so a redelivery runs the handler again.
 * - **Failures** reject with a {@link RedisStoreError} whose `cause` is the client's error;
 *   the receiver does not run the handler, and the sender retries.
 *
 * @example
 * ```ts
 * import { RedisDedupStore } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const dedup = new RedisDedupStore({ client })
 * if (await dedup.claim('msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 86_400_000)) console.log('first delivery')
 * ```
 */
export class RedisDedupStore implements DedupStore {
  /** The client the store runs its scripts on. */
  readonly client: RedisScriptClient
  /** The prefix of every Redis key the store writes. */
  readonly prefix: string

  constructor(options: RedisDedupStoreOptions) {
    const { client, prefix = DEFAULT_PREFIX } = options
    if (typeof client?.evalSha !== 'function' || typeof client.eval !== 'function') {
      throw new TypeError('RedisDedupStore: client must have evalSha and eval (node-redis)')
    }
    if (typeof prefix !== 'string') throw new TypeError('RedisDedupStore: prefix must be a string')
    this.client = client
    this.prefix = prefix
  }

  async claim(id: string, ttlMs: number): Promise<boolean> {
    checkId(id)
    if (typeof ttlMs !== 'number' || !(ttlMs > 0) || !Number.isFinite(ttlMs)) {
      throw new RangeError(`ttlMs must be a finite number > 0, got ${String(ttlMs)}`)
    }
    let reply: unknown
    try {
      // PX takes whole milliseconds: a fraction rounds up, so a record never lives shorter.
      reply = await runScript(this.client, CLAIM, [this.prefix + id], [String(Math.ceil(ttlMs))])
    } catch (cause) {
      throw failed('claim', cause)
    }
    const claimed = integerReply(reply)
    if (claimed !== 0 && claimed !== 1) {
      throw new RedisStoreError(
        'UNEXPECTED_REPLY',
        'webhook-dedup.claim',
        'The Redis dedup store read a reply of an unknown shape (claim).',
      )
    }
    return claimed === 1
  }

  async release(id: string): Promise<void> {
    checkId(id)
    try {
      await runScript(this.client, RELEASE, [this.prefix + id], [])
    } catch (cause) {
      throw failed('release', cause)
    }
  }
}

function failed(operation: string, cause: unknown): RedisStoreError {
  return new RedisStoreError(
    'COMMAND_FAILED',
    `webhook-dedup.${operation}`,
    `The Redis dedup store could not ${operation} an id.`,
    { cause },
  )
}
