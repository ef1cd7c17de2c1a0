/**
 * Reading request bodies with a byte limit, on `@api-blocks/core`'s bounded reader
 * (`readRequestBody`): the limit is checked against Content-Length before reading, and again
 * while reading, so a body without Content-Length (chunked, or a stream) stops at the first
 * chunk past the limit. Every failure is a `ProblemError` from the catalog, so it answers as a
 * problem wherever it is caught; its `code` says what happened:
 *
 * | condition | status | problem | code |
 * |---|---|---|---|
 * | Content-Encoding not accepted (default: `identity` only) | 415 | `unsupportedMediaType` with `accepted`, and `Accept-Encoding` | `CONTENT_ENCODING_UNSUPPORTED` |
 * | Content-Length or the body (decoded) over `maxBytes` | 413 | `payloadTooLarge` with `max_bytes` | `BODY_TOO_LARGE` |
 * | an accepted coding that does not decode | 400 | `badRequest` | `CONTENT_ENCODING_INVALID` |
 * | malformed Content-Length | 400 | `badRequest` | `CONTENT_LENGTH_INVALID` |
 * | the client hung up mid-body | 400 | `badRequest` | `BODY_UNREADABLE` |
 * | the body was read before (a programming error) | 500 | `internal` | `BODY_ALREADY_READ` |
 * | `readJson`: Content-Type not JSON | 415 | `unsupportedMediaType` | `UNSUPPORTED_MEDIA_TYPE` |
 * | `readJson`, `readText`: not UTF-8 | 400 | `badRequest` | `BODY_NOT_UTF8` |
 * | `readJson`: not JSON | 400 | `badRequest` | `BODY_NOT_JSON` |
 * | `readJson`: nested too deeply for the schema | 400 | `badRequest` | `BODY_TOO_DEEP` |
 * | `readJson`: schema failed | 422 | `validation` with JSON Pointers | `VALIDATION_FAILED` |
 *
 * The limit is the one recorded for the request (core's `setBodyLimit`, as
 * `limits({ maxBodyBytes })` records it for every route), so that every layer reading the body
 * (the idempotency middleware too) applies the route's one limit and answers the same 413; a
 * `maxBytes` option can only narrow it (the smaller of the two applies). Without either,
 * {@link DEFAULT_MAX_BODY_BYTES}.
 *
 * A body stream that fails with an `ApiBlocksError` of its own keeps it, and its status: the
 * node adapter's `REQUEST_BODY_CONSUMED` (a body a framework's parser consumed before the
 * handler) answers 500, not 400.
 *
 * @module
 */
import { BodyReadError, bodyLimitOf, readRequestBody, takeParsedJson } from '@api-blocks/core'
import type { ProblemError, StandardSchemaV1 } from '@api-blocks/problem-details'
import { problems } from '@api-blocks/problem-details'
import { validateOrThrow } from '@api-blocks/problem-details/validation'
import { matchesMediaType, parseMediaType } from '../negotiate/media-type.ts'
import type { ContentCoding } from './encoding.ts'
import { DEFAULT_CONTENT_CODINGS, decodeBody, decodersFor } from './encoding.ts'

/**
 * The default body limit: 1 MiB.
 *
 * @example
 * ```ts
 * const bytes = await readBody(request, { maxBytes: DEFAULT_MAX_BODY_BYTES / 16 })
 * ```
 */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576

/**
 * Options of {@link readBody}, {@link readText} and {@link readJson}.
 *
 * @example
 * ```ts
 * const options: ReadBodyOptions = { maxBytes: 64 * 1024 }
 * ```
 */
