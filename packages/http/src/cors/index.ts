/**
 * CORS policy middleware (WHATWG Fetch, "CORS protocol"). Answers preflights, adds the
 * response headers to allowed cross-origin requests, and avoids the three classic mistakes:
 * `*` with credentials is refused when the policy is made, `Vary: Origin` is on every
 * response whose CORS headers depend on the request (refused and same-origin ones too), and
 * Access-Control-Expose-Headers lists the headers the response actually carries, merged
 * through the accumulator.
 *
 * @module
 */
import type { Middleware } from '@api-blocks/core'
import { errorResponse } from '../errors.ts'
import { mergeHeader } from '../headers/index.ts'
import { withHeaders } from '../internal/response.ts'
import { isToken } from '../internal/syntax.ts'

/**
 * The longest Origin value considered; a longer one is refused.
 *
 * @example
 * ```ts
 * const tooLong = (request.headers.get('origin') ?? '').length > MAX_ORIGIN_LENGTH
 * ```
 */
export const MAX_ORIGIN_LENGTH = 1024

/**
 * Request headers always allowed in preflights. None is CORS-safelisted, so a cross-origin
 * client needs them listed (Fetch: `Authorization` is never covered by `*`).
 *
 * @example
 * ```ts
 * cors({ origin: ['https://app.example'], allowHeaders: [...DEFAULT_ALLOW_HEADERS, 'DPoP'] })
 * ```
 */
export const DEFAULT_ALLOW_HEADERS: readonly string[] = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'X-Request-Id',
]

/**
 * The methods allowed by default.
 *
 * @example
 * ```ts
 * cors({ origin: ['https://app.example'], methods: DEFAULT_ALLOW_METHODS.filter((m) => m !== 'DELETE') })
 * ```
 */
export const DEFAULT_ALLOW_METHODS: readonly string[] = [
  'GET',
  'HEAD',
  'PUT',
  'PATCH',
  'POST',
  'DELETE',
]

/**
 * Response headers exposed when a response carries them. Fetch safelists only
 * Cache-Control, Content-Language, Content-Length, Content-Type, Expires, Last-Modified and
 * Pragma; everything the blocks set for clients to read is listed here. Names starting with
 * `ratelimit-` or `x-ratelimit-` are exposed too.
 *
 * @example
 * ```ts
 * EXPOSABLE_HEADERS.includes('ETag') // true
 * ```
 */
export const EXPOSABLE_HEADERS: readonly string[] = [
  'Content-Language',
  'Content-Location',
  'Deprecation',
  'ETag',
  'Idempotent-Replayed',
  'Last-Modified',
  'Link',
  'Location',
  'RateLimit',
  'RateLimit-Limit',
  'RateLimit-Policy',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'Sunset',
  'WWW-Authenticate',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Request-Id',
]

const EXPOSABLE = new Map(EXPOSABLE_HEADERS.map((name) => [name.toLowerCase(), name]))

/**
 * Which origins may read responses.
 *
 * @example
 * ```ts
 * const origin: CorsOrigin = (origin) => origin.endsWith('.app.example')
 * ```
 */
export type CorsOrigin = '*' | readonly string[] | ((origin: string, request: Request) => boolean)

/**
 * Options of {@link cors}.
 *
 * @example
 * ```ts
 * const options: CorsOptions = { origin: ['https://app.example'], credentials: true, maxAge: 600 }
 * ```
 */
export interface CorsOptions {
  /**
   * `'*'` (any origin, no credentials), a list of serialised origins
   * (`https://app.example:8443`, exact match), or a predicate. A predicate that throws
   * refuses the origin.
   */
  origin: CorsOrigin
  /** Send `Access-Control-Allow-Credentials: true` (cookies, client certificates). */
  credentials?: boolean
  /** Methods listed in preflight answers (default {@link DEFAULT_ALLOW_METHODS}). */
  methods?: readonly string[]
  /** Request headers allowed beyond {@link DEFAULT_ALLOW_HEADERS}. */
  allowHeaders?: readonly string[]
  /** Response headers always exposed, beyond those derived from the response. */
  exposeHeaders?: readonly string[]
  /** Expose the {@link EXPOSABLE_HEADERS} the response carries (default `true`). */
  deriveExposeHeaders?: boolean
  /** Access-Control-Max-Age in seconds (default 600; Chromium caps at 7200, Firefox 86400). */
  maxAge?: number
  /** The status of a preflight answer: 200 (default, as the reference service's requirements say: docs/spec.md) or 204. */
  preflightStatus?: 200 | 204
}

// RFC 6454 §7.1 serialisation of an origin: scheme "://" host [ ":" port ], no path.
const SERIALISED_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/

function checkOrigin(origin: string): void {
  let normal: string
  try {
    normal = new URL(origin).origin
  } catch {
    throw new TypeError(`cors(): "${origin}" is not an origin (expected scheme://host[:port])`)
  }
  if (origin !== normal) {
    throw new TypeError(`cors(): "${origin}" is not a serialised origin; did you mean "${normal}"?`)
  }
}

