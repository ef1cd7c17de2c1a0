/**
 * The limiter: compiles the policies once, asks the store for one atomic check, and derives
 * the client-facing result.
 *
 * @module
 */
import { RateLimitError } from './error.ts'
import type { GcraCheck, GcraReply, RateLimitResult } from './gcra.ts'
import { describeGcra } from './gcra.ts'
import type { GcraPolicy, RateLimitPolicy } from './policy.ts'
import { compilePolicies } from './policy.ts'
import type { RateLimitStore } from './store.ts'

/**
 * Options of {@link createRateLimiter}.
 *
 * @example
 * ```ts
 * const options: RateLimiterOptions = {
 *   store: new MemoryRateLimitStore(),
 *   policies: [{ name: 'burst', quota: 10, windowSeconds: 1 }],
 *   clock: () => Date.now(),
 * }
 * ```
 */
export interface RateLimiterOptions {
  /** Where state lives: `new MemoryRateLimitStore()` in one process, a shared store beyond. */
  store: RateLimitStore
  /** The policies every check is charged against, all or none. At least one. */
  policies: readonly RateLimitPolicy[]
  /** Milliseconds since the epoch (default `Date.now`). Fractions are floored. */
  clock?: () => number
}

/**
 * A configured limiter, made by {@link createRateLimiter}.
 *
 * @example
 * ```ts
 * const result = await limiter.check('api-key:Zm9v', 5)
 * await limiter.reset('api-key:Zm9v') // an operator lifts the limit
 * ```
 */
export interface RateLimiter {
  /** The compiled policies, in configuration order. */
  readonly policies: readonly GcraPolicy[]
  /**
   * Checks `key` against every policy and, when all allow it, charges `cost` (default 1) to
   * each; a denied check charges nothing. `cost` 0 reads the state without charging. Rejects
   * with a `RateLimitError` (`STORE_UNAVAILABLE`) when the store fails, and with a
   * `RangeError` for a cost that is not a whole number >= 0.
   */
  check(key: string, cost?: number): Promise<RateLimitResult>
  /** Forgets the state of `key` under every policy. */
  reset(key: string): Promise<void>
}

/**
 * Creates a GCRA limiter over several policies.
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter({
 *   store: new MemoryRateLimitStore(),
 *   policies: [
 *     { name: 'burst', quota: 10, windowSeconds: 1 },
 *     { name: 'daily', quota: 1000, windowSeconds: 86_400 },
 *   ],
 * })
 * const result = await limiter.check('principal:sub:alice', 1)
 * if (!result.allowed) console.log(result.retryAfterSeconds)
 * ```
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { store, clock = Date.now } = options
  const policies = compilePolicies(options.policies)
  const storeFailed = (error: unknown): RateLimitError =>
    new RateLimitError('STORE_UNAVAILABLE', 'The rate-limit store is unavailable.', {
      cause: error,
    })
  const rejectStoreFailure = (error: unknown): never => {
    throw storeFailed(error)
  }
  const settle = (check: GcraCheck, reply: unknown): RateLimitResult => {
    if (!isReply(reply, policies.length)) {
      throw storeFailed(new TypeError('The rate-limit store answered a malformed reply'))
    }
    return describeGcra(check, reply)
  }
  return {
    policies,
    check(key: string, cost = 1): Promise<RateLimitResult> {
      if (typeof key !== 'string') {
        return Promise.reject(new TypeError('Rate limit key must be a string'))
      }
      if (!Number.isSafeInteger(cost) || cost < 0) {
        return Promise.reject(
          new RangeError(`Rate limit cost must be a whole number >= 0, got ${cost}`),
        )
      }
      const now = Math.floor(clock())
      if (!Number.isSafeInteger(now) || now < 0) {
        return Promise.reject(new RangeError(`Rate limit clock returned ${now}`))
      }
      const check: GcraCheck = { key, policies, cost, now }
      let reply: Promise<GcraReply>
      try {
        // The contract is a Promise; `Promise.resolve` returns a native one as it is and adopts
        // a client library's own thenable.
        reply = Promise.resolve(store.consume(check))
      } catch (error) {
        // A store that throws instead of rejecting is a failing store all the same.
        return Promise.reject(storeFailed(error))
      }
      return reply.then((answer) => settle(check, answer), rejectStoreFailure)
    },
    async reset(key: string): Promise<void> {
      try {
        await store.reset(key)
      } catch (error) {
        throw storeFailed(error)
      }
    },
  }
}

/** A reply the limiter can trust: a boolean and one finite debt >= 0 per policy. */
function isReply(reply: unknown, length: number): reply is GcraReply {
  if (typeof reply !== 'object' || reply === null) return false
  const { allowed, debts } = reply as Partial<GcraReply>
  if (typeof allowed !== 'boolean' || !Array.isArray(debts) || debts.length !== length) return false
  for (let i = 0; i < length; i++) {
    const debt: unknown = debts[i]
    // `debt >= 0` is false for NaN; Infinity is refused too.
    if (typeof debt !== 'number' || !(debt >= 0) || debt === Infinity) return false
  }
  return true
}
