/**
 * The one bounded body reader of api-blocks. Every block that reads a body whole (a request
 * body for a handler or a fingerprint, a response body to store or hash, a problem a client
 * received) reads it here, so there is one place where the limit is enforced: checked against
 * Content-Length before reading, and again chunk by chunk, so a body without Content-Length
 * stops at the first chunk past the limit.
 *
 * Failures are {@link BodyReadError}s with a stable code:
 *
 * | code | status | when |
 * |---|---|---|
 * | `BODY_TOO_LARGE` | 413 | Content-Length or the bytes read go over `maxBytes` |
 * | `CONTENT_LENGTH_INVALID` | 400 | Content-Length is not `1*DIGIT` (RFC 9110 §8.6) |
 * | `BODY_UNREADABLE` | 400 | the stream failed (the client hung up mid-body) |
 * | `BODY_ALREADY_READ` | 500 | something read the body before (a framework body parser) |
 *
 * A stream that fails with an `ApiBlocksError` of its own (an adapter's, saying why) fails
 * with that error instead, so its status stands.
 *
 * @module
 */
import { readWholeBody, wholeBodyOf } from './body-slots.ts'
import { ApiBlocksError } from './error.ts'

/**
 * The stable codes of {@link BodyReadError}.
 *
 * @example
 * ```ts
 * const code: BodyReadErrorCode = 'BODY_TOO_LARGE'
 * ```
 */
export type BodyReadErrorCode =
  | 'BODY_TOO_LARGE'
  | 'CONTENT_LENGTH_INVALID'
  | 'BODY_UNREADABLE'
  | 'BODY_ALREADY_READ'

const STATUS: Readonly<Record<BodyReadErrorCode, number>> = {
  BODY_TOO_LARGE: 413,
  CONTENT_LENGTH_INVALID: 400,
  BODY_UNREADABLE: 400,
  BODY_ALREADY_READ: 500,
}

/**
 * A body that could not be read within its limit. Blocks answer it with their catalog's
 * problem (`@api-blocks/http` answers 413 `payload-too-large` with `max_bytes`); on its own it
 * answers an `about:blank` problem with its status.
 *
 * @example
 * ```ts
 * try { await readStream(stream, 1024) } catch (error) {
 *   if (error instanceof BodyReadError && error.code === 'BODY_TOO_LARGE') console.log(error.maxBytes)
 * }
 * ```
 */
export class BodyReadError extends ApiBlocksError<BodyReadErrorCode> {
  static override readonly kind: string = 'core.BodyReadError'
  /** The limit that applied. */
  readonly maxBytes: number

  constructor(code: BodyReadErrorCode, message: string, maxBytes: number, options?: ErrorOptions) {
    super(code, message, { ...options, status: STATUS[code] })
    this.maxBytes = maxBytes
  }
}

function checkLimit(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError('maxBytes must be a non-negative safe integer')
  }
}

function tooLarge(maxBytes: number): BodyReadError {
  return new BodyReadError('BODY_TOO_LARGE', `The body is larger than ${maxBytes} bytes.`, maxBytes)
}

/**
 * The chunks as one array of `length` bytes (default: their total); a single chunk is
 * returned as it is.
 *
 * @example
 * ```ts
 * concatBytes([new Uint8Array([1]), new Uint8Array([2, 3])]) // Uint8Array [1, 2, 3]
 * ```
 */
export function concatBytes(chunks: readonly Uint8Array[], length?: number): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0]
  let total = length ?? 0
  if (length === undefined) for (const chunk of chunks) total += chunk.byteLength
  const out = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.byteLength
  }
  return out
}

type Step = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>

// A stream of anything but bytes is a programming error, never the client's: a TypeError,
// outside the readers' handling of a failing stream.
function checkChunk(step: Step, reader: ReadableStreamDefaultReader<Uint8Array>): void {
  if (!step.done && !(step.value instanceof Uint8Array)) {
    reader.cancel().catch(() => undefined)
    throw new TypeError('A body chunk is not a Uint8Array')
  }
}

/**
 * Reads `stream` to its end, at most `maxBytes`. Past the limit it cancels the stream (not
 * awaited: the answer must not wait on the source) and throws `BODY_TOO_LARGE`; a failing
 * stream throws `BODY_UNREADABLE`, or the stream's own `ApiBlocksError`.
 *
 * @example
 * ```ts
 * const bytes = await readStream(response.body, 64 * 1024)
 * ```
 */