function checkTokens(what: string, values: readonly string[]): void {
  for (const value of values) {
    if (!isToken(value)) throw new TypeError(`cors(): ${what} "${value}" is not a valid token`)
  }
}

/**
 * Makes a CORS policy middleware. Throws a TypeError for a policy browsers would reject:
 * `origin: '*'` with `credentials: true`, an origin with a path or trailing slash, the
 * `null` origin (it is what sandboxed documents and `file:` pages send, so allowing it
 * allows them all), or malformed header and method names.
 *
 * @example
 * ```ts
 * const app = compose(cors({ origin: ['https://app.example'], credentials: true }))(handler)
 * ```
 */
export function cors(options: CorsOptions): Middleware {
  const { origin, credentials = false, maxAge = 600, preflightStatus = 200 } = options
  // Fetch, "CORS check": `*` is not a valid Access-Control-Allow-Origin when credentials are
  // included, so this policy could never work; refuse it now rather than in every browser.
  if (origin === '*' && credentials) {
    throw new TypeError("cors(): origin '*' cannot be combined with credentials; list the origins")
  }
  let allowList: ReadonlySet<string> | undefined
  if (Array.isArray(origin)) {
    for (const entry of origin as readonly string[]) {
      if (entry === 'null') throw new TypeError('cors(): the "null" origin cannot be allow-listed')
      checkOrigin(entry)
    }
    allowList = new Set(origin as readonly string[])
  } else if (origin !== '*' && typeof origin !== 'function') {
    throw new TypeError("cors(): origin must be '*', a list of origins or a function")
  }
  if (!Number.isInteger(maxAge) || maxAge < 0) {
    throw new TypeError('cors(): maxAge must be a non-negative integer (seconds)')
  }
  if (preflightStatus !== 200 && preflightStatus !== 204) {
    throw new TypeError('cors(): preflightStatus must be 200 or 204')
  }
  const methods = [...(options.methods ?? DEFAULT_ALLOW_METHODS)]
  checkTokens('method', methods)
  const allowHeaders = [...DEFAULT_ALLOW_HEADERS, ...(options.allowHeaders ?? [])]
  checkTokens('header', allowHeaders)
  const exposeHeaders = [...(options.exposeHeaders ?? [])]
  checkTokens('header', exposeHeaders)
  const derive = options.deriveExposeHeaders ?? true
  const isStatic = origin === '*'

  /** The Access-Control-Allow-Origin value for this request, or undefined if refused. */
  const allowedOrigin = (request: Request): string | undefined => {
    if (isStatic) return '*'
    const value = request.headers.get('origin')
    if (value === null || value.length > MAX_ORIGIN_LENGTH) return undefined
    if (allowList !== undefined) return allowList.has(value) ? value : undefined
    // A predicate sees only well-formed origins (or the literal "null").
    if (value !== 'null' && !SERIALISED_ORIGIN.test(value)) return undefined
    try {
      return (origin as (origin: string, request: Request) => boolean)(value, request) === true
        ? value
        : undefined
    } catch {
      return undefined
    }
  }

  const decorate = (headers: Headers, allowed: string | undefined): void => {
    // Fetch, "CORS protocol and HTTP caches": when Access-Control-Allow-Origin is anything but
    // `*` or a fixed origin, Vary: Origin goes on every response, CORS or not.
    if (!isStatic) mergeHeader(headers, 'vary', 'Origin')
    if (allowed === undefined) return
    headers.set('access-control-allow-origin', allowed)
    if (credentials) headers.set('access-control-allow-credentials', 'true')
  }

  return async (request, next) => {
    const allowed = allowedOrigin(request)
    // Fetch, "CORS-preflight request": OPTIONS with Origin and Access-Control-Request-Method.
    if (
      request.method === 'OPTIONS' &&
      request.headers.has('origin') &&
      request.headers.has('access-control-request-method')
    ) {
      const headers = new Headers()
      decorate(headers, allowed)
      if (allowed !== undefined) {
        headers.set('access-control-allow-methods', methods.join(', '))
        headers.set('access-control-allow-headers', allowHeaders.join(', '))
        headers.set('access-control-max-age', String(maxAge))
      }
      if (preflightStatus === 200) headers.set('content-length', '0')
      return new Response(null, { status: preflightStatus, headers })
    }

    let response: Response
    try {
      response = await next(request)
    } catch (error) {
      response = errorResponse(error, request)
    }
    return withHeaders(response, (headers) => {
      decorate(headers, allowed)
      if (allowed === undefined) return
      const exposed = [...exposeHeaders]
      if (derive) {
        for (const name of headers.keys()) {
          const known = EXPOSABLE.get(name)
          if (known !== undefined) exposed.push(known)
          else if (name.startsWith('ratelimit-') || name.startsWith('x-ratelimit-'))
            exposed.push(name)
        }
      }
      if (exposed.length > 0) mergeHeader(headers, 'access-control-expose-headers', exposed)
    })
  }
}