export interface ReadBodyOptions {
  /**
   * The largest body accepted, in bytes, before and after decoding. When a limit is recorded
   * for the request (core's `bodyLimitOf`, set by `limits({ maxBodyBytes })`), the smaller of
   * the two applies: one route has one limit, which a call may narrow but never widen.
   * Default: the recorded limit, else {@link DEFAULT_MAX_BODY_BYTES}.
   */
  maxBytes?: number
  /**
   * The content codings accepted (default `['identity']`: a body with any Content-Encoding but
   * `identity` is refused with 415 and `Accept-Encoding`, RFC 9110 §15.5.16). Accepted codings
   * other than `identity` are decoded, and `maxBytes` bounds the decoded bytes too.
   */
  contentCodings?: readonly ContentCoding[]
}

// core's failure, as the catalog problem that answers it.
function problemOf(error: BodyReadError): ProblemError {
  switch (error.code) {
    case 'BODY_TOO_LARGE':
      return problems.payloadTooLarge.error(
        {
          max_bytes: error.maxBytes,
          detail: `The request body is larger than ${error.maxBytes} bytes.`,
        },
        { code: error.code, cause: error },
      )
    case 'CONTENT_LENGTH_INVALID':
      // RFC 9112 §6.3 item 5: an invalid Content-Length is an unrecoverable framing error.
      return problems.badRequest.error(
        { detail: 'The Content-Length header is malformed.' },
        { code: error.code, cause: error },
      )
    case 'BODY_UNREADABLE':
      return problems.badRequest.error(
        { detail: 'The request body ended before it was complete.' },
        { code: error.code, cause: error },
      )
    case 'BODY_ALREADY_READ':
      // Something read the body before: the server's fault, never the client's.
      return problems.internal.error(undefined, { code: error.code, cause: error })
  }
}

/**
 * Reads the whole body as bytes, refusing more than `maxBytes` and any content coding not
 * accepted (see {@link ReadBodyOptions}). A request without a body gives an empty array; a body
 * the Request holds in memory (see core's `wholeBodyOf`) is taken without a stream. Throws a
 * `ProblemError` (415, 413, 400 or 500, see the module table), or the body stream's own
 * `ApiBlocksError`; a `maxBytes` that is not a non-negative safe integer is a RangeError.
 *
 * @example
 * ```ts
 * const bytes = await readBody(request, { maxBytes: 64 * 1024 })
 * ```
 */
export async function readBody(
  request: Request,
  options: ReadBodyOptions = {},
): Promise<Uint8Array> {
  return (await readDecoded(request, options)).bytes
}

/** The body, and whether it was decoded from a content coding. */
async function readDecoded(
  request: Request,
  options: ReadBodyOptions,
): Promise<{ bytes: Uint8Array; decoded: boolean }> {
  // One limit per route: an explicit maxBytes may narrow the recorded limit, never widen it,
  // as the idempotency middleware also takes the smaller of the two.
  const recorded = bodyLimitOf(request)
  const maxBytes =
    options.maxBytes === undefined
      ? (recorded ?? DEFAULT_MAX_BODY_BYTES)
      : recorded === undefined
        ? options.maxBytes
        : Math.min(options.maxBytes, recorded)
  let decoders: ReturnType<typeof decodersFor>
  try {
    // Before a byte is read: a coding the route does not take is a 415, not a 400 from a
    // parser that was handed compressed bytes.
    decoders = decodersFor(
      request.headers.get('content-encoding'),
      options.contentCodings ?? DEFAULT_CONTENT_CODINGS,
    )
  } catch (error) {
    await request.body?.cancel().catch(() => undefined)
    throw error
  }
  try {
    const bytes = await readRequestBody(request, { maxBytes })
    if (decoders.length === 0) return { bytes, decoded: false }
    return { bytes: await decodeBody(bytes, decoders, maxBytes), decoded: true }
  } catch (error) {
    throw error instanceof BodyReadError ? problemOf(error) : error
  }
}

// fatal: invalid UTF-8 is an error, never silently replaced by U+FFFD. One decoder serves every
// call: without `stream`, decode() keeps no state between calls.
const utf8 = new TextDecoder('utf-8', { fatal: true })

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch (cause) {
    throw problems.badRequest.error(
      { detail: 'The request body is not valid UTF-8.' },
      { code: 'BODY_NOT_UTF8', cause: cause },
    )
  }
}

