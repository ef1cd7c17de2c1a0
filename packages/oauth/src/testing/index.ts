/**
 * The conformance suite of {@link OAuthStore}: every store (memory, Redis, PostgreSQL, yours)
 * registers it in its own test file and must pass it unchanged. It checks the contract of
 * `store.ts` method by method: interactions taken once, codes consumed once (and replays
 * recognised until they expire), tokens found while active, refresh-token rotation with reuse
 * detection and its grace window, revocation of one token or a whole family (before it exists
 * too), the replay cache, and atomicity under concurrent calls.
 *
 * Every method must return a Promise, always (the suite checks an answer before awaiting it).
 * Time is injected (`now` arguments), so a store must decide expiry by the `now` it is given,
 * never by its own clock; a record is gone at its `expiresAt` (`expiresAt <= now` is expired).
 * Every test uses fresh random ids, so the suite can run against a shared server.
 *
 * @module
 */
import { describe, test } from 'vitest'
import type { OAuthStore } from '../store.ts'
import { interactionCases } from './interaction-cases.ts'
import { promiseCases } from './promise-cases.ts'
import { recordCases } from './record-cases.ts'
import { rememberCases } from './remember-cases.ts'
import { reuseCases } from './reuse-cases.ts'
import { rotationCases } from './rotation-cases.ts'
import { tokenCases } from './token-cases.ts'

export type { AuthorizationServerConformanceOptions } from './server-suite.ts'
export { runAuthorizationServerConformance } from './server-suite.ts'

/**
 * Options of {@link runOAuthStoreConformance}.
 *
 * @example
 * ```ts
 * runOAuthStoreConformance('redis', () => new RedisOAuthStore({ client }), {
 *   cleanup: () => client.flushDb(),
 *   concurrency: 100,
 * })
 * ```
 */
export interface OAuthStoreConformanceOptions {
  /** The time the injected clock starts at, in ms since the epoch (default 1,700,000,000,000). */
  readonly now?: number
  /** Called after each test with its store (close a client, delete its keys). */
  readonly cleanup?: (store: OAuthStore) => void | Promise<void>
  /** Per-test timeout in milliseconds (default 20,000). */
  readonly timeoutMs?: number
  /** How many calls race in the concurrency tests (default 50, at least 2). */
  readonly concurrency?: number
}

/**
 * Registers the conformance tests of an {@link OAuthStore} with vitest (an optional peer
 * dependency of this package). Call it at the top level of a test file.
 *
 * @param name shown in the test names, e.g. `redis`.
 * @param makeStore gives a ready store for one test; called once per test.
 *
 * @example
 * ```ts
 * import { MemoryOAuthStore } from '@api-blocks/oauth'
 * import { runOAuthStoreConformance } from '@api-blocks/oauth/testing'
 *
 * runOAuthStoreConformance('memory', () => new MemoryOAuthStore())
 * ```
 */
export function runOAuthStoreConformance(
  name: string,
  makeStore: () => OAuthStore | Promise<OAuthStore>,
  options: OAuthStoreConformanceOptions = {},
): void {
  const { now: t0 = 1_700_000_000_000, cleanup, timeoutMs = 20_000, concurrency = 50 } = options
  if (!Number.isSafeInteger(concurrency) || concurrency < 2) {
    throw new RangeError('runOAuthStoreConformance: concurrency must be an integer >= 2')
  }

  /** Runs `body` with a fresh store, then cleans up. */
  const withStore =
    (body: (store: OAuthStore) => Promise<void>): (() => Promise<void>) =>
    async () => {
      const store = await makeStore()
      try {
        await body(store)
      } finally {
        await cleanup?.(store)
      }
    }

  const it = (title: string, body: (store: OAuthStore) => Promise<void>) =>
    test(title, withStore(body), timeoutMs)
  const context = { it, t0, concurrency }

  describe(`OAuthStore conformance: ${name}`, () => {
    describe('promises', () => promiseCases(context))
    describe('interactions and codes', () => interactionCases(context))
    describe('issue, findToken and revocation', () => tokenCases(context))
    describe('refresh-token rotation', () => rotationCases(context))
    describe('reuse detection at its edges', () => reuseCases(context))
    describe('records with unusual characters', () => recordCases(context))
    describe('replay cache', () => rememberCases(context))
  })
}
