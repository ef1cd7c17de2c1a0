// The compression middleware, independent of where the encoders come from: the Web build
// (./index.ts) passes CompressionStream encoders, the Node build (./node.ts) node:zlib ones.
import type { Middleware } from '@api-blocks/core'
import { readAhead, wholeBodyOf } from '@api-blocks/core'
import { codedEtag, strongOpaque, toIdentityTags } from '../compress/etag.ts'
import { mergeHeader, parseCacheControl } from '../headers/index.ts'
import { negotiateEncoding } from '../negotiate/encoding.ts'
import { parseMediaType } from '../negotiate/media-type.ts'
import { withHeaders } from './response.ts'

/**
 * Makes one fresh encoding transform per response: bytes written to `writable` come out
 * encoded from `readable` (a `CompressionStream` is one).
 *
 * @example
 * ```ts
 * const gzip: Encoder = () => new CompressionStream('gzip')
 * ```
 */
export type Encoder = () => {
  readonly readable: ReadableStream<Uint8Array<ArrayBuffer>>
  readonly writable: WritableStream<Uint8Array<ArrayBuffer>>
}

/** Options of `compress()`. */
export interface CompressOptions {
  /**
   * Content codings offered, in the server's order of preference. Default: every coding the
   * encoders support, in the order `zstd`, `br`, `gzip`, `deflate` (the Web build offers
   * `gzip` and `deflate` only; see `webEncoders`).
   */
  encodings?: readonly string[]
  /** Encoders by coding name; default: the build's own (`webEncoders` or `nodeEncoders`). */
  encoders?: Readonly<Record<string, Encoder>>
  /**
   * Bodies under this many bytes are sent as they are (default 1024). The length is the
   * Content-Length when the response has one, else the body's own when it is in memory, else
   * the stream is read ahead up to this many bytes to find out (so a stream's first bytes go
   * out once `threshold` bytes are there, or it ended).
   */
  threshold?: number
  /** Which Content-Types are worth compressing (default {@link isCompressible}). */
  compressible?: (contentType: string) => boolean
}

/** The default size threshold, in bytes. */
export const DEFAULT_COMPRESS_THRESHOLD = 1024

/**
 * Whether a Content-Type is worth compressing: text (except event streams, which must flush
 * each event), JSON, XML and JavaScript, and any `+json` / `+xml` type. Images, audio, video,
 * archives and fonts are already compressed.
 *
 * @example
 * ```ts
 * isCompressible('application/problem+json') // true
 * isCompressible('image/png') // false
 * ```
 */
export function isCompressible(contentType: string): boolean {
  const media = parseMediaType(contentType)
  if (media === undefined) return false
  if (media.type === 'text') return media.subtype !== 'event-stream'
  if (media.suffix === 'json' || media.suffix === 'xml') return true
  return (
    media.type === 'application' &&
    ['json', 'xml', 'javascript', 'ecmascript', 'x-www-form-urlencoded', 'graphql'].includes(
      media.subtype,
    )
  )
}

