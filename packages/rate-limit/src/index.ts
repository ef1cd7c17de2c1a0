/**
 * GCRA rate limiting for HTTP APIs: weighted cost, several policies charged atomically (all or
 * none), a denied request charges nothing, the `RateLimit-*` / `X-RateLimit-*` fields (and the
 * draft's structured `RateLimit` / `RateLimit-Policy` as an option), the 429 `quota-exceeded`
 * problem, client keys (the principal, an API key, the client address), and fail-open (the
 * default, reported) or fail-closed when the store fails.
 *
 * @example
 * ```ts
 * import { MemoryRateLimitStore, rateLimit, rateLimitKey } from '@api-blocks/rate-limit'
 * const limit = rateLimit({
 *   store: new MemoryRateLimitStore(),
 *   policies: [{ name: 'burst', quota: 10, windowSeconds: 1 }],
 *   key: (request) => rateLimitKey(request),
 * })
 * ```
 *
 * @module
 */

export type { RateLimitErrorCode, RateLimitErrorOptions } from './error.ts'
export { RateLimitError } from './error.ts'
export type {
  GcraCheck,
  GcraOutcome,
  GcraReply,
  GcraState,
  RateLimitPolicyStatus,
  RateLimitResult,
} from './gcra.ts'
export { describeGcra, gcraCheck, gcraDebt } from './gcra.ts'
export type {
  RateLimitFields,
  RateLimitHeaderOptions,
  RateLimitPolicyField,
  RateLimitServiceLimit,
} from './headers.ts'
export {
  mergeRateLimitHeaders,
  mostRestrictivePolicy,
  parseRateLimitFields,
  rateLimitHeaders,
} from './headers.ts'
export type { RateLimitKeyOptions } from './key.ts'
export { MAX_API_KEY_LENGTH, rateLimitKey } from './key.ts'
export type { RateLimiter, RateLimiterOptions } from './limiter.ts'
export { createRateLimiter } from './limiter.ts'
export type { MemoryRateLimitStoreOptions } from './memory-store.ts'
export { MemoryRateLimitStore } from './memory-store.ts'
export type { RateLimitEvent, RateLimitOptions, RateLimitProblemOptions } from './middleware.ts'
export { rateLimit, rateLimitedResponse } from './middleware.ts'
export type { GcraPolicy, RateLimitPolicy } from './policy.ts'
export { compilePolicies, MAX_LIMIT_TICKS } from './policy.ts'
export type { RateLimitStore } from './store.ts'
