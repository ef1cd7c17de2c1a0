// The compression middleware, independent of where the encoders come from: the Web build
// (./index.ts) passes CompressionStream encoders, the Node build (./node.ts) node:zlib ones.
import type { Middleware } from '@api-blocks/core'
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
  /** Responses with a known length under this many bytes are sent as they are (default 1024). */
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

/**
 * RFC 9110 §8.8.3: a strong validator changes whenever the representation's bytes do,
 * content coding included, so the identity ETag cannot be reused on the compressed bytes.
 * The compressed representation is semantically equivalent, so the tag is weakened (`W/`):
 * If-None-Match (weak comparison) still matches it. A value that is not an entity-tag is
 * dropped rather than passed on as if strong.
 *
 * @example
 * ```ts
 * weakenEtag('"v7"') // 'W/"v7"'
 * weakenEtag('W/"v7"') // 'W/"v7"'
 * weakenEtag('v7') // undefined: not an entity-tag
 * ```
 */
export function weakenEtag(etag: string): string | undefined {
  const value = etag.trim()
  if (value.startsWith('W/"') && value.endsWith('"') && value.length >= 4) return value
  // RFC 9110 §8.8.3: entity-tag = [ weak ] opaque-tag; opaque-tag = DQUOTE *etagc DQUOTE
  if (/^"[\x21\x23-\x7e\x80-\xff]*"$/.test(value)) return `W/${value}`
  return undefined
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
    const length = headers.get('content-length')
    if (length !== null && /^\d+$/.test(length.trim()) && Number(length) < threshold) return false
    return true
  }

  return async (request, next) => {
    const response = await next(request)
    if (encodings.length === 0 || response.type === 'error') return response
    // RFC 9110 §15.4.5: a 304 carries the Vary the 200 would have carried, and that one
    // depended on Accept-Encoding.
    if (response.status === 304) {
      return withHeaders(response, (headers) => mergeHeader(headers, 'vary', 'Accept-Encoding'))
    }
    if (!eligible(response)) return response
    const coding =
      request.method === 'HEAD'
        ? undefined
        : negotiateEncoding(request.headers.get('accept-encoding'), encodings).choice
    const encoder = coding === undefined || coding === 'identity' ? undefined : encoders[coding]
    if (encoder === undefined || response.body === null) {
      // Sent as it is: only Vary changes, in place, so the body keeps its form (a string or
      // bytes, which adapters write in one go, rather than a stream).
      // RFC 9110 §12.5.5: the choice depends on Accept-Encoding, whatever it turns out to be.
      return withHeaders(response, (headers) => mergeHeader(headers, 'vary', 'Accept-Encoding'))
    }
    const headers = new Headers(response.headers)
    mergeHeader(headers, 'vary', 'Accept-Encoding')
    headers.set('content-encoding', coding!)
    headers.delete('content-length')
    // Byte ranges of the compressed stream are not offered.
    headers.delete('accept-ranges')
    const etag = headers.get('etag')
    if (etag !== null) {
      const weak = weakenEtag(etag)
      if (weak === undefined) headers.delete('etag')
      else headers.set('etag', weak)
    }
    return new Response(response.body.pipeThrough(encoder()), {
      status: response.status,
      statusText: response.statusText,
      headers,
    })
  }
}
