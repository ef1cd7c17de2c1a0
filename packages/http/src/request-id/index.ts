/**
 * Request ids: accept a well-formed inbound `X-Request-Id`, else generate one; keep it in the
 * request context ({@link requestIdOf}); echo it on every response. The middleware is also the
 * error boundary: anything thrown below it is answered as a problem that carries the id.
 *
 * There is no IETF standard for the header (W3C `traceparent` is the standard correlation
 * field); this follows the Heroku pattern: validate the inbound value, replace it when it is
 * not acceptable, never echo it unchecked.
 *
 * @module
 */
import type { Middleware } from '@api-blocks/core'
import { getContext, setContext } from '@api-blocks/core'
import { errorResponse } from '../errors.ts'
import type { ErrorBoundary, ProblemRenderOptions } from '../internal/keys.ts'
import { errorBoundaryKey, requestIdKey } from '../internal/keys.ts'
import { withHeaders } from '../internal/response.ts'

/**
 * The request id that the `requestId()` middleware accepted or generated for this request,
 * or `undefined` when that middleware is not in front of the caller.
 *
 * @example
 * ```ts
 * const handler: Handler = async (request) => Response.json({ id: requestIdOf(request) })
 * ```
 */
export function requestIdOf(request: Request): string | undefined {
  return getContext(request, requestIdKey)
}

/**
 * The longest inbound request id accepted; a longer one is replaced, never echoed.
 *
 * @example
 * ```ts
 * isValidRequestId('a'.repeat(MAX_REQUEST_ID_LENGTH + 1)) // false
 * ```
 */
export const MAX_REQUEST_ID_LENGTH = 200

/**
 * What an inbound request id may contain: 1 to 200 of `A-Z a-z 0-9 . _ : -`.
 *
 * @example
 * ```ts
 * REQUEST_ID_PATTERN.test('req-42') // true
 * ```
 */
export const REQUEST_ID_PATTERN: RegExp = /^[A-Za-z0-9._:-]{1,200}$/

/**
 * Whether `value` is acceptable as an inbound request id: 1 to
 * {@link MAX_REQUEST_ID_LENGTH} characters from `A-Z a-z 0-9 . _ : -` (enough for UUIDs,
 * ULIDs, `traceparent`-style ids and `host:pid:seq` forms; nothing that needs escaping in a
 * log line, a header or a URN).
 *
 * @example
 * ```ts
 * isValidRequestId('0f5e1c4a-8d0b-4a5e-9c55-6c1d1f0b8a11') // true
 * isValidRequestId('a b') // false
 * ```
 */
export function isValidRequestId(value: string | null | undefined): value is string {
  return (
    typeof value === 'string' &&
    value.length <= MAX_REQUEST_ID_LENGTH &&
    REQUEST_ID_PATTERN.test(value)
  )
}

/**
 * Options of {@link requestId}.
 *
 * @example
 * ```ts
 * const options: RequestIdOptions = { trustInbound: false, problem: { instanceFrom: 'request-id' } }
 * ```
 */
export interface RequestIdOptions {
  /** The header read and written (default `x-request-id`). */
  header?: string
  /** Makes a new id (default `crypto.randomUUID()`). */
  generate?: () => string
  /**
   * Whether a well-formed inbound id is kept (default `true`). Set `false` (or a predicate)
   * when the service is reachable directly by untrusted clients and ids must be server-made.
   */
  trustInbound?: boolean | ((request: Request) => boolean)
  /** How problems are rendered for requests below this middleware (type base, `instance`). */
  problem?: ProblemRenderOptions
  /**
   * Called with every error thrown below this middleware that is answered with a 5xx (logs,
   * metrics); a thrown 4xx problem is an answer, not a failure.
   */
  onError?: (error: unknown, request: Request) => void
}

/**
 * The request-id middleware and error boundary. Put it first (outermost) or right after
 * `cors()`.
 *
 * @example
 * ```ts
 * const app = compose(requestId({ onError: (error) => console.error(error) }))(async (request) =>
 *   Response.json({ requestId: requestIdOf(request) }),
 * )
 * ```
 */
export function requestId(options: RequestIdOptions = {}): Middleware {
  const header = (options.header ?? 'x-request-id').toLowerCase()
  const generate = options.generate ?? (() => crypto.randomUUID())
  const trust = options.trustInbound ?? true
  const boundary: ErrorBoundary = {}
  if (options.problem !== undefined) boundary.problem = options.problem
  if (options.onError !== undefined) boundary.onError = options.onError

  return async (request, next) => {
    const inbound = request.headers.get(header)
    const trusted = typeof trust === 'function' ? safePredicate(trust, request) : trust
    const id = trusted && isValidRequestId(inbound) ? inbound : generate()
    setContext(request, requestIdKey, id)
    setContext(request, errorBoundaryKey, boundary)
    let response: Response
    try {
      response = await next(request)
    } catch (error) {
      response = errorResponse(error, request)
    }
    return withHeaders(response, (headers) => headers.set(header, id))
  }
}

function safePredicate(predicate: (request: Request) => boolean, request: Request): boolean {
  try {
    return predicate(request) === true
  } catch {
    return false
  }
}
