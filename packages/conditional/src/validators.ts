/**
 * Validators from what the resource already knows (RFC 9110 §8.8): an entity tag from a
 * version or revision, Last-Modified from an `updatedAt`, and, as an opt-in fallback, an
 * entity tag hashed from the body bytes.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8
 * @module
 */
import { formatEntityTag } from './entity-tag.ts'
import type { Validators } from './evaluate.ts'
import { formatHttpDate } from './http-date.ts'

/** Options of {@link etagFromVersion} and {@link etagFromBody}. */
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

function base64url(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out +=
      alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!
  }
  if (i < bytes.length) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8)
    out += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]!
    if (i + 1 < bytes.length) out += alphabet[(n >> 6) & 63]!
  }
  return out
}

/**
 * A strong entity tag from the SHA-256 of the complete body bytes (crypto.subtle), as
 * base64url. The opt-in fallback for responses with no version to tag from: it has to read
 * the whole body, so prefer {@link etagFromVersion}.
 *
 * The tag depends only on the bytes, never on how a stream was chunked: the stream is read to
 * the end and hashed once. The body is consumed; pass a clone (`response.clone().body`) if you
 * still need it.
 *
 * @example
 * ```ts
 * await etagFromBody('{"id":1}') // '"…43 base64url characters…"'
 * await etagFromBody(response.clone().body, { weak: true })
 * ```
 */
export function etagFromBody(body: BodyInit | null, options?: EtagOptions): Promise<string> {
  // Bodies already in memory are hashed as they are (a string as its UTF-8, which node:crypto
  // encodes itself); anything else (streams, Blob, FormData) goes through a Response, which
  // reads it to the end.
  try {
    if (body === null) return Promise.resolve(hashToEtag(new Uint8Array(0), options))
    if (typeof body === 'string') return Promise.resolve(hashToEtag(body, options))
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
      return Promise.resolve(hashToEtag(body, options))
    }
    return new Response(body).arrayBuffer().then((bytes) => hashToEtag(bytes, options))
  } catch (error) {
    return Promise.reject(error)
  }
}

interface NodeCrypto {
  createHash(algorithm: 'sha256'): {
    update(data: Uint8Array | string): { digest(encoding: 'base64url'): string }
  }
}

// Node fast path: crypto.subtle.digest hops to the thread pool and back (about 25 µs a call on
// Node 24); node:crypto's createHash answers in place. Reached through
// process.getBuiltinModule (Node >= 22.3, Bun, Deno), not a static import, so the package stays
// Web-standard; elsewhere Web Crypto is used. Both give the same digest (tested).
const nodeCrypto: NodeCrypto | undefined = (() => {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process
  try {
    const module = process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined
    return typeof module?.createHash === 'function' ? module : undefined
  } catch {
    return undefined
  }
})()

function asBytes(source: BufferSource): Uint8Array {
  return source instanceof ArrayBuffer
    ? new Uint8Array(source)
    : new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
}

/**
 * @internal SHA-256 of a body already in memory (a string counts as its UTF-8), as an entity
 * tag: a string on node:crypto (answered in place), a promise through Web Crypto.
 */
export function hashToEtag(
  body: BufferSource | string,
  options?: EtagOptions & { web?: boolean },
): string | Promise<string> {
  const quote = (opaque: string) => (options?.weak === true ? `W/"${opaque}"` : `"${opaque}"`)
  if (nodeCrypto !== undefined && options?.web !== true) {
    const data = typeof body === 'string' ? body : asBytes(body)
    return quote(nodeCrypto.createHash('sha256').update(data).digest('base64url'))
  }
  const bytes = typeof body === 'string' ? encoder.encode(body) : body
  return crypto.subtle
    .digest('SHA-256', bytes as BufferSource)
    .then((digest) => quote(base64url(new Uint8Array(digest))))
}

/**
 * The ETag and Last-Modified response fields for a resource's validators, as a plain header
 * record (`HeadersInit`). Last-Modified is an IMF-fixdate with the milliseconds dropped. Use
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
