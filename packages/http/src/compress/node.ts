/**
 * Response compression over node:zlib: the build `@api-blocks/http/compress` resolves to under
 * the `node` export condition (Node, and Bun and Deno, which implement node:zlib). Same API as
 * the Web build, plus zstd (Node >= 22.15 / 23.8) and a brotli at quality 4 instead of the
 * maximum, which is what makes `br` usable for dynamic responses (about 14 ms for 1 MB of
 * JSON on Node 24, against 1.6 s through CompressionStream).
 *
 * node:zlib and node:stream are imported statically: the export condition, not a probe at run
 * time, decides that this file loads, and it loads only where they exist.
 *
 * @module
 */
import { Duplex } from 'node:stream'
import * as zlib from 'node:zlib'
import type { Middleware } from '@api-blocks/core'
import type { CompressOptions, Encoder } from '../internal/compress.ts'
import { createCompress } from '../internal/compress.ts'

export type { CompressOptions, Encoder } from '../internal/compress.ts'
export { DEFAULT_COMPRESS_THRESHOLD, isCompressible } from '../internal/compress.ts'
export { CODED_ETAG_SEPARATOR, codedEtag } from './etag.ts'
export { webEncoders } from './index.ts'

/**
 * The brotli quality used: 4 is the usual choice for on-the-fly compression.
 *
 * @example
 * ```ts
 * const quality = BROTLI_QUALITY // 4
 * ```
 */
export const BROTLI_QUALITY = 4

/**
 * The encoders node:zlib provides: `zstd` (where the runtime has it), `br` at quality
 * {@link BROTLI_QUALITY}, `gzip` and `deflate`.
 *
 * @example
 * ```ts
 * Object.keys(nodeEncoders()) // ['gzip', 'deflate', 'br', 'zstd'] on Node 24
 * ```
 */
export function nodeEncoders(): Record<string, Encoder> {
  const web =
    (make: () => Duplex): Encoder =>
    () =>
      Duplex.toWeb(make()) as ReturnType<Encoder>
  const encoders: Record<string, Encoder> = {
    gzip: web(() => zlib.createGzip()),
    deflate: web(() => zlib.createDeflate()),
    br: web(() =>
      zlib.createBrotliCompress({
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        },
      }),
    ),
  }
  // zstd joined node:zlib in Node 22.15 and 23.8; the package supports Node from 22.12.
  const zstd = (zlib as { createZstdCompress?: () => Duplex }).createZstdCompress
  if (typeof zstd === 'function') encoders['zstd'] = web(() => zstd.call(zlib))
  return encoders
}

/**
 * Compresses responses when the client's Accept-Encoding allows it, as the Web `compress()`
 * does, offering `zstd`, `br`, `gzip` and `deflate` in that order by default.
 *
 * @example
 * ```ts
 * import { compress } from '@api-blocks/http/compress' // this build under the node condition
 * const app = compose(compress())(handler)
 * ```
 */
export function compress(options: CompressOptions = {}): Middleware {
  return createCompress(nodeEncoders(), ['zstd', 'br', 'gzip', 'deflate'], options)
}
