/**
 * The body limit of one request: the largest request body the route that serves it accepts,
 * recorded once by whoever knows it (http's `limits({ maxBodyBytes })`, a router, a per-route
 * middleware) and honoured by every layer that reads the body: http's `readBody` family when
 * its caller names no limit, and the idempotency middleware, which reads at most this much for
 * its fingerprint. So one limit applies to a route, whichever layer reads first, and every
 * layer that refuses a body answers the same 413 (RFC 9110 §15.5.14) with the same limit.
 *
 * @module
 */
import type { ContextKey } from './context.ts'
import { getContext, setContext, sharedContextKey } from './context.ts'

const BODY_LIMIT: ContextKey<number> = sharedContextKey('core.body-limit')

/**
 * Records the largest request body, in bytes, that the route serving `request` accepts. A later
 * call replaces it: an inner layer that knows the route (a router) can narrow or widen what an
 * outer one (`limits()`) set for every route.
 *
 * @throws {RangeError} when `maxBytes` is not a non-negative safe integer.
 * @example
 * ```ts
 * const route: Middleware = (request, next) => {
 *   setBodyLimit(request, 16 * 1024)
 *   return next(request)
 * }
 * ```
 */
export function setBodyLimit(request: Request, maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError('A body limit is a non-negative safe integer')
  }
  setContext(request, BODY_LIMIT, maxBytes)
}

/**
 * The body limit recorded for `request` (see {@link setBodyLimit}), or `undefined` when no layer
 * recorded one.
 *
 * @example
 * ```ts
 * const maxBytes = Math.min(ownLimit, bodyLimitOf(request) ?? ownLimit)
 * ```
 */
export function bodyLimitOf(request: Request): number | undefined {
  return getContext(request, BODY_LIMIT)
}
