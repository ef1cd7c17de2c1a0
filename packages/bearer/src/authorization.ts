/**
 * The access token of a request, from the `Authorization` header field only (RFC 6750 §2.1):
 * never from the URI query (§2.3) nor a form body (§2.2), which leak into logs, history and
 * Referer headers.
 *
 * @module
 */

/**
 * The longest access token accepted, in characters. A real token (an RFC 9068 JWT with a few
 * scopes, an opaque handle) is well under 2 KiB; past this limit the request is refused as
 * malformed before any parsing or cryptography.
 *
 * @example
 * ```ts
 * if (token.length > MAX_ACCESS_TOKEN_LENGTH) throw new Error('too long')
 * ```
 */
export const MAX_ACCESS_TOKEN_LENGTH = 4096

/**
 * What the `Authorization` field of a request says about a bearer token.
 * - `token`: one well-formed bearer token;
 * - `missing`: no field, or credentials of another scheme (RFC 6750 §3.1: answer without an
 *   `error`, the client may not know that a token is needed);
 * - `malformed`: a `Bearer` field that is not `Bearer <b64token>`, a token over
 *   {@link MAX_ACCESS_TOKEN_LENGTH}, or several credentials in one field (RFC 6750 §3.1
 *   `invalid_request`); `reason` says which, for the `error_description`.
 *
 * @example
 * ```ts
 * const found: BearerAuthorization = parseBearerAuthorization('Bearer mF_9.B5f-4.1JqM')
 * if (found.type === 'token') console.log(found.token) // 'mF_9.B5f-4.1JqM'
 * ```
 */
export type BearerAuthorization =
  | { readonly type: 'token'; readonly token: string }
  | { readonly type: 'missing' }
  | { readonly type: 'malformed'; readonly reason: string }

// RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9._~+/-]+=*$/
// A second set of bearer credentials in a combined field (duplicated Authorization fields
// reach the handler joined by ", ", RFC 9110 §5.3).
const BEARER_AFTER_COMMA = /,[ \t]*bearer(?:[ \t]|$)/i
// Past this the field is refused without looking into it (the token limit plus room for the
// scheme and whitespace).
const MAX_FIELD_LENGTH = MAX_ACCESS_TOKEN_LENGTH + 64

/** @internal What {@link owsBounds} reads of a string: its length and its UTF-16 code units. */
export interface CodeUnits {
  readonly length: number
  charCodeAt(index: number): number
}

/**
 * @internal Where `text` starts and ends once the spaces and tabs (RFC 9110 §5.6.3 OWS) at
 * either end are left out. Each code unit is read at most once: linear in the length, whatever
 * the input (a regular expression such as `/[ \t]+$/` backtracks over every run of whitespace
 * that is not at the end, quadratic in its length).
 */
export function owsBounds(text: CodeUnits): { start: number; end: number } {
  let start = 0
  let end = text.length
  while (start < end && isOws(text.charCodeAt(start))) start++
  while (end > start && isOws(text.charCodeAt(end - 1))) end--
  return { start, end }
}

// SP and HTAB.
function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09
}

const MISSING: BearerAuthorization = Object.freeze({ type: 'missing' })

function malformed(reason: string): BearerAuthorization {
  return { type: 'malformed', reason }
}

/**
 * Reads a bearer token from the value of an `Authorization` field (`null` when there is
 * none). Never throws. The scheme is matched without regard to case (RFC 9110 §11.1); one or
 * more spaces separate it from the token (RFC 9110 §11.4 `1*SP`); the token must be a
 * b64token (RFC 6750 §2.1) of at most {@link MAX_ACCESS_TOKEN_LENGTH} characters.
 *
 * @example
 * ```ts
 * parseBearerAuthorization(request.headers.get('authorization'))
 * // { type: 'token', token: '…' } | { type: 'missing' } | { type: 'malformed', reason: '…' }
 * ```
 */
export function parseBearerAuthorization(field: string | null | undefined): BearerAuthorization {
  if (field === null || field === undefined) return MISSING
  if (field.length > MAX_FIELD_LENGTH) return malformed('The Authorization field is too long.')
  // RFC 9110 §5.5: leading and trailing whitespace is not part of a field value.
  const { start, end } = owsBounds(field)
  const value = field.slice(start, end)
  if (value === '') return MISSING
  const space = value.indexOf(' ')
  const scheme = space === -1 ? value : value.slice(0, space)
  if (scheme.toLowerCase() !== 'bearer') {
    // RFC 6750 §3.1: credentials of another scheme are no bearer token at all, unless the
    // field also carries bearer credentials (two methods at once: invalid_request).
    return BEARER_AFTER_COMMA.test(value) || scheme.endsWith(',')
      ? malformed('The request carries more than one set of credentials.')
      : MISSING
  }
  if (space === -1) return malformed('The Bearer credentials carry no token.')
  const token = value.slice(space + 1).replace(/^ +/, '')
  if (token === '') return malformed('The Bearer credentials carry no token.')
  if (token.length > MAX_ACCESS_TOKEN_LENGTH) {
    return malformed(`The access token is longer than ${MAX_ACCESS_TOKEN_LENGTH} characters.`)
  }
  if (!B64TOKEN.test(token)) {
    return token.includes(',')
      ? malformed('The request carries more than one set of credentials.')
      : malformed('The access token is not a b64token (RFC 6750 section 2.1).')
  }
  return { type: 'token', token }
}

/**
 * Whether the URI query of `url` carries an `access_token` parameter (RFC 6750 §2.3). Such a
 * request is refused outright, even with a good Authorization field, so that a client leaking
 * tokens into URLs is noticed instead of silently ignored.
 *
 * @example
 * ```ts
 * hasQueryAccessToken('https://api.example/orders?access_token=abc') // true
 * ```
 */
export function hasQueryAccessToken(url: string): boolean {
  // A fast path: most URLs have no query at all. (The name may be percent-encoded, so the
  // query is parsed rather than searched.)
  if (!url.includes('?')) return false
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return false
  }
  return parsed.searchParams.has('access_token')
}
