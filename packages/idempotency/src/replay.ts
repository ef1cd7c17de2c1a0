/**
 * What of a response is stored, and how it is replayed.
 *
 * The draft asks that a duplicate of a completed request get "the result of the previously
 * completed operation" (draft-ietf-httpapi-idempotency-key-header §2.6). A replay here has the
 * stored status, the stored header fields and the stored body byte for byte, plus
 * `Idempotent-Replayed: true` so a client (and its logs) can tell.
 *
 * Header fields that are never stored (so never replayed):
 * - hop-by-hop fields (RFC 9110 §7.6.1): `Connection` and every field it names, `Keep-Alive`,
 *   `Proxy-Connection`, `TE`, `Transfer-Encoding`, `Trailer`, `Upgrade`,
 *   `Proxy-Authenticate`, `Proxy-Authorization`: they describe one connection, not the result;
 * - `Date` (RFC 9110 §6.6.1: the time the message was generated; the replay is a new message)
 *   and `Content-Length` (the runtime sets it from the body, which is the same bytes);
 * - `Set-Cookie`: a cookie is a credential for a session; storing it would keep credentials at
 *   rest in a shared store, and replaying it would hand out a session again on every retry.
 *   A handler that needs a cookie on a retried request sets it outside the idempotent part;
 * - `Idempotent-Replayed` itself;
 * - any name in the middleware's `omitHeaders` option.
 *
 * @module
 */
import { headerFieldsOf } from '@api-blocks/core'
import type { StoredResponse } from './store.ts'

/**
 * Header fields never stored or replayed, lowercased (see the module documentation).
 *
 * @example
 * ```ts
 * NEVER_REPLAYED_HEADERS.includes('set-cookie') // true
 * ```
 */
export const NEVER_REPLAYED_HEADERS: readonly string[] = Object.freeze([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'trailer',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'date',
  'content-length',
  'set-cookie',
  'idempotent-replayed',
])

/**
 * The header field a replay carries (value `true`).
 *
 * @example
 * ```ts
 * const replayed = response.headers.get(REPLAYED_HEADER) === 'true'
 * ```
 */
export const REPLAYED_HEADER = 'idempotent-replayed'

const NEVER_REPLAYED: ReadonlySet<string> = new Set(NEVER_REPLAYED_HEADERS)

// Fetch: a response with one of these statuses has a null body.
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/**
 * The header fields of a response that are stored for replays, in the order `Headers`
 * iterates them (names lowercased, sorted), without the {@link NEVER_REPLAYED_HEADERS}, the
 * fields `Connection` names, or `omit`.
 *
 * @example
 * ```ts
 * storableHeaders(new Headers({ 'content-type': 'application/json', date: 'Tue, 01 Apr 2025 10:00:00 GMT' }))
 * // [['content-type', 'application/json']]
 * ```
 */
export function storableHeaders(
  headers: Headers,
  omit: readonly string[] = [],
): [name: string, value: string][] {
  const skip = skipped(omit, headers.get('connection'))
  const stored: [string, string][] = []
  for (const [name, value] of headers) if (!skip.has(name)) stored.push([name, value])
  return stored
}

// The names not stored: the fixed list, `omit`, and (RFC 9110 §7.6.1) the further hop-by-hop
// fields the Connection field lists.
function skipped(omit: readonly string[], connection: string | null): ReadonlySet<string> {
  let skip: ReadonlySet<string> =
    omit.length === 0
      ? NEVER_REPLAYED
      : new Set([...NEVER_REPLAYED, ...omit.map((name) => name.toLowerCase())])
  if (connection !== null) {
    const named = new Set(skip)
    for (const name of connection.split(',')) {
      const trimmed = name.trim().toLowerCase()
      if (trimmed) named.add(trimmed)
    }
    skip = named
  }
  return skip
}

/**
 * @internal The stored header fields of `response`, as {@link storableHeaders} gives them for
 * `response.headers`. A Response whose fields were given as a plain record and never built a
 * `Headers` object (`@api-blocks/node`'s) lists them through `headerFieldsOf` (names
 * lower-cased and unique, in the order given): they are read from there, so no `Headers`
 * object is built for them. The same fields, in insertion order rather than sorted.
 */
export function storedFieldsOf(
  response: Response,
  omit: readonly string[],
): [name: string, value: string][] {
  const fields = headerFieldsOf(response)
  if (fields === undefined) return storableHeaders(response.headers, omit)
  let connection: string | null = null
  for (let index = 0; index < fields.length; index += 2) {
    if (fields[index] === 'connection') connection = fields[index + 1] as string
  }
  const skip = skipped(omit, connection)
  const stored: [string, string][] = []
  for (let index = 0; index < fields.length; index += 2) {
    const name = fields[index] as string
    if (!skip.has(name)) stored.push([name, fields[index + 1] as string])
  }
  return stored
}

/**
 * A new Response from a stored one: the stored status, header fields and body bytes, plus
 * `Idempotent-Replayed: true`.
 *
 * @example
 * ```ts
 * const response = replayResponse({ status: 201, headers: [['content-type', 'text/plain']], body: new TextEncoder().encode('created') })
 * response.headers.get('idempotent-replayed') // 'true'
 * ```
 */
export function replayResponse(stored: StoredResponse): Response {
  const headers = new Headers()
  for (const [name, value] of stored.headers) headers.append(name, value)
  headers.set(REPLAYED_HEADER, 'true')
  // The Response copies the bytes (Fetch "extract a body"): no copy of our own.
  const body = NULL_BODY_STATUSES.has(stored.status) ? null : stored.body
  return new Response(body as Uint8Array<ArrayBuffer> | null, { status: stored.status, headers })
}
