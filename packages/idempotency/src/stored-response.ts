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
 * Serialises a stored response as JSON text, the body in base64 (RFC 4648 §4, padded), written
 * by `encodeBase64` of `@api-blocks/core` (Node's native Buffer under the `node` export
 * condition: every Redis write of a response pays it).
 *
 * @example
 * ```ts
 * const text = encodeStoredResponse({ status: 201, headers: [['content-type', 'text/plain']], body: new Uint8Array([104, 105]) })
 * // '{"v":1,"status":201,"headers":[["content-type","text/plain"]],"body":"aGk="}'
 * ```
 */
export function encodeStoredResponse(response: StoredResponse): string {
  return JSON.stringify({
    v: 1,
    status: response.status,
    headers: response.headers.map(([name, value]) => [name, value]),
    body: encodeBase64(response.body),
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
export function decodeStoredResponse(text: string): StoredResponse {
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
  const bytes = decodeBase64(body)
  if (bytes === undefined) throw new TypeError('Stored response body is not base64')
  return { status, headers: headers.map(([name, value]) => [name, value] as const), body: bytes }
}
