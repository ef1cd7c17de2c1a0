/**
 * `RateLimitStore` on Redis: the whole multi-policy GCRA check in one Lua script (see
 * `internal/rate-limit-scripts.ts`), so each `consume` is one `EVALSHA`, one round trip, and
 * atomic per key, with no server module.
 *
 * @module
 */
import type { GcraCheck, GcraReply, RateLimitStore } from '@api-blocks/rate-limit'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { CONSUME, RESET } from './internal/rate-limit-scripts.ts'
import type { LuaScript } from './internal/script.ts'
import { runScript } from './internal/script.ts'

/**
 * Options of {@link RedisRateLimitStore}.
 *
 * @example
 * ```ts
 * const options: RedisRateLimitStoreOptions = { client, prefix: 'orders-api:rate-limit:' }
 * const store = new RedisRateLimitStore(options)
 * ```
 */
export interface RedisRateLimitStoreOptions {
  /**
   * A connected client: `await createClient({ url }).connect()` from node-redis (a cluster or a
   * sentinel works too), or anything that implements {@link RedisScriptClient}. The store
   * never connects, reconnects or closes it.
   */
  client: RedisScriptClient
  /** Put before every client key (default `api-blocks:rate-limit:`). */
  prefix?: string
}

// An integer reply as a number: NaN for anything else (nil, text, an error), so a reply of
// the wrong shape is refused rather than read as 0.
function integerReply(value: unknown): number {
  if (typeof value === 'number') return value + 0
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'string' && /^[0-9]{1,16}$/.test(value)) return Number(value)
  return Number.NaN
}

const DEFAULT_PREFIX = 'api-blocks:rate-limit:'

function wholeNumber(value: number, name: string): string {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number >= 0, got ${value}`)
  }
  return String(value)
}

/**
 * A {@link RateLimitStore} on Redis: each `consume` runs the GCRA formulas of
 * `@api-blocks/rate-limit` (`gcra.ts`) for every policy in one Lua script, run by `EVALSHA`
 * (falling back to `EVAL` once after a server lost its script cache): one round trip, all
 * policies charged or none, a denied check writes nothing. A key expires (`PEXPIRE`, relative to
 * `check.now`) when its last debt is paid. Passes `runRateLimitStoreConformance` against a real
 * server, including the comparison with the reference model on a long random sequence.
 *
 * Failures reject with a {@link RedisStoreError}; the limiter reports them as
 * `store_unavailable`, and the middleware fails open or closed as configured.
 *
 * @example
 * ```ts
 * import { createRateLimiter } from '@api-blocks/rate-limit'
 * import { RedisRateLimitStore } from '@api-blocks/redis'
 * import { createClient } from 'redis'
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).on('error', console.error).connect()
 * const limiter = createRateLimiter({
 *   store: new RedisRateLimitStore({ client }),
 *   policies: [{ name: 'burst', quota: 10, windowSeconds: 1 }, { name: 'daily', quota: 1000, windowSeconds: 86_400 }],
 * })
 * const result = await limiter.check('principal:alice')
 * ```
 */
export class RedisRateLimitStore implements RateLimitStore {
  /** The client the store runs its scripts on. */
  readonly client: RedisScriptClient
  /** The prefix of every Redis key the store writes. */
  readonly prefix: string

  constructor(options: RedisRateLimitStoreOptions) {
    const { client, prefix = DEFAULT_PREFIX } = options
    if (typeof client?.evalSha !== 'function' || typeof client.eval !== 'function') {
      throw new TypeError('RedisRateLimitStore: client must have evalSha and eval (node-redis)')
    }
    if (typeof prefix !== 'string') {
      throw new TypeError('RedisRateLimitStore: prefix must be a string')
    }
    this.client = client
    this.prefix = prefix
  }

  async consume(check: GcraCheck): Promise<GcraReply> {
    const { key, policies, cost, now } = check
    const args = [wholeNumber(now, 'now'), wholeNumber(cost, 'cost')]
    for (const { name, ticksPerMs, emissionTicks, limitTicks, quota } of policies) {
      args.push(name, String(ticksPerMs), String(emissionTicks), String(limitTicks), String(quota))
    }
    const reply = await this.#run('consume', CONSUME, key, args)
    if (!Array.isArray(reply) || reply.length !== policies.length + 1) throw this.#unexpected()
    const [allowed, ...rest] = reply as unknown[]
    // Integer replies: numbers with RESP2 and RESP3 (a client that maps integers to strings or
    // bigints still gives exact values through Number()).
    const debts = rest.map(integerReply)
    const flag = integerReply(allowed)
    if (
      (flag !== 1 && flag !== 0) ||
      !debts.every((debt) => Number.isSafeInteger(debt) && debt >= 0)
    ) {
      throw this.#unexpected()
    }
    return { allowed: flag === 1, debts }
  }

  async reset(key: string): Promise<void> {
    await this.#run('reset', RESET, key, [])
  }

  async #run(operation: string, script: LuaScript, key: string, args: string[]): Promise<unknown> {
    try {
      return await runScript(this.client, script, [this.prefix + key], args)
    } catch (cause) {
      throw new RedisStoreError(
        'command_failed',
        `rate-limit.${operation}`,
        `The Redis rate-limit store could not ${operation} a key.`,
        { cause },
      )
    }
  }

  #unexpected(): RedisStoreError {
    return new RedisStoreError(
      'unexpected_reply',
      'rate-limit.consume',
      'The Redis rate-limit store read a reply of an unknown shape (consume).',
    )
  }
}
