/**
 * A text form of {@link StoredResponse} for stores that keep strings (a Redis hash field, a
 * `text` column, a DynamoDB string attribute). Stores with a binary type (PostgreSQL `bytea`)
 * may keep the parts in columns instead; either way the body must come back byte for byte.
 *
 * Form (version 1): `{"v":1,"status":201,"headers":[["content-type","…"]],"body":"<base64>"}`.
 *
 * @module
 */
import { decodeBase64, encodeBase64 } from '@api-blocks/core'
import type { StoredResponse } from './store.ts'

/**
 * How the codec writes and reads the body's base64 (RFC 4648 §4, padded). The default is
 * `encodeBase64` / `decodeBase64` of `@api-blocks/core`, portable JavaScript; a store that runs
 * on Node only may pass Node's native `Buffer` base64 instead (as `@api-blocks/redis` does),
 * which is several times faster on bodies of a few hundred bytes and more.
 *
 * @example
 * ```ts
 * const base64: StoredResponseCodecOptions = {
 *   encodeBase64: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
 *   decodeBase64: (text) => new Uint8Array(Buffer.from(text, 'base64')),
 * }
 * const text = encodeStoredResponse(response, base64)
 * ```
 */
export interface StoredResponseCodecOptions {
  /** Encodes the body (only its own bytes: it may be a view into a larger buffer). */
  readonly encodeBase64?: (bytes: Uint8Array) => string
  /** Decodes the body; `undefined` (or a throw) for text that is not base64. */
  readonly decodeBase64?: (text: string) => Uint8Array | undefined
}

/**
 * Serialises a stored response as JSON text, the body in base64 (RFC 4648 §4; see
 * {@link StoredResponseCodecOptions} for the base64 it uses).
 *
 * @example
 * ```ts
 * const text = encodeStoredResponse({ status: 201, headers: [['content-type', 'text/plain']], body: new Uint8Array([104, 105]) })
 * // '{"v":1,"status":201,"headers":[["content-type","text/plain"]],"body":"aGk="}'
 * ```
 */
export function encodeStoredResponse(
  response: StoredResponse,
  options: StoredResponseCodecOptions = {},
): string {
  return JSON.stringify({
    v: 1,
    status: response.status,
    headers: response.headers.map(([name, value]) => [name, value]),
    body: (options.encodeBase64 ?? encodeBase64)(response.body),
  })
}

/**
 * Parses the text of {@link encodeStoredResponse}.
 *
 * @throws {TypeError} when the text is not a version 1 stored response (a corrupt record: the
 *   middleware treats it as a store failure, 503, and runs nothing).
 *
 * @example
 * ```ts
 * const response = decodeStoredResponse(text)
 * new Response(response.body, { status: response.status, headers: [...response.headers] })
 * ```
 */
export function decodeStoredResponse(
  text: string,
  options: StoredResponseCodecOptions = {},
): StoredResponse {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new TypeError('Stored response is not JSON', { cause })
  }
  const record = value as { v?: unknown; status?: unknown; headers?: unknown; body?: unknown }
  if (typeof value !== 'object' || value === null || record.v !== 1) {
    throw new TypeError('Stored response is not version 1')
  }
  const { status, headers, body } = record
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    throw new TypeError('Stored response has no valid status')
  }
  if (
    !Array.isArray(headers) ||
    !headers.every(
      (pair): pair is [string, string] =>
        Array.isArray(pair) &&
        pair.length === 2 &&
        typeof pair[0] === 'string' &&
        typeof pair[1] === 'string',
    )
  ) {
    throw new TypeError('Stored response has malformed headers')
  }
  if (typeof body !== 'string') throw new TypeError('Stored response has no body')
  let bytes: Uint8Array | undefined
  try {
    bytes = (options.decodeBase64 ?? decodeBase64)(body)
  } catch (cause) {
    throw new TypeError('Stored response body is not base64', { cause })
  }
  if (bytes === undefined) throw new TypeError('Stored response body is not base64')
  return { status, headers: headers.map(([name, value]) => [name, value] as const), body: bytes }
}
