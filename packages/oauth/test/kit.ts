/**
 * What the tests of the server share: a store, a server with the demo clients, and the steps of
 * the code flow as plain requests. The steps live in the testing subpath (`src/testing/server-kit.ts`),
 * where the server conformance suite runs them on every store; here the server is on a memory store.
 */

import { MemoryOAuthStore } from '../src/memory-store.ts'
import type { AuthorizationServerOptions } from '../src/options.ts'
import type { OAuthStore } from '../src/store.ts'
import type { Harness } from '../src/testing/server-kit.ts'
import { makeHarness } from '../src/testing/server-kit.ts'

export {
  authorizeQuery,
  authorizeRequest,
  BACKEND_REDIRECT,
  BACKEND_SECRET,
  basic,
  CHALLENGE,
  Clock,
  exchange,
  type Harness,
  ISSUER,
  json,
  obtainCode,
  post,
  SPA_REDIRECT,
  type Started,
  startInteraction,
  VERIFIER,
} from '../src/testing/server-kit.ts'

export function makeStore(): OAuthStore {
  return new MemoryOAuthStore()
}

/** A server with the demo clients, on a memory store unless `overrides.store` says otherwise. */
export function makeServer(overrides: Partial<AuthorizationServerOptions> = {}): Promise<Harness> {
  return makeHarness(overrides.store ?? makeStore(), overrides)
}
