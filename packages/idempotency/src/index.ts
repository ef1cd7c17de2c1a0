/**
 * Idempotency-Key for HTTP APIs (draft-ietf-httpapi-idempotency-key-header, docs/spec.md §4.3
 * rule 6): one state machine with leases and recovery points, canonical request
 * fingerprints, keys scoped by principal, byte-exact replays, over a small atomic store
 * interface whose every operation returns a Promise. Web standards only: runs on any Fetch
 * runtime.
 *
 * @example
 * ```ts
 * import { idempotency, MemoryIdempotencyStore } from '@api-blocks/idempotency'
 * const withIdempotency = idempotency({ store: new MemoryIdempotencyStore(), scope: 'tenant-1' })
 * const response = await withIdempotency(request, handler)
 * ```
 *
 * @module
 */

export type { IdempotencyContext } from './context.ts'
export { idempotencyContext } from './context.ts'
export type { IdempotencyErrorCode, IdempotencyErrorOptions } from './error.ts'
export { IdempotencyError } from './error.ts'
export type { FingerprintEncoding, FingerprintInput, FingerprintOptions } from './fingerprint.ts'
export { computeFingerprint, isJsonMediaType } from './fingerprint.ts'
export {
  formatIdempotencyKey,
  MAX_IDEMPOTENCY_KEY_FIELD_LENGTH,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  parseIdempotencyKey,
} from './key.ts'
export type { MemoryEviction, MemoryIdempotencyStoreOptions } from './memory-store.ts'
export { MemoryIdempotencyStore } from './memory-store.ts'
export { idempotency } from './middleware.ts'
export type { IdempotencyEvent, IdempotencyOptions, IdempotencyProfile } from './options.ts'
export { DEFAULT_STORED_ERROR_STATUSES, defaultStorePolicy } from './options.ts'
export {
  NEVER_REPLAYED_HEADERS,
  REPLAYED_HEADER,
  replayResponse,
  storableHeaders,
} from './replay.ts'
export type {
  IdempotencyCheckpoint,
  IdempotencyClaim,
  IdempotencyClaimResult,
  IdempotencyCompletion,
  IdempotencyStore,
  StoredResponse,
} from './store.ts'
export { deriveStoreKey } from './store-key.ts'
export { decodeStoredResponse, encodeStoredResponse } from './stored-response.ts'
