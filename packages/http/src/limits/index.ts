/**
 * Limits on the request line and on single header values, checked before anything else reads
 * them. Over a limit, the request is answered with a problem and never reaches the handler.
 *
 * | what | default | status | problem |
 * |---|---|---|---|
 * | path + query of the URL | 8000 characters | 414 | `uriTooLong` |
 * | one value of a listed header | 8192 characters | 431 | `headerTooLarge` with `header` |
 *
 * 8000 follows RFC 9112 §3, which recommends supporting request lines of at least 8000
 * octets. Repeated fields are measured joined (`a, b`), as `Headers.get` returns them.
 *
 * `maxBodyBytes` is the request body limit of the routes behind it: recorded for each request
 * (core's `setBodyLimit`), not checked here, so that every layer that reads the body (the
 * idempotency middleware for its fingerprint, `readBody` / `readJson` in a handler) reads at
 * most that much and answers the same 413, and a router can still set another limit per route.
 *
 * @module
 */

import type { Middleware } from '@api-blocks/core'
import { setBodyLimit } from '@api-blocks/core'
import { problems } from '@api-blocks/problem-details'
import { problemResponse } from '../errors.ts'

/**
 * The default longest path + query, in characters.
 *
 * @example
 * ```ts
 * limits({ maxUrlLength: DEFAULT_MAX_URL_LENGTH / 2 })
 * ```
 */
export const DEFAULT_MAX_URL_LENGTH = 8000
/**
 * The default longest value of one listed header, in characters.
 *
 * @example
 * ```ts
 * limits({ maxHeaderValueLength: DEFAULT_MAX_HEADER_VALUE_LENGTH * 2 })
 * ```
 */
export const DEFAULT_MAX_HEADER_VALUE_LENGTH = 8192

/**
 * The headers checked by default: the ones the blocks parse. `X-Request-Id` is not listed:
 * an oversized id is replaced by `requestId()`, not refused.
 *
 * @example
 * ```ts
 * limits({ headers: [...DEFAULT_LIMITED_HEADERS, 'x-api-key'] })
 * ```
 */
export const DEFAULT_LIMITED_HEADERS: readonly string[] = [
  'accept',
  'accept-encoding',
  'accept-language',
  'authorization',
  'content-type',
  'cookie',
  'dpop',
  'idempotency-key',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-unmodified-since',
  'origin',
]

/**
 * Options of {@link limits}.
 *
 * @example
 * ```ts
 * const options: LimitsOptions = { maxUrlLength: 4000, headerLimits: { cookie: 16384 } }
 * ```
 */
export interface LimitsOptions {
  /** The longest path + query accepted (default {@link DEFAULT_MAX_URL_LENGTH}). */
  maxUrlLength?: number
  /** The longest value of a listed header (default {@link DEFAULT_MAX_HEADER_VALUE_LENGTH}). */
  maxHeaderValueLength?: number
  /** The headers checked (default {@link DEFAULT_LIMITED_HEADERS}); `'all'` checks every one. */
  headers?: readonly string[] | 'all'
  /** Per-header limits that override `maxHeaderValueLength`, e.g. `{ cookie: 16384 }`. */
  headerLimits?: Readonly<Record<string, number>>
  /**
   * The largest request body of the routes behind this middleware, in bytes: recorded per
   * request (core's `setBodyLimit`) for every body reader to honour (default: none recorded;
   * `readBody` then uses its own default, 1 MiB).
   */
  maxBodyBytes?: number
}

function checkLimit(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`limits(): ${what} must be a positive integer`)
  }
}

function targetLength(url: string): number {
  // The request target in origin-form (RFC 9112 §3.2.1) is the path and the query.
  const parsed = new URL(url)
  return parsed.pathname.length + parsed.search.length
}

/**
 * Refuses a request whose URL or a single header value is over its limit: 414
 * (`problems.uriTooLong`, RFC 9110 §15.5.15) or 431 (`problems.headerTooLarge` naming the
 * header, RFC 6585 §5), and records the routes' body limit (`maxBodyBytes`) for the body
 * readers behind it.
 *
 * @example
 * ```ts
 * const app = compose(requestId(), limits({ maxUrlLength: 2048, maxBodyBytes: 64 * 1024 }))(handler)
 * ```
 */
export function limits(options: LimitsOptions = {}): Middleware {
  const maxUrl = options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH
  const maxValue = options.maxHeaderValueLength ?? DEFAULT_MAX_HEADER_VALUE_LENGTH
  checkLimit('maxUrlLength', maxUrl)
  checkLimit('maxHeaderValueLength', maxValue)
  const maxBody = options.maxBodyBytes
  if (maxBody !== undefined && (!Number.isSafeInteger(maxBody) || maxBody < 0)) {
    throw new RangeError('limits(): maxBodyBytes must be a non-negative integer')
  }
  const overrides = new Map<string, number>()
  for (const [name, limit] of Object.entries(options.headerLimits ?? {})) {
    checkLimit(`headerLimits.${name}`, limit)
    overrides.set(name.toLowerCase(), limit)
  }
  const all = options.headers === 'all'
  const listed =
    options.headers === 'all'
      ? []
      : [...(options.headers ?? DEFAULT_LIMITED_HEADERS), ...overrides.keys()]
  const names = [...new Set(listed.map((name) => name.toLowerCase()))]

  const tooLarge = (request: Request, header: string): Response =>
    problemResponse(
      problems.headerTooLarge.create({ header, detail: `The ${header} header is too large.` }),
      request,
    )

  return async (request, next) => {
    // RFC 9110 §15.5.15: 414 when the target URI is longer than the server will interpret.
    if (request.url.length > maxUrl && targetLength(request.url) > maxUrl) {
      return problemResponse(
        problems.uriTooLong.create({
          detail: `The request URI is longer than ${maxUrl} characters.`,
        }),
        request,
      )
    }
    // RFC 6585 §5: 431 when one header field (or all of them) is too large.
    if (all) {
      for (const [name, value] of request.headers) {
        if (value.length > (overrides.get(name) ?? maxValue)) return tooLarge(request, name)
      }
    } else {
      for (const name of names) {
        const value = request.headers.get(name)
        if (value !== null && value.length > (overrides.get(name) ?? maxValue)) {
          return tooLarge(request, name)
        }
      }
    }
    if (maxBody !== undefined) setBodyLimit(request, maxBody)
    return next(request)
  }
}