/**
 * Reads the body as UTF-8 text with a byte limit. Invalid UTF-8 is a 400 problem.
 *
 * @example
 * ```ts
 * const text = await readText(request, { maxBytes: 8192 })
 * ```
 */
export async function readText(request: Request, options: ReadBodyOptions = {}): Promise<string> {
  return decodeUtf8(await readBody(request, options))
}

/**
 * The media types {@link readJson} accepts.
 *
 * @example
 * ```ts
 * const acceptsJson = JSON_MEDIA_TYPES.includes('application/json') // true
 * ```
 */
export const JSON_MEDIA_TYPES: readonly string[] = ['application/json', 'application/*+json']

/**
 * Reads a JSON body with a byte limit and validates it with any Standard Schema
 * (https://standardschema.dev: zod, valibot, ArkType, or one written by hand), synchronous or
 * asynchronous; the answer is the schema's output.
 * - 415 when Content-Type is not `application/json` or `application/*+json`, or names a
 *   charset other than UTF-8 (RFC 8259 §8.1: JSON exchanged between systems is UTF-8);
 * - 415 / 413 / 400 as {@link readBody} (a Content-Encoding not accepted: 415 with
 *   `Accept-Encoding`); 400 for invalid UTF-8 or invalid JSON;
 * - 422 `validation` with one `{ detail, pointer }` per schema issue (JSON Pointers, at most
 *   100), made by `@api-blocks/problem-details/validation`.
 *
 * When a middleware already parsed the body and handed the value on (core's
 * `handOnParsedJson`, as the idempotency middleware does), that value is taken instead of
 * decoding and parsing the same bytes again; the limit and the schema still apply.
 *
 * @example
 * ```ts
 * import { z } from 'zod'
 * const Order = z.object({ sku: z.string(), quantity: z.number().int().positive() })
 * const order = await readJson(request, Order, { maxBytes: 16 * 1024 })
 * ```
 */
export async function readJson<Schema extends StandardSchemaV1>(
  request: Request,
  schema: Schema,
  options: ReadBodyOptions = {},
): Promise<StandardSchemaV1.InferOutput<Schema>> {
  const contentType = request.headers.get('content-type')
  const charset = parseMediaType(contentType)?.parameters['charset']?.toLowerCase()
  if (
    !matchesMediaType(contentType, JSON_MEDIA_TYPES) ||
    (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
  ) {
    await request.body?.cancel().catch(() => undefined)
    throw problems.unsupportedMediaType.error({
      accepted: [...JSON_MEDIA_TYPES],
      detail: 'Send the body as application/json (UTF-8).',
    })
  }
  // Taken before the body is read: the hand-off holds only while the body is still unread. It
  // describes the bytes as sent, so it stands for the body only when no coding was removed.
  const parsed = takeParsedJson(request)
  const { bytes, decoded } = await readDecoded(request, options)
  let data: unknown
  if (parsed !== undefined && !decoded) data = parsed.value
  else {
    const text = decodeUtf8(bytes)
    try {
      data = JSON.parse(text)
    } catch (cause) {
      // The parser's message quotes the body; it is not echoed back.
      throw problems.badRequest.error(
        { detail: 'The request body is not valid JSON.' },
        { code: 'BODY_NOT_JSON', cause: cause },
      )
    }
  }
  try {
    return await validateOrThrow(schema, data)
  } catch (cause) {
    // A recursive schema can run out of stack on hostile nesting: that is bad input, not a 500.
    if (!(cause instanceof RangeError)) throw cause
    throw problems.badRequest.error(
      { detail: 'The request body is nested too deeply.' },
      { code: 'BODY_TOO_DEEP', cause: cause },
    )
  }
}
