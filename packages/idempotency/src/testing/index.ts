/**
 * The conformance suite of {@link IdempotencyStore}: every store (memory, Redis, PostgreSQL,
 * yours) registers it in its own test file and must pass it unchanged. It checks the contract
 * of `store.ts` operation by operation, then the middleware over the store: concurrency,
 * crash recovery through the lease, stale owners, retention, mismatches and scopes.
 *
 * Every operation must return a Promise, always (the suite checks each answer before awaiting
 * it). Time is injected (`now` arguments, the middleware's `clock`), so a store must decide expiry
 * by the `now` it is given, never by its own clock. Every test uses fresh random keys, so the
 * suite can run against a shared server.
 *
 * @module
 */
import { describe, test } from 'vitest'
import type { IdempotencyStore } from '../store.ts'
import { middlewareCases } from './middleware-cases.ts'
import { storeOperationCases } from './store-cases.ts'

/**
 * Options of {@link runIdempotencyStoreConformance}.
 *
 * @example
 * ```ts
 * runIdempotencyStoreConformance('redis', () => new RedisIdempotencyStore({ client }), {
 *   cleanup: () => client.flushDb(),
 *   concurrency: 100,
 * })
 * ```
 */
export interface IdempotencyStoreConformanceOptions {
  /** The time the injected clock starts at, in ms since the epoch (default 1,700,000,000,000). */
  readonly now?: number
  /** Called after each test with its store (close a client, drop a schema). */
  readonly cleanup?: (store: IdempotencyStore) => void | Promise<void>
  /** Per-test timeout in milliseconds (default 20,000). */
  readonly timeoutMs?: number
  /** How many requests race in the concurrency tests (default 50). */
  readonly concurrency?: number
}

/**
 * Registers the conformance tests of an {@link IdempotencyStore} with vitest (an optional peer
 * dependency of this package). Call it at the top level of a test file.
 *
 * @param name shown in the test names, e.g. `redis`.
 * @param makeStore gives a ready store for one test; called once per test.
 *
 * @example
 * ```ts
 * import { runIdempotencyStoreConformance } from '@api-blocks/idempotency/testing'
 * import { MemoryIdempotencyStore } from '@api-blocks/idempotency'
 *
 * runIdempotencyStoreConformance('memory', () => new MemoryIdempotencyStore())
 * ```
 */
export function runIdempotencyStoreConformance(
  name: string,
  makeStore: () => IdempotencyStore | Promise<IdempotencyStore>,
  options: IdempotencyStoreConformanceOptions = {},
): void {
  const { now: t0 = 1_700_000_000_000, cleanup, timeoutMs = 20_000, concurrency = 50 } = options
  const key = () => `conformance:${crypto.randomUUID()}`

  /** Runs `body` with a fresh store, then cleans up. */
  const withStore =
    (body: (store: IdempotencyStore) => Promise<void>): (() => Promise<void>) =>
    async () => {
      const store = await makeStore()
      try {
        await body(store)
      } finally {
        await cleanup?.(store)
      }
    }

  const it = (title: string, body: (store: IdempotencyStore) => Promise<void>) =>
    test(title, withStore(body), timeoutMs)

  describe(`IdempotencyStore conformance: ${name}`, () => {
    describe('store operations', () => storeOperationCases({ it, key, t0, concurrency }))
    describe('through the middleware', () => middlewareCases({ it, key, t0, concurrency }))
  })
}
