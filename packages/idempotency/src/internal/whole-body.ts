/**
 * The body of a Response that holds it in memory, read without consuming it.
 *
 * A Response built by `@api-blocks/node` (its lightweight global `Response`) keeps a string or
 * byte body as given, and answers it through the `Symbol.for('api-blocks.whole-body')`
 * slot: the string or bytes, `null` for no body, or `undefined` once the body is a stream or
 * was read. Reading `response.body` instead would build the native Response and a
 * ReadableStream only to read the same bytes back (about 10 µs a response). Any other
 * Response has no such slot, and the middleware streams its body as before.
 *
 * @module
 */
import { utf8, utf8Shared } from './encoding.ts'

export const WHOLE_BODY: unique symbol = Symbol.for('api-blocks.whole-body') as never

/**
 * The parsed-JSON slot, `Symbol.for('api-blocks.json-body')`: on a Request that holds its
 * body whole, `{ bytes, value }`, where `value` is what `JSON.parse` gives for `bytes` decoded
 * as strict UTF-8. The middleware parsed the body to fingerprint it; `readJson` of
 * `@api-blocks/http` takes the value from here, when `bytes` is still the very array the
 * whole-body slot answers, instead of decoding and parsing the same bytes again.
 */
export const JSON_BODY: unique symbol = Symbol.for('api-blocks.json-body') as never
const EMPTY = new Uint8Array(0)

/**
 * The body bytes when `response` holds them whole in memory; `undefined` otherwise, and `null`
 * when the body is over `maxBytes` (a string is refused by its length before any encoding: its
 * UTF-8 is never shorter). With `shared`, a string is encoded into Node's Buffer pool where
 * there is one: only for a store known to copy the bytes at once (the memory store); any other
 * store gets bytes with a buffer of their own, so one that keeps `.buffer` cannot keep other
 * requests' bytes with them.
 */
export function wholeBody(
  response: Response,
  maxBytes: number,
  shared = false,
): Uint8Array | null | undefined {
  const whole: unknown = (response as { [WHOLE_BODY]?: unknown })[WHOLE_BODY]
  if (whole === null) return EMPTY
  if (typeof whole === 'string') {
    if (whole.length > maxBytes) return null
    const bytes = shared ? utf8Shared(whole) : utf8(whole)
    return bytes.byteLength > maxBytes ? null : bytes
  }
  if (!(whole instanceof Uint8Array)) return undefined
  return whole.byteLength > maxBytes ? null : whole
}
