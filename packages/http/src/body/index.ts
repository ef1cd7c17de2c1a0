/**
 * Reading request bodies with a byte limit. The limit is checked against Content-Length
 * before reading, and again while reading, so a body without Content-Length (chunked, or a
 * stream) stops at the first chunk past the limit. Every failure is a `ProblemError` from the
 * catalog, so it answers as a problem wherever it is caught:
 *
 * | condition | status | problem |
 * |---|---|---|
 * | Content-Length or the body over `maxBytes` | 413 | `payloadTooLarge` with `max_bytes` |
 * | malformed Content-Length | 400 | `badRequest` |
 * | the client hung up mid-body | 400 | `badRequest` |
 * | `readJson`: Content-Type not JSON | 415 | `unsupportedMediaType` |
 * | `readJson`, `readText`: not UTF-8 | 400 | `badRequest` |
 * | `readJson`: not JSON | 400 | `badRequest` |
 * | `readJson`: schema failed | 422 | `validation` with JSON Pointers |
 *
 * @module
 */
import type { ProblemPointer } from '@api-blocks/problem-details'
import { problems, zodIssuesToPointers } from '@api-blocks/problem-details'
import { matchesMediaType, parseMediaType } from '../negotiate/media-type.ts'

/**
 * The whole-body slot (`Symbol.for('api-blocks.whole-body')`): a Request that holds its body
 * in memory, as `@api-blocks/node`'s does when a middleware or a framework already read it,
 * answers the bytes there without consuming them; `readBody` then takes them with `bytes()`
 * instead of reading a stream. Any other Request is read as a stream.
 */
const WHOLE_BODY = Symbol.for('api-blocks.whole-body')

/**
 * The parsed-JSON slot (`Symbol.for('api-blocks.json-body')`): `{ bytes, value }` on a Request
 * whose body a middleware already parsed (the idempotency middleware does, to fingerprint it),
 * `value` being what `JSON.parse` gives for `bytes` decoded as strict UTF-8. {@link readJson}
 * takes that value, once, when `bytes` is the very array the whole-body slot answers (so the
 * body is still those bytes), instead of decoding and parsing them again.
 */
const JSON_BODY = Symbol.for('api-blocks.json-body')

interface ParsedJson {
  readonly bytes: unknown
  readonly value: unknown
}

/** The value of the parsed-JSON slot, taken (and cleared) if it still describes the body. */
function takeParsedJson(request: Request): { value: unknown } | undefined {
  const slots = request as { [WHOLE_BODY]?: unknown; [JSON_BODY]?: ParsedJson | undefined }
  const parsed = slots[JSON_BODY]
  if (parsed === undefined) return undefined
  Reflect.set(slots, JSON_BODY, undefined)
  const whole = slots[WHOLE_BODY]
  return parsed.value !== undefined && whole !== undefined && parsed.bytes === whole
    ? parsed
    : undefined
}

/** The default body limit: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576

/** Options of {@link readBody}, {@link readText} and {@link readJson}. */
export interface ReadBodyOptions {
  /** The largest body accepted, in bytes (default {@link DEFAULT_MAX_BODY_BYTES}). */
  maxBytes?: number
}

function limitOf(options: ReadBodyOptions): number {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY_BYTES
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError('maxBytes must be a non-negative safe integer')
  }
  return maxBytes
}

function tooLarge(maxBytes: number): Error {
  return problems.payloadTooLarge.error({
    max_bytes: maxBytes,
    detail: `The request body is larger than ${maxBytes} bytes.`,
  })
}

