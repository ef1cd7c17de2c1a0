// The compression middleware, independent of where the encoders come from: the Web build
// (./index.ts) passes CompressionStream encoders, the Node build (./node.ts) node:zlib ones.
import type { Middleware } from '@api-blocks/core'
import { copyContext, notModifiedResponse, readAhead, wholeBodyOf } from '@api-blocks/core'
import { codedEtag, ifNoneMatchMatches, strongOpaque, toIdentityTags } from '../compress/etag.ts'
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

/** Methods that preconditions do not apply to (RFC 9110 §13.2.1). */
const WITHOUT_PRECONDITIONS: ReadonlySet<string> = new Set(['CONNECT', 'OPTIONS', 'TRACE'])

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
    const read = request.method === 'GET' || request.method === 'HEAD'
    // The coding this request would get; HEAD too, as GET does, so that it carries the header
    // fields a GET would (RFC 9110 §9.3.2: Content-Encoding, the coded ETag, Vary).
    const coding = negotiate(request)
    const conditions = identityPreconditions(request.headers, read, coding)
    let forwarded = request
    // RFC 9110 §13.2.1: preconditions do not apply to CONNECT, OPTIONS and TRACE, so their
    // fields are left alone (and `new Request` refuses CONNECT and TRACE: it would throw).
    if (conditions.headers !== undefined && !WITHOUT_PRECONDITIONS.has(request.method)) {
      // A new Request, not the fields rewritten in place: an incoming request's headers are
      // immutable on some runtimes (Workers, Deno.serve), and the layers outside this one
      // must see what the client sent. The body moves over unread (Fetch "new Request").
      forwarded = new Request(request, { headers: conditions.headers })
      copyContext(request, forwarded)
    }
    const response = await next(forwarded)
    if (response.type === 'error') return response
    if (response.status === 304) {
      // RFC 9110 §15.4.5: a 304 carries the ETag and the Vary its 200 would have carried. The
      // handler only saw the tags of the coded form this request negotiates (every other tag
      // is evaluated below, on the response as it is sent), so its 304 says that the client
      // holds that form: the 200 would have been that form again, which exists only for a
      // body that is compressed, and so depends on Accept-Encoding. A 304 that cannot be
      // traced to such a tag (If-Modified-Since alone) is left as the handler made it.
      const etag = response.headers.get('etag')
      const opaque = etag === null ? undefined : strongOpaque(etag)
      if (coding === undefined || opaque === undefined || !conditions.bases.includes(opaque)) {
        return response
      }
      return withHeaders(response, (headers) => {
        mergeHeader(headers, 'vary', 'Accept-Encoding')
        headers.set('etag', codedEtag(etag!, coding)!)
      })
    }
    const sent = await outgoing(response, request.method === 'HEAD', coding)
    // RFC 9110 §13.1.2, §13.2.2 step 3: If-None-Match, evaluated on the representation this
    // request selects, now that it is known (identity or coded, with its own tag); a 2xx
    // means that the preconditions before it held. A 304 carries the fields of that 200.
    const ifNoneMatch = conditions.ifNoneMatch
    if (ifNoneMatch === undefined || sent.status < 200 || sent.status > 299) return sent.build()
    if (!ifNoneMatchMatches(ifNoneMatch, sent.headers.get('etag'))) return sent.build()
    sent.discard()
    return notModified(sent.headers)
  }

  /**
   * The response as it will be sent, before its body is encoded: its header fields, and how
   * to build it (or drop its body, for a 304).
   */
  async function outgoing(
    response: Response,
    head: boolean,
    coding: string | undefined,
  ): Promise<Outgoing> {
    const asIs = (sent: Response = response): Outgoing => ({
      status: sent.status,
      headers: sent.headers,
      build: () => sent,
      discard: () => void sent.body?.cancel().catch(() => undefined),
    })
    if (!eligible(response)) return asIs()
    // The threshold is about the body, whether or not a Content-Length says how long it is.
    // A body in memory (the node adapter's responses) is measured without being consumed.
    const whole = wholeBodyOf(response)
    const unknownLength = knownLength(response.headers) === undefined
    if (unknownLength && whole != null && byteLength(whole, threshold) < threshold) return asIs()
    const encoder = coding === undefined ? undefined : encoders[coding]
    let body = whole === null ? null : response.body
    // A HEAD response has no body to measure: its Content-Length (which methods() gives it,
    // from the GET body, up to 1 MiB) says whether the GET would be compressed; one without
    // (a longer body, or a HEAD handler of your own) is taken as a long body, as a GET
    // stream of unknown length turns out to be once read past the threshold.
    if (encoder === undefined || (body === null && !head)) {
      // Sent as it is: only Vary changes, in place, so the body keeps its form (a string or
      // bytes, which adapters write in one go, rather than a stream).
      // RFC 9110 §12.5.5: the choice depends on Accept-Encoding, whatever it turns out to be.
      return asIs(
        withHeaders(response, (headers) => mergeHeader(headers, 'vary', 'Accept-Encoding')),
      )
    }
    if (head) body = null
    if (body !== null && unknownLength && whole === undefined && threshold > 0) {
      // A stream: read ahead up to the threshold. One that ends before is sent as it is, as a
      // body with a small Content-Length is; past it, what was read goes on with the rest.
      const ahead = await readAhead(body, threshold - 1)
      if (ahead.complete) {
        // Chunks of a Response body are Uint8Arrays over ArrayBuffers (the Fetch standard).
        return asIs(new Response(ahead.bytes as Uint8Array<ArrayBuffer>, response))
      }
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
    const source = body
    return {
      status: response.status,
      headers,
      build: () =>
        new Response(source === null ? null : source.pipeThrough(encoder()), {
          status: response.status,
          statusText: response.statusText,
          headers,
        }),
      discard: () => void source?.cancel().catch(() => undefined),
    }
  }
}

