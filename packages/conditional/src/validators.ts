/**
 * Validators from what the resource already knows (RFC 9110 §8.8): an entity tag from a
 * version or revision, Last-Modified from an `updatedAt`, and, as an opt-in fallback, an
 * entity tag hashed from the body bytes.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8
 * @module
 */
import type { BodyInitLike } from '@api-blocks/core'
import { sha256Base64url } from '@api-blocks/core/crypto'
import { formatEntityTag } from './entity-tag.ts'
import type { Validators } from './evaluate.ts'
import { formatHttpDate } from './http-date.ts'

/**
 * Options of {@link etagFromVersion} and {@link etagFromBody}.
 *
 * @example
 * ```ts
 * const options: EtagOptions = { weak: true }
 * etagFromVersion(7, options) // 'W/"7"'
 * ```
 */
export interface EtagOptions {
  /**
   * Make a weak tag (`W/"…"`, RFC 9110 §8.8.1): for representations that are equivalent but
   * not byte-identical. Default `false`. A weak tag never satisfies If-Match, which uses the
   * strong comparison, so resources that accept writes want strong tags.
   */
  weak?: boolean
}

const HEX = '0123456789ABCDEF'

// RFC 9110 §8.8.3 etagc, limited to visible ASCII, minus "%" (the escape character). Keeping
// "%" out keeps the encoding one-to-one: "a b" and "a%20b" give different tags.
function isPlain(code: number): boolean {
  return code === 0x21 || (code >= 0x23 && code <= 0x7e && code !== 0x25)
}

const encoder = new TextEncoder()

function toOpaque(text: string): string {
  let i = 0
  while (i < text.length && isPlain(text.charCodeAt(i))) i++
  if (i === text.length) return text
  let out = text.slice(0, i)
  for (const byte of encoder.encode(text.slice(i))) {
    out += isPlain(byte) ? String.fromCharCode(byte) : `%${HEX[byte >> 4]}${HEX[byte & 15]}`
  }
  return out
}

/**
 * A strong entity tag from a version, revision or sequence number the resource stores and
 * bumps on every change: no body is read or hashed, so it can be computed before the handler
 * runs. Characters an entity tag cannot hold (space, `"`, non-ASCII) and `%` are
 * percent-encoded as UTF-8, so every distinct version gives a distinct tag.
 *
 * @example
 * ```ts
 * etagFromVersion(7)                     // '"7"'
 * etagFromVersion('2026-01-01 12:00')    // '"2026-01-01%2012:00"'
 * etagFromVersion(7, { weak: true })     // 'W/"7"'
 * ```
 */
export function etagFromVersion(version: string | number | bigint, options?: EtagOptions): string {
  if (typeof version === 'number' && !Number.isFinite(version)) {
    throw new TypeError(`Version ${version} is not a finite number`)
  }
  const opaque = toOpaque(typeof version === 'string' ? version : String(version))
  return options?.weak === true ? `W/"${opaque}"` : `"${opaque}"`
}

/**
 * A strong entity tag from the SHA-256 of the complete body bytes, as base64url. The opt-in
 * fallback for responses with no version to tag from: it has to read the whole body, so prefer
 * {@link etagFromVersion}.
 *
 * The tag depends only on the bytes, never on how a stream was chunked or on the runtime:
 * the stream is read to the end and hashed once, through `@api-blocks/core/crypto` (node:crypto
 * under the `node` export condition, Web Crypto elsewhere; both give the same digest). The body
 * is consumed; pass a clone (`response.clone().body`) if you still need it.
 *
 * @example
 * ```ts
 * await etagFromBody('{"id":1}') // '"…43 base64url characters…"'
 * await etagFromBody(response.clone().body, { weak: true })
 * ```
 */
export function etagFromBody(body: BodyInitLike | null, options?: EtagOptions): Promise<string> {
  // Bodies already in memory are hashed as they are (a string as its UTF-8); anything else
  // (streams, Blob, FormData, URLSearchParams) goes through a Response, which reads it to the end.
  if (body === null) return hashToEtag(EMPTY, options)
  if (typeof body === 'string' || body instanceof Uint8Array) return hashToEtag(body, options)
  if (body instanceof ArrayBuffer) return hashToEtag(new Uint8Array(body), options)
  if (ArrayBuffer.isView(body)) {
    return hashToEtag(new Uint8Array(body.buffer, body.byteOffset, body.byteLength), options)
  }
  try {
    return new Response(body).bytes().then((bytes) => hashToEtag(bytes, options))
  } catch (error) {
    // A stream already locked or read: reject, as for any other failure, rather than throw.
    return Promise.reject(error)
  }
}

const EMPTY = new Uint8Array(0)

/**
 * @internal SHA-256 of a body already in memory (a string counts as its UTF-8), as an entity
 * tag.
 */
export function hashToEtag(body: Uint8Array | string, options?: EtagOptions): Promise<string> {
  const weak = options?.weak === true
  return sha256Base64url(body).then((opaque) => (weak ? `W/"${opaque}"` : `"${opaque}"`))
}

/**
 * The ETag and Last-Modified response fields for a resource's validators, as a plain header
 * record (anything `new Headers()` takes). Last-Modified is an IMF-fixdate with the milliseconds dropped. Use
 * the same record for the 200 and, through {@link notModifiedResponse}, for the 304.
 *
 * @example
 * ```ts
 * validatorHeaders({ etag: etagFromVersion(3), lastModified: new Date(784111777000) })
 * // { etag: '"3"', 'last-modified': 'Sun, 06 Nov 1994 08:49:37 GMT' }
 * ```
 */
export function validatorHeaders(validators: Validators): Record<string, string> {
  const headers: Record<string, string> = {}
  const { etag, lastModified } = validators
  if (etag !== undefined) headers['etag'] = typeof etag === 'string' ? etag : formatEntityTag(etag)
  if (lastModified !== undefined) headers['last-modified'] = formatHttpDate(lastModified)
  return headers
}

/**
 * Adds ETag and Last-Modified from the validators to a 2xx response, leaving any the handler
 * already set. Any other status is returned untouched: a validator on an error would let a
 * later 304 hide that the status changed (honojs/hono#5191). Returns a new Response when the
 * given one has immutable headers (one returned by `fetch`).
 *
 * @example
 * ```ts
 * return withValidators(Response.json(order), { etag: etagFromVersion(order.version) })
 * ```
 */
export function withValidators(response: Response, validators: Validators): Response {
  if (response.status < 200 || response.status > 299) return response
  const fields = Object.entries(validatorHeaders(validators)).filter(
    ([name]) => !response.headers.has(name),
  )
  if (fields.length === 0) return response
  try {
    for (const [name, value] of fields) response.headers.set(name, value)
    return response
  } catch {
    // Immutable headers (a fetched Response): copy into a Response we own.
    const copy = new Response(response.body, response)
    for (const [name, value] of fields) copy.headers.set(name, value)
    return copy
  }
}
