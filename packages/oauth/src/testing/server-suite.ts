/**
 * The conformance suite of the authorisation server over a store: the cases that do not depend on
 * the store, run through the endpoints on any {@link OAuthStore}, so a store is shown to carry the
 * whole protocol, not only its own contract. It holds the RFC 9700 attack table (as data), the
 * code flow with PKCE, a replayed code revoking what it issued, refresh-token rotation and reuse
 * detection (concurrent refreshes too), client credentials, and the revocation (RFC 7009) and
 * introspection (RFC 7662) examples of the RFCs, and a recording of every store call showing
 * that no code, token, PKCE verifier or client secret reaches the store in the clear.
 *
 * @module
 */
import { describe, test } from 'vitest'
import type { OAuthStore } from '../store.ts'
import { atRestCases } from './at-rest-cases.ts'
import { pageAttackCases, redirectedAttackCases } from './authorize-attack-cases.ts'
import { flowCases, refreshCases } from './flow-cases.ts'
import type { MakeServer } from './server-context.ts'
import { DEFAULT_NOW, makeHarness } from './server-kit.ts'
import { tokenAttackCases } from './token-attack-cases.ts'
import { introspectionCases, revocationCases } from './vector-cases.ts'

/**
 * Options of {@link runAuthorizationServerConformance}.
 *
 * @example
 * ```ts
 * runAuthorizationServerConformance('redis', () => new RedisOAuthStore({ client }), {
 *   cleanup: () => client.flushDb(),
 * })
 * ```
 */
export interface AuthorizationServerConformanceOptions {
  /** The time the injected clock starts at, in ms since the epoch (default 2026-11-25T12:00Z). */
  readonly now?: number
  /** Called after each test with each store it made (close a client, delete its keys). */
  readonly cleanup?: (store: OAuthStore) => void | Promise<void>
  /** Per-test timeout in milliseconds (default 20,000). */
  readonly timeoutMs?: number
}

/**
 * Registers the conformance tests of the authorisation server over a store with vitest (an
 * optional peer dependency of this package). Call it at the top level of a test file. Each test
 * makes one or more servers, each over a fresh store from `makeStore`.
 *
 * @param name shown in the test names, e.g. `redis`.
 * @param makeStore gives a ready store; called once per server a test makes.
 *
 * @example
 * ```ts
 * import { MemoryOAuthStore } from '@api-blocks/oauth'
 * import { runAuthorizationServerConformance } from '@api-blocks/oauth/testing'
 *
 * runAuthorizationServerConformance('memory', () => new MemoryOAuthStore())
 * ```
 */
export function runAuthorizationServerConformance(
  name: string,
  makeStore: () => OAuthStore | Promise<OAuthStore>,
  options: AuthorizationServerConformanceOptions = {},
): void {
  const { now = DEFAULT_NOW, cleanup, timeoutMs = 20_000 } = options

  const it = (title: string, body: (makeServer: MakeServer) => Promise<void>) =>
    test(
      title,
      async () => {
        const stores: OAuthStore[] = []
        const makeServer: MakeServer = async (overrides = {}) => {
          const store = await makeStore()
          stores.push(store)
          return makeHarness(store, overrides, now)
        }
        try {
          await body(makeServer)
        } finally {
          for (const store of stores) await cleanup?.(store)
        }
      },
      timeoutMs,
    )
  const context = { it }

  describe(`authorisation server conformance: ${name}`, () => {
    describe('the code flow and client credentials', () => flowCases(context))
    describe('refresh-token rotation and reuse detection', () => refreshCases(context))
    describe('revocation (RFC 7009)', () => revocationCases(context))
    describe('introspection (RFC 7662)', () => introspectionCases(context))
    describe('attacks refused back to the client with state and iss (RFC 9207)', () =>
      redirectedAttackCases(context))
    describe('attacks answered with an error page (RFC 6749 §4.1.2.1)', () =>
      pageAttackCases(context))
    describe('attacks at the token endpoint', () => tokenAttackCases(context))
    describe('secrets at rest: only hashes reach the store', () => atRestCases(context))
  })
}
