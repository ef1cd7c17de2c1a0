/**
 * `RateLimitStore` on Redis: the whole multi-policy GCRA check in one Lua script (see
 * `internal/rate-limit-scripts.ts`), so each `consume` is one `EVALSHA`, one round trip, and
 * atomic per key, with no server module.
 *
 * @module
 */
import type { GcraCheck, GcraPolicy, GcraReply, RateLimitStore } from '@api-blocks/rate-limit'
import type { RedisScriptClient } from './client.ts'
import { RedisStoreError } from './error.ts'
import { CONSUME, RESET } from './internal/rate-limit-scripts.ts'
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
// the wrong shape is refused rather than read as 0. Integer replies are numbers with RESP2 and
// RESP3; a client that maps integers to strings or bigints still gives exact values.
function integerReply(value: unknown): number {
  if (typeof value === 'number') return value + 0
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'string' && /^-?[0-9]{1,16}$/.test(value)) return Number(value) + 0
  return Number.NaN
}

const DEFAULT_PREFIX = 'api-blocks:rate-limit:'

function wholeNumber(value: number, name: string): string {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number >= 0, got ${value}`)
  }
  return String(value)
}

// The script's arguments after `now` and `cost`: four per policy (the script computes
// `limitTicks` as `quota * emissionTicks`, as `compilePolicies` does, so a policy must be one it
// compiled). A limiter passes the same compiled policies (frozen) to every check, so their text
// is built once per array; an array that is not frozen, which its owner could change, is read
// every time.
const policyArguments = new WeakMap<readonly GcraPolicy[], readonly string[]>()

function argumentsOf(policies: readonly GcraPolicy[]): readonly string[] {
  const cached = policyArguments.get(policies)
  if (cached !== undefined) return cached
  const args: string[] = []
  let frozen = Object.isFrozen(policies)
  for (const policy of policies) {
    const { name, ticksPerMs, emissionTicks, limitTicks, quota } = policy
    if (limitTicks !== quota * emissionTicks) {
      throw new RangeError(
        `policy "${name}" is not compiled: limitTicks must be quota * emissionTicks`,
      )
    }
    args.push(name, String(ticksPerMs), String(emissionTicks), String(quota))
    frozen &&= Object.isFrozen(policy)
  }
  if (frozen) policyArguments.set(policies, args)
  return args
}

/**
 * A {@link RateLimitStore} on Redis: each `consume` runs the GCRA formulas of
 * `@api-blocks/rate-limit` (`gcra.ts`) for every policy in one Lua script, run by `EVALSHA`
 * (falling back to `EVAL` once after a server lost its script cache): one round trip, all
 * policies charged or none, a denied check writes nothing. A key expires (`PEXPIRE`, relative to
 * `check.now`) when its last debt is paid. Passes `runRateLimitStoreConformance` against a real
 * server, including the comparison with the reference model on a long random sequence.
 *
 * Every method returns a Promise: failures reject (never throw) with a {@link RedisStoreError};
 * the limiter reports them as a `RateLimitError` with code `STORE_UNAVAILABLE`, and the
 * middleware fails open (its default) or closed.
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
 * const result = await limiter.check('principal:sub:alice')
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

  consume(check: GcraCheck): Promise<GcraReply> {
    try {
      const { key, policies, cost, now } = check
      const nowText = wholeNumber(now, 'now')
      const costText = wholeNumber(cost, 'cost')
      const rest = argumentsOf(policies)
      const count = policies.length
      const args =
        count === 1
          ? [nowText, costText, rest[0]!, rest[1]!, rest[2]!, rest[3]!]
          : [nowText, costText, ...rest]
      return runScript(this.client, CONSUME, [this.prefix + key], args).then(
        count === 1 ? readOneReply : (reply) => readReplies(reply, count),
        consumeFailed,
      )
    } catch (error) {
      // A check that is not one (a time or cost that is not a whole number) rejects, as the
      // script's failures do.
      return Promise.reject(error)
    }
  }

  reset(key: string): Promise<void> {
    return runScript(this.client, RESET, [this.prefix + key], []).then(() => undefined, resetFailed)
  }
}

function failed(operation: string, cause: unknown): RedisStoreError {
  return new RedisStoreError(
    'COMMAND_FAILED',
    `rate-limit.${operation}`,
    `The Redis rate-limit store could not ${operation} a key.`,
    { cause },
  )
}

function consumeFailed(cause: unknown): never {
  throw failed('consume', cause)
}

function resetFailed(cause: unknown): never {
  throw failed('reset', cause)
}

function unexpected(): RedisStoreError {
  return new RedisStoreError(
    'UNEXPECTED_REPLY',
    'rate-limit.consume',
    'The Redis rate-limit store read a reply of an unknown shape (consume).',
  )
}

// The script's reply with one policy (see CONSUME): one integer, `d` when allowed and
// `-1 - d` when denied.
function readOneReply(reply: unknown): GcraReply {
  const value = integerReply(reply)
  if (!Number.isSafeInteger(value)) throw unexpected()
  return value >= 0 ? { allowed: true, debts: [value] } : { allowed: false, debts: [-1 - value] }
}

// The script's reply with several policies: `[allowed (1 or 0), d1, …, dk]`.
function readReplies(reply: unknown, count: number): GcraReply {
  if (!Array.isArray(reply) || reply.length !== count + 1) throw unexpected()
  const flag = integerReply(reply[0])
  if (flag !== 1 && flag !== 0) throw unexpected()
  const debts: number[] = new Array(count)
  for (let i = 0; i < count; i++) {
    const debt = integerReply(reply[i + 1])
    if (!Number.isSafeInteger(debt) || debt < 0) throw unexpected()
    debts[i] = debt
  }
  return { allowed: flag === 1, debts }
}