/** A response about to be sent (see `outgoing`). */
interface Outgoing {
  readonly status: number
  /** Its header fields as they will be sent. */
  readonly headers: Headers
  /** Builds it, encoding its body when it is compressed. */
  readonly build: () => Response
  /** Drops its body, for a 304 sent in its place. */
  readonly discard: () => void
}

/**
 * RFC 9110 §15.4.5: the 304 of the response as it would be sent (core's one 304 builder),
 * without Accept-Ranges either: ranges of a representation this layer may code are not offered.
 */
function notModified(sent: Headers): Response {
  const headers = new Headers(sent)
  headers.delete('accept-ranges')
  return notModifiedResponse(headers)
}

/** The Content-Length, when the response has a valid one. */
function knownLength(headers: Headers): number | undefined {
  const length = headers.get('content-length')
  return length !== null && /^\d+$/.test(length.trim()) ? Number(length) : undefined
}

/**
 * The UTF-8 length of a body in memory, or a number on the same side of `threshold` as that
 * length: a string has at least as many UTF-8 bytes as UTF-16 units and at most three times as
 * many, so only one in between is encoded to be measured. Compare the answer with `threshold`.
 */
function byteLength(body: string | Uint8Array, threshold: number): number {
  if (typeof body !== 'string') return body.byteLength
  if (body.length >= threshold) return body.length
  // At most 3 UTF-8 bytes per UTF-16 unit: a short string is under without being encoded (the
  // service bench: encoding every small JSON answer cost more than the rest of this layer).
  if (body.length * 3 < threshold) return body.length
  return new TextEncoder().encode(body).byteLength
}

/** What `compress()` made of a request's If-Match and If-None-Match. */
interface Preconditions {
  /** The header fields to hand the handler, when they differ from the request's own. */
  readonly headers: Headers | undefined
  /** The opaque parts of the identity tags that stood for tags of the negotiated coding. */
  readonly bases: readonly string[]
  /** The If-None-Match of a GET or HEAD, as the client sent it, evaluated on the way out. */
  readonly ifNoneMatch: string | undefined
}

const NO_PRECONDITIONS: Preconditions = { headers: undefined, bases: [], ifNoneMatch: undefined }

// The If-Match and If-None-Match the handler sees, in identity tags (see toIdentityTags).
function identityPreconditions(
  fields: Headers,
  read: boolean,
  coding: string | undefined,
): Preconditions {
  const ifMatch = fields.get('if-match')
  const ifNoneMatch = fields.get('if-none-match')
  if (ifMatch === null && ifNoneMatch === null) return NO_PRECONDITIONS
  let headers: Headers | undefined
  const rewrite = (name: string, value: string) => {
    headers ??= new Headers(fields)
    headers.set(name, value)
  }
  // RFC 9110 §13.1.1: If-Match asks whether the resource is still at the version the client
  // saw, whichever form it saw it in: every coding's tag stands for the identity tag.
  if (ifMatch !== null) {
    const rewritten = toIdentityTags(ifMatch, () => true)
    if (rewritten !== undefined) rewrite('if-match', rewritten.value)
  }
  if (ifNoneMatch === null) return { headers, bases: [], ifNoneMatch: undefined }
  if (!read) {
    // On other methods If-None-Match guards the resource, as If-Match does.
    const rewritten = toIdentityTags(ifNoneMatch, () => true)
    if (rewritten !== undefined) rewrite('if-none-match', rewritten.value)
    return { headers, bases: [], ifNoneMatch: undefined }
  }
  // RFC 9110 §13.1.2: on GET and HEAD, If-None-Match is compared with the representation
  // this request selects, and whether that is the coded form is known only once the
  // response is (its size decides). The handler gets the tags of the coding this request
  // negotiates, as identity tags, so that it can answer 304 cheaply to a client that holds
  // the compressed form of a large body; it gets no other tag (an empty list, which still
  // makes it ignore If-Modified-Since, §13.1.3). Every tag is compared again on the way out,
  // with the tag the response is sent with.
  const rewritten = toIdentityTags(ifNoneMatch, (named) => named === coding, false)
  if (ifNoneMatch.trim() === '*') rewrite('if-none-match', '')
  else if (rewritten !== undefined) rewrite('if-none-match', rewritten.value)
  // An invalid list reaches the handler as sent, and matches nothing there or here.
  return { headers, bases: rewritten?.bases ?? [], ifNoneMatch }
}
