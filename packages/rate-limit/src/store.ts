/**
 * The store interface of the limiter. It receives the whole multi-policy check (key, compiled
 * policies, cost, now) so that one store call is one atomic step: a Redis store runs it as ONE
 * Lua script in ONE round trip, with no server module (see the formulas in `gcra.ts`).
 *
 * @module
 */
import type { GcraCheck, GcraReply } from './gcra.ts'

/**
 * Where limiter state lives. Implementations must pass `runRateLimitStoreConformance` from
 * `@api-blocks/rate-limit/testing`.
 *
 * The contract:
 * - `consume` is atomic per key: it reads every policy's state of `check.key`, decides with
 *   the formulas of `gcra.ts`, and writes all policies or none. Concurrent calls on one key
 *   behave as if run one after another.
 * - A denied check (and a check of cost 0) writes nothing.
 * - Time is `check.now`, never the store's own clock; expiry (TTL) is computed relative to it,
 *   so a key lives exactly until its last debt is paid.
 * - Every method returns a Promise, always: a failure rejects, it never throws. A store that
 *   cannot answer rejects; the limiter turns that into a `RateLimitError` with code
 *   `STORE_UNAVAILABLE`, and the middleware fails open (the default) or closed.
 *
 * @example
 * ```ts
 * const store: RateLimitStore = new MemoryRateLimitStore({ maxKeys: 50_000 })
 * const reply = await store.consume({ key: 'ip:198.51.100.7/32', policies, cost: 1, now: Date.now() })
 * ```
 */
export interface RateLimitStore {
  /** Runs one atomic GCRA check of every policy of `check.key`; charges all or none. */
  consume(check: GcraCheck): Promise<GcraReply>
  /** Forgets every policy's state of `key` (an operator lifting a limit). */
  reset(key: string): Promise<void>
}