// Builds the middleware over a set of encoders and the default preference order.
export function createCompress(
  defaultEncoders: Readonly<Record<string, Encoder>>,
  defaultOrder: readonly string[],
  options: CompressOptions,
): Middleware {
  const encoders = options.encoders ?? defaultEncoders
  const encodings = [...(options.encodings ?? defaultOrder.filter((name) => name in encoders))]
  for (const coding of encodings) {
    if (coding !== 'identity' && encoders[coding] === undefined) {
      throw new TypeError(`compress(): no encoder for "${coding}" in this runtime`)
    }
  }
  const threshold = options.threshold ?? DEFAULT_COMPRESS_THRESHOLD
  if (!Number.isSafeInteger(threshold) || threshold < 0) {
    throw new RangeError('compress(): threshold must be a non-negative integer')
  }
  const compressible = options.compressible ?? isCompressible

  /** Whether this response would be compressed for a client that accepts a coding. */
  const eligible = (response: Response): boolean => {
    const { status, headers } = response
    // RFC 9110 §15.3.5 and §15.4.5: 204 and 304 have no content; a 206 range of the identity
    // bytes cannot be re-encoded as a whole (§14.1 ranges are over the selected representation).
    if (status < 200 || status === 204 || status === 206 || status === 304) return false
    const coding = headers.get('content-encoding')
    if (coding !== null && coding.trim().toLowerCase() !== 'identity') return false
    // RFC 9111 §5.2.2.6: no-transform forbids intermediaries (and this layer) to transform.
    if (parseCacheControl(headers.get('cache-control')).some((d) => d.name === 'no-transform')) {
      return false
    }
    const type = headers.get('content-type')
    if (type === null || !compressible(type)) return false
    const length = knownLength(headers)
    return length === undefined || length >= threshold
  }

  /** The coding this request would get, where the response can be compressed at all. */
  const negotiate = (request: Request): string | undefined => {
    const choice = negotiateEncoding(request.headers.get('accept-encoding'), encodings).choice
    return choice === undefined || choice === 'identity' ? undefined : choice
  }

  return async (request, next) => {
    if (encodings.length === 0) return next(request)
    // RFC 9110 §8.8.3.3: the tags of coded forms ("7%-gzip") are mapped back to the identity
    // tag ("7") the handler knows, so its preconditions see the representation's version.
    const sent = identityPreconditions(request, negotiate)
    const response = await next(request)
    if (response.type === 'error') return response
    if (response.status === 304) {
      // RFC 9110 §15.4.5: a 304 carries the ETag and the Vary the 200 would have carried. The
      // 200 depended on Accept-Encoding; and when the client revalidated the coded form it
      // holds (its tag named the coding this request negotiates), the 200 would have been
      // that form again, so the 304 names it. Otherwise the identity tag stays: the client
      // holds the identity form (a small body, or one fetched without compression), and
      // identity is always an acceptable coding (§12.5.3).
      return withHeaders(response, (headers) => {
        mergeHeader(headers, 'vary', 'Accept-Encoding')
        const etag = headers.get('etag')
        const opaque = etag === null ? undefined : strongOpaque(etag)
        if (sent !== undefined && opaque !== undefined && sent.bases.includes(opaque)) {
          headers.set('etag', codedEtag(etag!, sent.coding)!)
        }
      })
    }
    if (!eligible(response)) return response
    // The threshold is about the body, whether or not a Content-Length says how long it is.
    // A body in memory (the node adapter's responses) is measured without being consumed.
    const whole = wholeBodyOf(response)
    const unknownLength = knownLength(response.headers) === undefined
    if (unknownLength && whole != null && byteLength(whole, threshold) < threshold) return response
    const coding = request.method === 'HEAD' ? undefined : negotiate(request)
    const encoder = coding === undefined ? undefined : encoders[coding]
    let body = whole === null ? null : response.body
    if (encoder === undefined || body === null) {
      // Sent as it is: only Vary changes, in place, so the body keeps its form (a string or
      // bytes, which adapters write in one go, rather than a stream).
      // RFC 9110 §12.5.5: the choice depends on Accept-Encoding, whatever it turns out to be.
      return withHeaders(response, (headers) => mergeHeader(headers, 'vary', 'Accept-Encoding'))
    }
    if (unknownLength && whole === undefined && threshold > 0) {
      // A stream: read ahead up to the threshold. One that ends before is sent as it is, as a
      // body with a small Content-Length is; past it, what was read goes on with the rest.
      const ahead = await readAhead(body, threshold - 1)
      // Chunks of a Response body are Uint8Arrays over ArrayBuffers (the Fetch standard).
      if (ahead.complete) return new Response(ahead.bytes as Uint8Array<ArrayBuffer>, response)
      body = ahead.stream as ReadableStream<Uint8Array<ArrayBuffer>>
    }
    const headers = new Headers(response.headers)
    mergeHeader(headers, 'vary', 'Accept-Encoding')
    headers.set('content-encoding', coding!)
    headers.delete('content-length')
    // Byte ranges of the compressed stream are not offered.
    headers.delete('accept-ranges')
    // RFC 9110 §8.8.3.3: the coded form is another representation, with its own strong tag.
    const etag = headers.get('etag')
    if (etag !== null) {
      const coded = codedEtag(etag, coding!)
      if (coded === undefined) headers.delete('etag')
      else headers.set('etag', coded)
    }
    return new Response(body.pipeThrough(encoder()), {
      status: response.status,
      statusText: response.statusText,
      headers,
    })
  }
}

/** The Content-Length, when the response has a valid one. */
function knownLength(headers: Headers): number | undefined {
  const length = headers.get('content-length')
  return length !== null && /^\d+$/.test(length.trim()) ? Number(length) : undefined
}

/**
 * The UTF-8 length of a body in memory, exactly when it is under `threshold`: a string has at
 * least as many UTF-8 bytes as UTF-16 units, so a long one is not encoded to be measured.
 */
function byteLength(body: string | Uint8Array, threshold: number): number {
  if (typeof body !== 'string') return body.byteLength
  return body.length >= threshold ? body.length : new TextEncoder().encode(body).byteLength
}

/** The identity tags that stood for the tags of coded forms in this request's If-None-Match. */
interface SentCodedTags {
  /** The coding this request negotiates, the one those tags named. */
  readonly coding: string
  /** The opaque parts of their identity tags. */
  readonly bases: readonly string[]
}

// Rewrites If-Match and If-None-Match in place for the handler (see toIdentityTags), and
// answers what a 304 needs to name the coded form again.
function identityPreconditions(
  request: Request,
  negotiate: (request: Request) => string | undefined,
): SentCodedTags | undefined {
  const headers = request.headers
  const ifMatch = headers.get('if-match')
  // RFC 9110 §13.1.1: If-Match asks whether the resource is still at the version the client
  // saw, whichever form it saw it in: every coding's tag stands for the identity tag.
  if (ifMatch !== null) {
    const rewritten = toIdentityTags(ifMatch, () => true)
    if (rewritten !== undefined) headers.set('if-match', rewritten.value)
  }
  const ifNoneMatch = headers.get('if-none-match')
  if (ifNoneMatch === null) return undefined
  const read = request.method === 'GET' || request.method === 'HEAD'
  // RFC 9110 §13.1.2: on GET and HEAD, If-None-Match is compared with the representation
  // this request selects: only the tag of the coding it negotiates can match (HEAD is never
  // compressed, so none), the tags of other codings are dropped. On other methods it guards
  // the resource, as If-Match does.
  const coding = request.method === 'GET' ? negotiate(request) : undefined
  const rewritten = toIdentityTags(ifNoneMatch, (named) => !read || named === coding)
  if (rewritten === undefined) return undefined
  headers.set('if-none-match', rewritten.value)
  return coding === undefined || rewritten.bases.length === 0
    ? undefined
    : { coding, bases: rewritten.bases }
}
