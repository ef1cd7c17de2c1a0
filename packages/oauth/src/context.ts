/**
 * What every endpoint of one server shares: the resolved options, the store, the keys
 * (imported once, on first use) and the hashing of codes and tokens.
 *
 * @module
 */
import { generateSigningKey, type KeySet, loadKeySet } from './keys.ts'
import type { ResolvedOptions } from './options.ts'
import type { OAuthStore } from './store.ts'
import { keyedHash } from './tokens.ts'

/**
 * One server's shared state.
 *
 * @example
 * ```ts
 * const hash = await context.hash(token) // what the store keeps
 * ```
 */
export interface ServerContext {
  readonly options: ResolvedOptions
  readonly store: OAuthStore
  /** The key set, imported on first use (key import is asynchronous, the factory is not). */
  keys(): Promise<KeySet>
  /** base64url HMAC-SHA-256 under the token key. */
  hash(value: string): Promise<string>
}

/**
 * Makes the context of a server.
 *
 * @example
 * ```ts
 * const context = createContext(resolveOptions(options), new MemoryOAuthStore())
 * ```
 */
export function createContext(options: ResolvedOptions, store: OAuthStore): ServerContext {
  let keys: Promise<KeySet> | undefined
  return {
    options,
    store,
    keys() {
      keys ??= (async () =>
        loadKeySet(options.signingKeys ?? [await generateSigningKey({ random: options.random })]))()
      // A failed import is not cached: the next request tries again (and fails the same way,
      // loudly, if the configuration is wrong).
      keys.catch(() => {
        keys = undefined
      })
      return keys
    },
    hash: (value) => keyedHash(options.tokenKey, value),
  }
}
