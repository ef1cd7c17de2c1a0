/**
 * The content codings of a request body (RFC 9110 §8.4): which ones a reader accepts, the 415
 * that refuses the others, and the decoding of the accepted ones. A reader that accepts only
 * `identity` (the default of `readBody`, `readText` and `readJson`) refuses any other coding
 * before reading a byte, so gzip bytes never reach a JSON parser as if they were JSON.
 *
 * RFC 9110 §15.5.16 and §12.5.3: a request refused for its content coding is answered 415 with
 * an `Accept-Encoding` field listing the codings that would have been accepted, so that a client
 * can tell it from a 415 for the media type (which must not carry the field).
 *
 * @module
 */
import { BodyReadError, readStream } from '@api-blocks/core'
import { ProblemError, problems } from '@api-blocks/problem-details'
import { isToken } from '../internal/syntax.ts'

/**
 * A content coding a body reader can accept: `identity` (no coding), or one it decodes with the
 * Web `DecompressionStream`: `gzip` (RFC 9110 §8.4.1.3; `x-gzip` is the same) and `deflate`
 * (§8.4.1.2, the zlib format).
 *
 * @example
 * ```ts
 * const codings: readonly ContentCoding[] = ['identity', 'gzip']
 * ```
 */
export type ContentCoding = 'identity' | 'gzip' | 'deflate'

/**
 * The codings a body reader accepts unless told otherwise: `identity` only.
 *
 * @example
 * ```ts
 * await readJson(request, schema, { contentCodings: [...DEFAULT_CONTENT_CODINGS, 'gzip'] })
 * ```
 */
export const DEFAULT_CONTENT_CODINGS: readonly ContentCoding[] = Object.freeze(['identity'])

/** The most codings one body may name: more is refused as unsupported (a decoding chain bomb). */
const MAX_CODINGS = 4

/**
 * A request body in a content coding the reader does not accept: 415 `unsupported-media-type`
 * with `accepted` naming the codings it would have taken, and an `Accept-Encoding` field
 * (`headers`) saying the same, as RFC 9110 §15.5.16 and §12.5.3 ask. Its code is
 * `CONTENT_ENCODING_UNSUPPORTED`. http's `errorResponse` and `errorBoundary()` send `headers`
 * with the problem.
 *
 * @example
 * ```ts
 * try {
 *   await readJson(request, schema)
 * } catch (error) {
 *   if (error instanceof ContentEncodingError) console.log(error.headers['accept-encoding']) // 'identity'
 *   throw error
 * }
 * ```
 */
export class ContentEncodingError extends ProblemError<{ accepted: string[] }> {
  static override readonly kind: string = 'http.ContentEncodingError'
  /** The response header fields that go with the problem: `accept-encoding`. */
  readonly headers: Readonly<Record<string, string>>

  constructor(coding: string, accepted: readonly ContentCoding[], options?: ErrorOptions) {
    super(
      problems.unsupportedMediaType.create({
        accepted: [...accepted],
        detail: `The request body's content coding (${coding}) is not accepted here; send it as ${accepted.join(' or ')}.`,
      }),
      { ...options, code: 'CONTENT_ENCODING_UNSUPPORTED' },
    )
    this.headers = { 'accept-encoding': accepted.join(', ') }
  }
}

/**
 * @internal The decoders to apply to a body, innermost coding first, or `[]` for no coding.
 * Checks the list as written: every coding must be accepted.
 *
 * @throws {ContentEncodingError} for a coding not in `accepted` (or not one this reader knows).
 */
export function decodersFor(
  field: string | null,
  accepted: readonly ContentCoding[],
): Array<'gzip' | 'deflate'> {
  if (field === null) return []
  const decoders: Array<'gzip' | 'deflate'> = []
  // RFC 9110 §8.4: a comma-separated list, in the order the codings were applied; empty list
  // elements are ignored (§5.6.1); coding names are case-insensitive (§8.4.1).
  for (const element of field.split(',')) {
    const name = element.trim().toLowerCase()
    if (name === '') continue
    // §8.4.1.3: x-gzip is gzip.
    const coding = name === 'x-gzip' ? 'gzip' : name
    if (
      !isToken(coding) ||
      !(accepted as readonly string[]).includes(coding) ||
      decoders.length === MAX_CODINGS
    ) {
      // Echoed in the detail only when it is a short token: the field is the client's.
      throw new ContentEncodingError(
        isToken(name) && name.length <= 64 ? name : 'unknown',
        accepted,
      )
    }
    // `identity` may appear, meaning no coding (§12.5.3); it needs no decoding.
    if (coding === 'gzip' || coding === 'deflate') decoders.push(coding)
  }
  return decoders.reverse()
}

/**
 * @internal The bytes as sent, decoded by `decoders` (innermost first), at most `maxBytes` once
 * decoded. Data that does not decode is a 400 (`CONTENT_ENCODING_INVALID`); a body that grows
 * past the limit while decoding is the same 413 as one sent that large.
 */
export async function decodeBody(
  bytes: Uint8Array,
  decoders: readonly ('gzip' | 'deflate')[],
  maxBytes: number,
): Promise<Uint8Array> {
  let stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream()
  for (const format of decoders) {
    stream = stream.pipeThrough(new DecompressionStream(format)) as ReadableStream<
      Uint8Array<ArrayBuffer>
    >
  }
  try {
    return await readStream(stream, maxBytes)
  } catch (error) {
    if (error instanceof BodyReadError && error.code === 'BODY_UNREADABLE') {
      throw problems.badRequest.error(
        { detail: `The request body is not valid ${decoders.join(' within ')} data.` },
        { code: 'CONTENT_ENCODING_INVALID', cause: error },
      )
    }
    throw error
  }
}
