/**
 * Response compression over the Web `CompressionStream`. This is the build every runtime gets;
 * under the `node` export condition `@api-blocks/http/compress` resolves to a build over
 * node:zlib instead, which adds zstd and a fast brotli (see `./node.ts`).
 *
 * What the Web build offers by default: `gzip` and `deflate`. `br` is available where the
 * runtime's CompressionStream knows the `brotli` format (Node 24, Safari 18.4, Firefox; it
 * joined the Compression Standard in 2025) but is not offered by default: CompressionStream
 * cannot set a quality, and the maximum quality it uses is far too slow for dynamic responses
 * (about 1.6 s for 1 MB of JSON on Node 24, against 60 ms for gzip). Offer it explicitly with
 * `encodings: ['br', 'gzip']` only where that cost is acceptable. zstd has no Web encoder.
 *
 * @module
 */
import type { Middleware } from '@api-blocks/core'
import type { CompressOptions, Encoder } from '../internal/compress.ts'
import { createCompress } from '../internal/compress.ts'

export type { CompressOptions, Encoder } from '../internal/compress.ts'
export { DEFAULT_COMPRESS_THRESHOLD, isCompressible } from '../internal/compress.ts'
export { CODED_ETAG_SEPARATOR, codedEtag } from './etag.ts'

function supports(format: string): boolean {
  try {
    new CompressionStream(format as CompressionFormat)
    return true
  } catch {
    return false
  }
}

function webEncoder(format: string): Encoder {
  return () => new CompressionStream(format as CompressionFormat)
}

/**
 * The encoders this runtime's CompressionStream provides: `gzip` and `deflate` (the zlib
 * format that HTTP's `deflate` coding names, RFC 9110 §8.4.1.2), and `br` when the runtime
 * supports the `brotli` format.
 *
 * @example
 * ```ts
 * Object.keys(webEncoders()) // ['gzip', 'deflate', 'br'] on Node 24
 * ```
 */
export function webEncoders(): Record<string, Encoder> {
  const encoders: Record<string, Encoder> = {
    gzip: webEncoder('gzip'),
    deflate: webEncoder('deflate'),
  }
  if (supports('brotli')) encoders['br'] = webEncoder('brotli')
  return encoders
}

/**
 * Compresses responses when the client's Accept-Encoding allows it: bodies of at least the
 * threshold (measured on the body: Content-Length, a body in memory, or a stream read ahead up
 * to the threshold), only compressible types, never for 204, 206, 304, an already encoded
 * body or `Cache-Control: no-transform`; HEAD gets the fields its GET would, without content.
 * Adds `Vary: Accept-Encoding` through the accumulator to every response it could have
 * compressed. Each coded form gets its own strong ETag (`"x"` → `"x%-gzip"`, see
 * `codedEtag`). The handler gets a new Request whose If-Match and If-None-Match hold identity
 * tags; on GET and HEAD the tags it cannot map are compared on the way out with the tag the
 * response is sent with, so a 304 carries the ETag and Vary of its 200 (RFC 9110 §15.4.5).
 *
 * @example
 * ```ts
 * const app = compose(compress({ threshold: 512 }))(async () => Response.json(bigList))
 * ```
 */
export function compress(options: CompressOptions = {}): Middleware {
  return createCompress(webEncoders(), ['gzip', 'deflate'], options)
}
