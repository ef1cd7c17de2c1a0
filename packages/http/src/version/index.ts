/**
 * Deprecation signalling for a version prefix (`/v1/...`): the `Deprecation` header of
 * RFC 9745 (a structured-field Date, `@<unix-seconds>`), the `Sunset` header of RFC 8594 (an
 * HTTP-date) and `Link` relations `deprecation` and `sunset` pointing at documentation.
 *
 * @module
 */
import type { Middleware } from '@api-blocks/core'
import { errorResponse } from '../errors.ts'
import { withHeaders } from '../internal/response.ts'

/**
 * Formats a date as an RFC 9745 §2.1 `Deprecation` value: an RFC 9651 §3.3.7 Date
 * (`@` and whole seconds since the epoch; fractions are dropped).
 *
 * @example
 * ```ts
 * formatDeprecation(new Date('2023-06-30T23:59:59Z')) // '@1688169599'
 * ```
 */
export function formatDeprecation(date: Date): string {
  return `@${Math.floor(date.getTime() / 1000)}`
}

/**
 * Parses a `Deprecation` value (RFC 9745 §2.1). RFC 9651 §3.3.7: `@` then an sf-integer
 * (at most 15 digits, optionally negative). `undefined` when malformed. Never throws.
 *
 * @example
 * ```ts
 * parseDeprecation('@1688169599')?.toISOString() // '2023-06-30T23:59:59.000Z'
 * ```
 */
export function parseDeprecation(value: string | null | undefined): Date | undefined {
  if (typeof value !== 'string') return undefined
  const match = /^@(-?\d{1,15})$/.exec(value.trim())
  if (match === null) return undefined
  const date = new Date(Number(match[1]) * 1000)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/**
 * Options of {@link versionDeprecation}.
 *
 * @example
 * ```ts
 * const options: VersionDeprecationOptions = { prefix: '/v1', deprecation: new Date('2026-01-01T00:00:00Z') }
 * ```
 */
export interface VersionDeprecationOptions {
  /** The path prefix of the version, e.g. `/v1` (matches `/v1` and `/v1/...`, not `/v10`). */
  prefix: string
  /** When the version is (or will be) deprecated. */
  deprecation: Date
  /** When the version stops answering; MUST NOT be earlier than `deprecation` (RFC 9745 §4). */
  sunset?: Date
  /** Documentation of the deprecation: sent as `Link: <…>; rel="deprecation"`. */
  deprecationLink?: string
  /** Documentation of the sunset: sent as `Link: <…>; rel="sunset"`. */
  sunsetLink?: string
}

function checkLink(what: string, link: string): void {
  // RFC 8288 §3: the target is a URI-Reference inside <>; refuse anything that would break
  // the field (whitespace, angle brackets, quotes, controls, non-ASCII).
  if (!/^[\x21-\x7e]+$/.test(link) || /[<>"]/.test(link)) {
    throw new TypeError(`versionDeprecation(): ${what} "${link}" is not a usable URI reference`)
  }
}

function checkDate(what: string, date: unknown): asserts date is Date {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new TypeError(`versionDeprecation(): ${what} must be a valid Date`)
  }
}

/**
 * Adds `Deprecation`, `Sunset` and the `Link` relations to every response under one version
 * prefix, error responses included. Checks the configuration when made: valid dates, a
 * sunset not earlier than the deprecation (RFC 9745 §4), links that fit in a Link field.
 *
 * @example
 * ```ts
 * const v1 = versionDeprecation({
 *   prefix: '/v1',
 *   deprecation: new Date('2026-01-01T00:00:00Z'),
 *   sunset: new Date('2026-07-01T00:00:00Z'),
 *   deprecationLink: 'https://api.example/docs/v1-deprecation',
 * })
 * ```
 */
export function versionDeprecation(options: VersionDeprecationOptions): Middleware {
  const { deprecation, sunset, deprecationLink, sunsetLink } = options
  const prefix = options.prefix.replace(/\/+$/, '')
  if (!prefix.startsWith('/') || /[?#\s]/.test(prefix)) {
    throw new TypeError(
      `versionDeprecation(): prefix "${options.prefix}" must be a path such as /v1`,
    )
  }
  checkDate('deprecation', deprecation)
  if (sunset !== undefined) {
    checkDate('sunset', sunset)
    // RFC 9745 §4: the Sunset timestamp MUST NOT be earlier than the Deprecation one. Both
    // fields carry whole seconds, so compare at that resolution.
    if (Math.floor(sunset.getTime() / 1000) < Math.floor(deprecation.getTime() / 1000)) {
      throw new RangeError('versionDeprecation(): sunset must not be earlier than deprecation')
    }
  }
  const links: string[] = []
  if (deprecationLink !== undefined) {
    checkLink('deprecationLink', deprecationLink)
    // RFC 9745 §3: rel="deprecation"; the media type of the documentation is advisory.
    links.push(`<${deprecationLink}>; rel="deprecation"; type="text/html"`)
  }
  if (sunsetLink !== undefined) {
    checkLink('sunsetLink', sunsetLink)
    // RFC 8594 §6: the "sunset" link relation.
    links.push(`<${sunsetLink}>; rel="sunset"`)
  }
  const deprecationValue = formatDeprecation(deprecation)
  // RFC 8594 §3: Sunset is an HTTP-date; Date.prototype.toUTCString is exactly the IMF-fixdate
  // layout of RFC 9110 §5.6.7 (parsing HTTP-dates, all three forms, is @api-blocks/conditional's).
  const sunsetValue = sunset === undefined ? undefined : sunset.toUTCString()

  return async (request, next) => {
    const path = new URL(request.url).pathname
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return next(request)
    let response: Response
    try {
      response = await next(request)
    } catch (error) {
      response = errorResponse(error, request)
    }
    return withHeaders(response, (headers) => {
      headers.set('deprecation', deprecationValue)
      if (sunsetValue !== undefined) headers.set('sunset', sunsetValue)
      for (const link of links) headers.append('link', link)
    })
  }
}
