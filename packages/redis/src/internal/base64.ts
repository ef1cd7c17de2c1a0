/**
 * The base64 of stored responses (`encodeStoredResponse` / `decodeStoredResponse` of
 * `@api-blocks/idempotency`), on Node's native `Buffer`: this package runs on Node only, and a
 * first request pays the encoding, a replay the decoding. Measured on Node 24 (this project's
 * machine, 2026-11-25), per call, against the portable `encodeBase64` / `decodeBase64` of
 * `@api-blocks/core` that the codec uses by default:
 *
 * | body | encode: core / Buffer | decode: core / Buffer |
 * |---|---:|---:|
 * | 300 B | 4.2 / 0.5 µs | 1.9 / 1.0 µs |
 * | 2 KiB | 19.6 / 4.7 µs | 12.0 / 5.9 µs |
 * | 64 KiB | 616 / 9 µs | 398 / 73 µs |
 *
 * About 3.5 µs of a first request's 120 µs of CPU on the Redis row of
 * `bench/suites/idempotency.ts`, for a body of a few hundred bytes; more for larger ones.
 *
 * @module
 */
import type { StoredResponseCodecOptions } from '@api-blocks/idempotency'

/** `Buffer`'s base64 for the stored-response codec. */
export const NODE_BASE64: StoredResponseCodecOptions = {
  encodeBase64: (bytes) =>
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
  decodeBase64,
}

/**
 * Padded base64 (RFC 4648 §4) to bytes; `undefined` for text that is not. Buffer itself skips
 * what is not base64, so the length it decoded is checked against the length the text must
 * decode to: a corrupt record is refused rather than read as other bytes. The bytes are a view
 * (into Node's pool for a small body), as a `StoredResponse.body` may be.
 */
function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  const decoded = Buffer.from(text, 'base64')
  if (decoded.byteLength !== (text.length / 4) * 3 - padding) return undefined
  return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength)
}