export async function readStream(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array> {
  checkLimit(maxBytes)
  let reader: ReadableStreamDefaultReader<Uint8Array>
  try {
    reader = stream.getReader()
  } catch (cause) {
    throw new BodyReadError('BODY_ALREADY_READ', 'The body was already read.', maxBytes, { cause })
  }
  const chunks: Uint8Array[] = []
  let length = 0
  for (;;) {
    let step: Step
    try {
      step = await reader.read()
    } catch (cause) {
      if (cause instanceof ApiBlocksError) throw cause
      throw new BodyReadError('BODY_UNREADABLE', 'The body could not be read.', maxBytes, {
        cause,
      })
    }
    checkChunk(step, reader)
    if (step.done) return concatBytes(chunks, length)
    length += step.value.byteLength
    if (length > maxBytes) {
      reader.cancel().catch(() => undefined)
      throw tooLarge(maxBytes)
    }
    chunks.push(step.value)
  }
}

/**
 * What {@link readAhead} found: the whole body, or (past the limit) a stream that gives the
 * bytes read so far and then the rest of the source.
 *
 * @example
 * ```ts
 * const ahead: ReadAhead = await readAhead(response.body, 1024)
 * const body = ahead.complete ? ahead.bytes : ahead.stream
 * ```
 */
export type ReadAhead =
  | { readonly complete: true; readonly bytes: Uint8Array }
  | { readonly complete: false; readonly stream: ReadableStream<Uint8Array> }

/**
 * Reads `stream` up to `maxBytes`: the whole body when it ends within the limit; otherwise a
 * stream standing in for the original, nothing lost. For a middleware that keeps bodies up
 * to a size (to store or hash them) and passes larger ones through. A failing stream rejects
 * with the stream's own error.
 *
 * @example
 * ```ts
 * const ahead = await readAhead(response.body, 1024 * 1024)
 * if (ahead.complete) await store.put(ahead.bytes)
 * ```
 */
export async function readAhead(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<ReadAhead> {
  checkLimit(maxBytes)
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  for (;;) {
    let step: Step
    try {
      step = await reader.read()
    } catch (error) {
      reader.cancel(error).catch(() => undefined)
      throw error
    }
    checkChunk(step, reader)
    if (step.done) return { complete: true, bytes: concatBytes(chunks, length) }
    chunks.push(step.value)
    length += step.value.byteLength
    if (length > maxBytes) return { complete: false, stream: resume(chunks, reader) }
  }
}

/** The chunks already read, then the rest of the source. */
function resume(
  read: Uint8Array[],
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = read.shift()
      if (next !== undefined) return controller.enqueue(next)
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel: (reason) => reader.cancel(reason),
  })
}

/**
 * Options of {@link readRequestBody}.
 *
 * @example
 * ```ts
 * const options: ReadRequestBodyOptions = { maxBytes: 64 * 1024, consume: false }
 * ```
 */
export interface ReadRequestBodyOptions {
  /** The largest body accepted, in bytes. */
  maxBytes: number
  /**
   * Whether the Request's body is consumed (default true). `false` leaves a body the Request
   * holds in memory (see `wholeBodyOf`) unread, for a middleware that reads it and then hands
   * the same Request on; a streamed body is consumed either way.
   */
  consume?: boolean
}

/**
 * Reads a request body whole, refusing more than `maxBytes`: Content-Length is checked first
 * (RFC 9110 §8.6 and §15.5.14: refused before reading, the body cancelled), then the bytes. A
 * body the Request holds in memory is taken without a stream. A request without a body gives
 * an empty array.
 *
 * @example
 * ```ts
 * const bytes = await readRequestBody(request, { maxBytes: 64 * 1024 })
 * ```
 */
export async function readRequestBody(
  request: Request,
  options: ReadRequestBodyOptions,
): Promise<Uint8Array> {
  const { maxBytes, consume = true } = options
  checkLimit(maxBytes)
  const refuse = async (error: BodyReadError): Promise<never> => {
    await request.body?.cancel().catch(() => undefined)
    throw error
  }
  const length = request.headers.get('content-length')
  if (length !== null) {
    const digits = length.trim()
    // RFC 9112 §6.3 item 5: an invalid Content-Length is an unrecoverable framing error.
    if (!/^\d+$/.test(digits)) {
      return refuse(
        new BodyReadError(
          'CONTENT_LENGTH_INVALID',
          'The Content-Length header is malformed.',
          maxBytes,
        ),
      )
    }
    if (Number(digits) > maxBytes) return refuse(tooLarge(maxBytes))
  }
  const whole = wholeBodyOf(request)
  if (whole instanceof Uint8Array) {
    if (whole.byteLength > maxBytes) return refuse(tooLarge(maxBytes))
    return consume ? await request.bytes() : whole
  }
  const own = readWholeBody(request, maxBytes)
  if (own !== undefined) return readOwn(own, maxBytes)
  if (request.bodyUsed) {
    throw new BodyReadError('BODY_ALREADY_READ', 'The request body was already read.', maxBytes)
  }
  if (request.body === null) return new Uint8Array(0)
  return readStream(request.body, maxBytes)
}

/** The limit and the failures as {@link readStream} has them. */
async function readOwn(read: Promise<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  let bytes: Uint8Array
  try {
    bytes = await read
  } catch (cause) {
    if (cause instanceof ApiBlocksError) throw cause
    throw new BodyReadError('BODY_UNREADABLE', 'The body could not be read.', maxBytes, { cause })
  }
  if (!(bytes instanceof Uint8Array)) throw new TypeError('A body chunk is not a Uint8Array')
  if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes)
  return bytes
}
