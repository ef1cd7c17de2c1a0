/**
 * Response compression over node:zlib: the build `@api-blocks/http/compress` resolves to under
 * the `node` export condition (Node, and Bun and Deno, which implement node:zlib). Same API as
 * the Web build, plus zstd (Node >= 22.15 / 23.8) and a brotli at quality 4 instead of the
 * maximum, which is what makes `br` usable for dynamic responses (about 14 ms for 1 MB of
 * JSON on Node 24, against 1.6 s through CompressionStream).
 *
 * node:zlib is reached through `process.getBuiltinModule` (Node >= 22.3), not a static import,
 * so this file type-checks without Node's global types and loads nowhere else; when the
 * function is missing the Web encoders are used.
 *
 * @module
 */
import type { Middleware } from '../compose.ts'
import type { CompressOptions, Encoder } from '../internal/compress.ts'
import { createCompress } from '../internal/compress.ts'
import { webEncoders } from './index.ts'

export type { CompressOptions, Encoder } from '../internal/compress.ts'
export { DEFAULT_COMPRESS_THRESHOLD, isCompressible, weakenEtag } from '../internal/compress.ts'
export { webEncoders } from './index.ts'

// The few node:zlib and node:stream members used here, typed locally.
interface Zlib {
  constants: Record<string, number>
  createGzip(options?: object): unknown
  createDeflate(options?: object): unknown
  createBrotliCompress(options?: object): unknown
  createZstdCompress?: (options?: object) => unknown
}
interface Stream {
  Duplex: {
    toWeb(duplex: unknown): ReadableWritablePair<Uint8Array<ArrayBuffer>, Uint8Array<ArrayBuffer>>
  }
}

function builtin<T>(id: string): T | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process
  try {
    return process?.getBuiltinModule?.(id) as T | undefined
  } catch {
    return undefined
  }
}

/** The brotli quality used: 4 is the usual choice for on-the-fly compression. */
export const BROTLI_QUALITY = 4

/**
 * The encoders node:zlib provides: `zstd` (where the runtime has it), `br` at quality
 * {@link BROTLI_QUALITY}, `gzip` and `deflate`. Falls back to {@link webEncoders} when
 * node:zlib cannot be reached.
 *
 * @example
 * ```ts
 * Object.keys(nodeEncoders()) // ['gzip', 'deflate', 'br', 'zstd'] on Node 24
 * ```
 */
export function nodeEncoders(): Record<string, Encoder> {
  const zlib = builtin<Zlib>('node:zlib')
  const stream = builtin<Stream>('node:stream')
  if (zlib === undefined || stream === undefined) return webEncoders()
  const web =
    (make: () => unknown): Encoder =>
    () =>
      stream.Duplex.toWeb(make())
  const encoders: Record<string, Encoder> = {
    gzip: web(() => zlib.createGzip()),
    deflate: web(() => zlib.createDeflate()),
    br: web(() =>
      zlib.createBrotliCompress({
        params: {
          [zlib.constants['BROTLI_PARAM_QUALITY']!]: BROTLI_QUALITY,
          [zlib.constants['BROTLI_PARAM_MODE']!]: zlib.constants['BROTLI_MODE_TEXT']!,
        },
      }),
    ),
  }
  const zstd = zlib.createZstdCompress
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
