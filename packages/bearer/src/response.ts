/**
 * The answer to a refused protected request: the `BearerError`'s problem as
 * `application/problem+json`, with the RFC 6750 §3 challenge and `Retry-After` for a 503.
 *
 * @module
 */
import { toProblemResponse } from '@api-blocks/problem-details'
import { bearerChallenge } from './challenge.ts'
import type { BearerError } from './error.ts'

/**
 * Options of {@link bearerErrorResponse}.
 *
 * @example
 * ```ts
 * const options: BearerErrorResponseOptions = { request, realm: 'orders' }
 * ```
 */
export interface BearerErrorResponseOptions {
  /** The request answered (for the problem's `instance` and language). */
  request?: Request
  /** The realm of the challenge (default `api`). */
  realm?: string
  /** Base URI that problem-type slugs resolve against. */
  problemBase?: string
}

/**
 * The response to a refused request: 400, 401, 403 or 503 with the problem of `error`, the
 * `WWW-Authenticate: Bearer` challenge (RFC 6750 §3; none with a 503) and `Retry-After` with a
 * 503. What `bearer()` and `requireScopes()` answer; for a verifier used on its own.
 *
 * @example
 * ```ts
 * try {
 *   setPrincipal(request, await verifier.verify(token))
 * } catch (error) {
 *   if (error instanceof BearerError) return bearerErrorResponse(error, { request, realm: 'orders' })
 *   throw error
 * }
 * ```
 */
export function bearerErrorResponse(
  error: BearerError,
  options: BearerErrorResponseOptions = {},
): Response {
  const headers = new Headers(error.headers)
  const challenge = bearerChallenge(error, options.realm ?? DEFAULT_REALM)
  if (challenge !== undefined) headers.set('www-authenticate', challenge)
  return toProblemResponse(error.toProblem(), {
    headers,
    ...(options.request === undefined ? {} : { request: options.request }),
    ...(options.problemBase === undefined ? {} : { base: options.problemBase }),
  })
}

/** @internal The realm when none is configured. */
export const DEFAULT_REALM = 'api'
