/**
 * OAuth 2.0 and OpenID Connect authorisation-server core on Fetch `Request`/`Response`.
 *
 * @module
 */

// Store: the memory store (the default) and its options.
export type { MemoryOAuthStoreOptions } from './memory-store.ts'
export { MemoryOAuthStore } from './memory-store.ts'
export type {
  ActiveToken,
  CodeRecord,
  ConsumeCodeResult,
  FamilyRecord,
  InteractionRecord,
  OAuthStore,
  RotateRefreshOptions,
  RotateRefreshResult,
  TokenRecord,
} from './store.ts'