/**
 * Reads the whole body as bytes, refusing more than `maxBytes`. A request without a body
 * gives an empty array. Throws `ProblemError` (413 or 400, see the module table); a body
 * that was already read is a programming error (TypeError).
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
  const maxBytes = limitOf(options)
  if (request.bodyUsed) throw new TypeError('readBody(): the request body was already read')
  const length = request.headers.get('content-length')
  if (length !== null) {
    // RFC 9110 §8.6: Content-Length = 1*DIGIT. RFC 9112 §6.3 item 5: an invalid one is an
    // unrecoverable framing error, answered 400.
    if (!/^\d+$/.test(length.trim())) {
      await request.body?.cancel().catch(() => undefined)
      throw problems.badRequest.error({ detail: 'The Content-Length header is malformed.' })
    }
    // RFC 9110 §15.5.14: refuse at once what is announced too large, without reading it.
    if (Number(length.trim()) > maxBytes) {
      await request.body?.cancel().catch(() => undefined)
      throw tooLarge(maxBytes)
    }
  }
  // A body the Request holds in memory (see WHOLE_BODY): taken whole, without a stream.
  const whole: unknown = (request as { [WHOLE_BODY]?: unknown })[WHOLE_BODY]
  if (whole instanceof Uint8Array) {
    if (whole.byteLength > maxBytes) {
      await request.body?.cancel().catch(() => undefined)
      throw tooLarge(maxBytes)
    }
    return await request.bytes()
  }
  if (request.body === null) return new Uint8Array(0)

  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    let step: ReadableStreamReadResult<Uint8Array>
    try {
      step = await reader.read()
    } catch (cause) {
      throw problems.badRequest.error(
        { detail: 'The request body ended before it was complete.' },
        { cause },
      )
    }
    if (step.done) break
    const chunk = step.value
    total += chunk.byteLength
    if (total > maxBytes) {
      reader.cancel().catch(() => undefined)
      throw tooLarge(maxBytes)
    }
    chunks.push(chunk)
  }
  if (chunks.length === 1) return chunks[0]!
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

// fatal: invalid UTF-8 is an error, never silently replaced by U+FFFD. One decoder serves every
// call: without `stream`, decode() keeps no state between calls.
const utf8 = new TextDecoder('utf-8', { fatal: true })

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch (cause) {
    throw problems.badRequest.error({ detail: 'The request body is not valid UTF-8.' }, { cause })
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

/** The media types {@link readJson} accepts. */
export const JSON_MEDIA_TYPES: readonly string[] = ['application/json', 'application/*+json']

/**
 * What {@link readJson} needs from a schema: zod's `safeParse`. Any zod schema fits.
 */
export interface JsonSchema<T> {
  safeParse(
    data: unknown,
  ):
    | { success: true; data: T }
    | { success: false; error: Parameters<typeof zodIssuesToPointers>[0] }
}

/**
 * Reads a JSON body with a byte limit and validates it with a zod schema.
 * - 415 when Content-Type is not `application/json` or `application/*+json`, or names a
 *   charset other than UTF-8 (RFC 8259 §8.1: JSON exchanged between systems is UTF-8);
 * - 413 / 400 as {@link readBody}; 400 for invalid UTF-8 or invalid JSON;
 * - 422 `validation` with one `{ detail, pointer }` per schema issue (JSON Pointers).
 *
 * @example
 * ```ts
 * import { z } from 'zod'
 * const Order = z.object({ sku: z.string(), quantity: z.number().int().positive() })
 * const order = await readJson(request, Order, { maxBytes: 16 * 1024 })
 * ```
 */
export async function readJson<T>(
  request: Request,
  schema: JsonSchema<T>,
  options: ReadBodyOptions = {},
): Promise<T> {
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
  const parsed = takeParsedJson(request)
  const bytes = await readBody(request, options)
  let data: unknown
  if (parsed !== undefined) data = parsed.value
  else {
    const text = decodeUtf8(bytes)
    try {
      data = JSON.parse(text)
    } catch (cause) {
      // The parser's message quotes the body; it is not echoed back.
      throw problems.badRequest.error({ detail: 'The request body is not valid JSON.' }, { cause })
    }
  }
  let result: ReturnType<JsonSchema<T>['safeParse']>
  try {
    result = schema.safeParse(data)
  } catch (cause) {
    // A recursive schema can run out of stack on hostile nesting: that is bad input, not a 500.
    if (!(cause instanceof RangeError)) throw cause
    throw problems.badRequest.error({ detail: 'The request body is nested too deeply.' }, { cause })
  }
  if (result.success) return result.data
  const errors: ProblemPointer[] = zodIssuesToPointers(result.error)
  throw problems.validation.error({
    errors,
    detail: `${errors.length} member(s) of the body are not valid.`,
  })
}
