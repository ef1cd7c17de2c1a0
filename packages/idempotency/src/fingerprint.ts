/**
 * Request fingerprints: what makes two requests with one Idempotency-Key "the same request".
 *
 * The draft lets a server combine the key with a fingerprint of the payload
 * (draft-ietf-httpapi-idempotency-key-header §2.4) and requires the key not be reused with a
 * different payload (§2.7). A fingerprint here is SHA-256 over, in order and each part framed
 * by its byte length (version 1):
 *
 * 1. the method, uppercased;
 * 2. the route: a template such as `POST /v1/orders` names the operation, so one key sent to
 *    two endpoints is two requests;
 * 3. each chosen header field, sorted by name: its lowercased name and its value, or a mark
 *    for "absent" (distinct from an empty value);
 * 4. the body: for a JSON media type (`application/json` or any `+json` type) that parses, its
 *    canonical JSON text (`parseJsonCanonical` of `@api-blocks/core`), so member order and
 *    whitespace do not matter; otherwise (not JSON, not UTF-8, too deep, a number JSON cannot
 *    write) its raw bytes. A mark says which, so a raw body never collides with a canonical
 *    one.
 *
 * @module
 */
import { parseJsonCanonical } from '@api-blocks/core'
import { sha256, sha256Base64url } from '@api-blocks/core/crypto'
import { frame, toHex } from './internal/encoding.ts'

/**
 * How a fingerprint is written: lowercase hex (64 characters) or base64url (43 characters).
 *
 * @example
 * ```ts
 * const fingerprint = await computeFingerprint(input, { encoding: 'hex' satisfies FingerprintEncoding })
 * ```
 */
export type FingerprintEncoding = 'hex' | 'base64url'

/**
 * The parts of a request that its fingerprint covers.
 *
 * @example
 * ```ts
 * const input: FingerprintInput = {
 *   method: 'PATCH',
 *   route: '/v1/orders/42',
 *   body: new TextEncoder().encode('{"qty":2}'),
 *   contentType: 'application/merge-patch+json',
 *   headers: [['if-match', '"v7"']],
 * }
 * ```
 */
export interface FingerprintInput {
  /** The request method; compared case-insensitively. */
  readonly method: string
  /** The route: a template (`/v1/orders/:id`) or the request's path and query. */
  readonly route: string
  /** The body bytes as received. */
  readonly body: Uint8Array
  /** The Content-Type; a JSON media type makes the body canonical JSON. */
  readonly contentType?: string | null | undefined
  /** Header fields to cover: name and value, `null` when the request lacks the field. */
  readonly headers?: readonly (readonly [name: string, value: string | null])[] | undefined
}

/**
 * Options of {@link computeFingerprint}.
 *
 * @example
 * ```ts
 * await computeFingerprint(input, { encoding: 'base64url' })
 * ```
 */
export interface FingerprintOptions {
  /** Default `base64url`. */
  readonly encoding?: FingerprintEncoding
}

const VERSION = 'api-blocks.idempotency.fingerprint.v1'
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * Whether a Content-Type names JSON: `application/json` or a structured suffix `+json`
 * (RFC 6839 §3.1), parameters ignored.
 *
 * @example
 * ```ts
 * isJsonMediaType('application/merge-patch+json; charset=utf-8') // true
 * isJsonMediaType('text/plain') // false
 * ```
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  if (!contentType) return false
  // The usual field as most clients send it, without taking it apart.
  if (contentType === 'application/json') return true
  const essence = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase()
  return (
    essence === 'application/json' || /^[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(essence)
  )
}

// The canonical JSON text of a body, or undefined when it is hashed as raw bytes. The value
// JSON.parse gave, if any, goes to `parsed`.
function canonicalText(
  body: Uint8Array,
  contentType: string | null | undefined,
  parsed?: { value?: unknown },
): string | undefined {
  if (!isJsonMediaType(contentType)) return undefined
  let text: string
  try {
    text = decoder.decode(body)
  } catch {
    return undefined
  }
  const result = parseJsonCanonical(text)
  if (result !== undefined && parsed !== undefined) parsed.value = result.value
  return result?.canonical
}

/**
 * Computes the SHA-256 fingerprint of a request (node:crypto under the `node` export
 * condition, Web Crypto elsewhere: `@api-blocks/core/crypto`).
 *
 * @example
 * ```ts
 * const body = new TextEncoder().encode('{"amount":100,"currency":"EUR"}')
 * const a = await computeFingerprint({ method: 'POST', route: '/v1/payments', body, contentType: 'application/json' })
 * const reordered = new TextEncoder().encode('{ "currency": "EUR", "amount": 100 }')
 * const b = await computeFingerprint({ method: 'POST', route: '/v1/payments', body: reordered, contentType: 'application/json' })
 * a === b // true
 * ```
 */
export function computeFingerprint(
  input: FingerprintInput,
  options: FingerprintOptions = {},
): Promise<string> {
  return fingerprintOf(input, options.encoding ?? 'base64url')
}

/**
 * @internal {@link computeFingerprint}, and the value `JSON.parse` gave for a JSON body goes
 * to `parsed` (the body bytes decoded as strict UTF-8, a leading BOM kept, so such a body is
 * not JSON here), for the middleware to hand on to `readJson`.
 */
export function fingerprintOf(
  input: FingerprintInput,
  encoding: FingerprintEncoding,
  parsed?: { value?: unknown },
): Promise<string> {
  const parts: (string | Uint8Array)[] = [VERSION, input.method.toUpperCase(), input.route]
  const chosen = input.headers ?? []
  if (chosen.length === 0) parts.push('0')
  else {
    const headers = [...chosen]
      .map(([name, value]) => [name.toLowerCase(), value] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    parts.push(String(headers.length))
    for (const [name, value] of headers) parts.push(name, value === null ? '-' : `+${value}`)
  }
  const canonical = canonicalText(input.body, input.contentType, parsed)
  if (canonical === undefined) parts.push('raw', input.body)
  else parts.push('json', canonical)
  // A JSON body frames as text (hashed without being encoded first); a raw one as bytes.
  const framed = frame(parts)
  return encoding === 'hex' ? sha256(framed).then(toHex) : sha256Base64url(framed)
}
