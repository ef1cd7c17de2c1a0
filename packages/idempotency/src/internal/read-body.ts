/**
 * Reads a request body into memory with a size limit, for fingerprinting; the same bytes are
 * then handed on to the handler in a new Request.
 *
 * @module
 */
import { IdempotencyError } from '../error.ts'
import { concat } from './encoding.ts'
import { WHOLE_BODY } from './whole-body.ts'

/**
 * The body of `request`, at most `maxBytes` long; `null` when the request has none.
 *
 * @throws {IdempotencyError} `body_too_large` (413) when Content-Length or the bytes read go
 *   over `maxBytes` (reading stops there); `body_unreadable` (400) when the stream fails, as
 *   when the client hangs up mid-body.
 */
export async function readBodyBounded(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array | null> {
  const tooLarge = () =>
    new IdempotencyError('body_too_large', `The request body is larger than ${maxBytes} bytes.`, {
      maxBytes,
    })
  // Bytes the Request holds in memory (a framework read them; see whole-body.ts): used as
  // they are, without a stream and without consuming the request. The middleware then hands
  // the handler this same request (see withBody in middleware.ts).
  const whole: unknown = (request as { [WHOLE_BODY]?: unknown })[WHOLE_BODY]
  if (whole instanceof Uint8Array) {
    if (whole.byteLength > maxBytes) throw tooLarge()
    return whole
  }
  if (request.body === null) return null
  // RFC 9110 §8.6: refuse before reading when the announced length is over the limit.
  const declared = request.headers.get('content-length')
  if (declared !== null && /^[0-9]+$/.test(declared) && Number(declared) > maxBytes) {
    throw tooLarge()
  }
  let reader: ReadableStreamDefaultReader<Uint8Array>
  try {
    reader = request.body.getReader()
  } catch (cause) {
    throw new IdempotencyError('body_unreadable', 'The request body was already read.', { cause })
  }
  const chunks: Uint8Array[] = []
  let length = 0
  for (;;) {
    let result: ReadableStreamReadResult<Uint8Array>
    try {
      result = await reader.read()
    } catch (cause) {
      throw new IdempotencyError('body_unreadable', 'The request body could not be read.', {
        cause,
      })
    }
    if (result.done) break
    length += result.value.byteLength
    if (length > maxBytes) {
      // Not awaited: the answer must not wait on the source (a teed body, for one, settles its
      // cancel only once every branch is cancelled: Streams spec, ReadableStreamTee).
      reader.cancel().catch(() => undefined)
      throw tooLarge()
    }
    chunks.push(result.value)
  }
  return concat(chunks, length)
}
