/**
 * One way to answer errors across the package: every middleware here that has to turn a
 * thrown error or a problem into a Response goes through {@link errorResponse} or
 * {@link problemResponse}, so the answer carries the same problem options (type base,
 * `instance` source) and reports 5xx answers to the same `onError` hook, whichever layer
 * caught the error. The `requestId()` middleware sets those options for the request.
 *
 * @module
 */
import type { HeadersInitLike, Middleware, ProblemDetails } from '@api-blocks/core'
import { ApiBlocksError, getContext } from '@api-blocks/core'
import type { ProblemResponseOptions } from '@api-blocks/problem-details'
import { errorToProblemResponse, toProblemResponse } from '@api-blocks/problem-details'
import { errorBoundaryKey, requestIdKey } from './internal/keys.ts'

export type { ProblemRenderOptions } from './internal/keys.ts'

function optionsFor(
  request: Request,
  headers: HeadersInitLike | undefined,
): ProblemResponseOptions {
  const boundary = getContext(request, errorBoundaryKey)
  const options: ProblemResponseOptions = { ...boundary?.problem, request }
  const id = getContext(request, requestIdKey)
  if (id !== undefined) options.requestId = id
  if (headers !== undefined) options.headers = headers
  return options
}

/**
 * Answers a problem for `request` as an `application/problem+json` Response, with the
 * rendering options the request's `requestId()` middleware configured (if any).
 *
 * @example
 * ```ts
 * return problemResponse(problems.notFound.create({ detail: 'No order 42' }), request)
 * ```
 */
export function problemResponse(
  problem: ProblemDetails,
  request: Request,
  headers?: HeadersInitLike,
): Response {
  return toProblemResponse(problem, optionsFor(request, headers))
}

/**
 * The header fields an error says go with its problem: an `ApiBlocksError` with a `headers`
 * record of its own (`Accept-Encoding` of a `ContentEncodingError`, `Retry-After` of an
 * `IdempotencyError`), under those the caller passes.
 */
function withOwnHeaders(
  error: unknown,
  headers: HeadersInitLike | undefined,
): HeadersInitLike | undefined {
  if (!(error instanceof ApiBlocksError)) return headers
  const own = (error as { readonly headers?: unknown }).headers
  if (typeof own !== 'object' || own === null) return headers
  const merged = new Headers()
  for (const [name, value] of Object.entries(own)) {
    if (typeof value === 'string') merged.set(name, value)
  }
  if (headers !== undefined)
    for (const [name, value] of new Headers(headers)) merged.set(name, value)
  return merged
}

/**
 * Answers anything thrown while handling `request`: a `ProblemError` (or any `toProblem()`
 * source) answers its own problem, anything else the catalog's 500 `internal` problem without
 * the error's message. An `ApiBlocksError` that carries a `headers` record (a
 * `ContentEncodingError`'s `Accept-Encoding`) answers with those fields, under `headers`.
 * Reports the error to the `onError` hook of `requestId()` when the answer is a 5xx: a thrown
 * 4xx problem (a 422 from `readJson`, a 412) is the client's mistake, an answer and not a
 * failure of the service. A hook that throws is ignored.
 *
 * @example
 * ```ts
 * try {
 *   return await next(request)
 * } catch (error) {
 *   return errorResponse(error, request)
 * }
 * ```
 */
export function errorResponse(
  error: unknown,
  request: Request,
  headers?: HeadersInitLike,
): Response {
  const response = errorToProblemResponse(
    error,
    optionsFor(request, withOwnHeaders(error, headers)),
  )
  if (response.status >= 500) {
    try {
      getContext(request, errorBoundaryKey)?.onError?.(error, request)
    } catch {
      // A broken logger must not turn a problem answer into a crash.
    }
  }
  return response
}

/**
 * Answers what the layers below it throw, right where it stands: put it innermost (in front of
 * the router) so that a thrown problem (a 422 from `readJson`, a 412) travels back up as a
 * Response, and the layers above see it like any other answer: rate limits add their headers
 * to it, the idempotency block stores a deterministic 4xx. Renders with the options of the
 * `requestId()` boundary above it and reports 5xx answers to its `onError`.
 *
 * @example
 * ```ts
 * const app = compose(requestId(), rateLimit(limits), errorBoundary())(router)
 * ```
 */
export function errorBoundary(): Middleware {
  return async (request, next) => {
    try {
      return await next(request)
    } catch (error) {
      return errorResponse(error, request)
    }
  }
}
