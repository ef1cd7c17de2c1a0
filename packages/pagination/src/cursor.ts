/**
 * Signed opaque cursors: a keyset position, bound to the query it was issued for, in a
 * versioned, URL-safe string signed with HMAC-SHA-256 (through `@api-blocks/core/crypto`:
 * node:crypto on Node, Bun and Deno, Web Crypto elsewhere; the same bytes on both).
 *
 * Wire format (version 1), every part in the base64url alphabet or `.`, so a cursor never
 * needs percent-encoding in a query string:
 *
 * ```
 * v1.<key id>.<payload>.<signature>
 * payload   = base64url(UTF-8 JSON {"p": position, "d": "asc"|"desc", "s": sort hash,
 *                                   "q": filter hash, "e"?: expiry, ms since the epoch})
 * signature = base64url(HMAC-SHA-256(key, ASCII "v1.<key id>.<payload>"))
 * ```
 *
 * The payload is signed, not encrypted: a client can read the sort values of the row a cursor
 * points at (it has seen that row), but cannot forge or alter a cursor, nor replay one on
 * another query (Google AIP-158: a page token must not be usable across queries).
 *
 * @see https://google.aip.dev/158
 * @see https://www.rfc-editor.org/rfc/rfc2104 (HMAC)
 * @module
 */

import { decodeBase64url, encodeBase64url } from '@api-blocks/core'
import type { HmacKey } from '@api-blocks/core/crypto'
import { createHmacKey, hmacSha256, sha256, verifyHmacSha256 } from '@api-blocks/core/crypto'
import { PaginationError } from './error.ts'
import type { FilterValue } from './internal/filters.ts'
import { canonicalFilters } from './internal/filters.ts'
import type { CursorPosition, CursorValue, KeysetOrder } from './keyset.ts'
import { assertOrder, isCursorValue, MAX_KEYS, positionOf } from './keyset.ts'

export type { FilterValue } from './internal/filters.ts'

/**
 * The default and documented maximum length of a cursor, in characters (1 KiB).
 *
 * @example
 * ```ts
 * createCursorCodec({ keys, maxLength: MAX_CURSOR_LENGTH * 2 }) // for long sort keys
 * ```
 */
export const MAX_CURSOR_LENGTH = 1024

/**
 * The shortest secret a key may have, in bytes (the HMAC-SHA-256 output size, RFC 2104 §3).
 *
 * @example
 * ```ts
 * const secret = crypto.getRandomValues(new Uint8Array(MIN_SECRET_BYTES))
 * ```
 */
export const MIN_SECRET_BYTES = 32

/**
 * The cursor format version this codec writes and reads.
 *
 * @example
 * ```ts
 * cursor.startsWith(`v${CURSOR_VERSION}.`) // true for every cursor this codec issues
 * ```
 */
export const CURSOR_VERSION = 1

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/
// v<version>.<key id>.<payload>.<signature: 32 bytes = 43 base64url characters>
const CURSOR = /^v([0-9]{1,3})\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/
const SORT_HASH = /^[A-Za-z0-9_-]{11}$/
const FILTER_HASH = /^[A-Za-z0-9_-]{22}$/

/**
 * One signing key of a key ring.
 *
 * @example
 * ```ts
 * const key: CursorKey = { id: '2026-06', secret: process.env.CURSOR_SECRET! }
 * ```
 */
export interface CursorKey {
  /** Carried in every cursor it signs: 1 to 32 characters of `A-Z a-z 0-9 _ -`. */
  readonly id: string
  /**
   * At least {@link MIN_SECRET_BYTES} bytes. A string is used as its UTF-8 bytes, so a
   * base64 text of 32 random bytes (44 characters) qualifies.
   */
  readonly secret: Uint8Array | string
}

/**
 * Options of {@link createCursorCodec}.
 *
 * @example
 * ```ts
 * const options: CursorCodecOptions = {
 *   keys: [{ id: '2026-07', secret: newSecret }, { id: '2026-06', secret: oldSecret }],
 *   ttlMs: 24 * 60 * 60 * 1000,
 * }
 * const codec = createCursorCodec(options)
 * ```
 */
export interface CursorCodecOptions {
  /**
   * The key ring, newest first: `keys[0]` signs every new cursor, every listed key verifies.
   * Rotate by putting a new key first; retire a key by removing it, after which its cursors
   * fail with `CURSOR_UNKNOWN_KEY`.
   */
  readonly keys: readonly CursorKey[]
  /** Lifetime of a new cursor in milliseconds. Without it, cursors do not expire. */
  readonly ttlMs?: number
  /** Milliseconds since the epoch; default `Date.now`. */
  readonly clock?: () => number
  /** Longest cursor accepted (and issued), in characters; default {@link MAX_CURSOR_LENGTH}. */
  readonly maxLength?: number
}

/**
 * What a cursor is bound to: the order (its keys and direction) and the filters of the
 * query. A cursor decodes only for an equal query; the page size is not part of it, so a
 * client may change `limit` between pages.
 *
 * @example
 * ```ts
 * const query: CursorQuery = {
 *   order: { keys: ['created_at', 'id'], direction: 'desc' },
 *   filters: { status: url.searchParams.get('status'), owner: principal.subject },
 * }
 * const cursors = codec.forQuery(query)
 * ```
 */
export interface CursorQuery {
  readonly order: KeysetOrder
  /**
   * The normalised filters: anything that selects which rows are listed. Compared by
   * canonical JSON (member order does not matter, array order does; `undefined` members are
   * dropped, and `undefined` elsewhere or a number that is not finite counts as `null`, as
   * `JSON.stringify` writes them), through a SHA-256 hash carried in the cursor. Filters
   * nested deeper than 512 levels, or holding anything else, make `encode` and `decode`
   * reject with a `TypeError` (a server bug, not client input).
   */
  readonly filters?: FilterValue
}

/**
 * Cursors of one query: see {@link CursorCodec.forQuery}.
 *
 * @example
 * ```ts
 * const cursors: QueryCursorCodec = codec.forQuery(query)
 * const cursor = await cursors.cursorOf({ id: 'ord_1', created_at: new Date() })
 * const position = await cursors.decode(cursor) // ['2026-…Z', 'ord_1']
 * ```
 */
export interface QueryCursorCodec {
  readonly query: CursorQuery
  /** Signs a position (one value per key of the order) as a cursor. */
  encode(position: CursorPosition): Promise<string>
  /** The cursor of an item: {@link positionOf} then {@link QueryCursorCodec.encode}. */
  cursorOf(item: object): Promise<string>
  /**
   * Verifies a cursor and returns its position. Rejects with a {@link PaginationError}
   * (`invalid-cursor`, 400), and with nothing else, whatever the input.
   */
  decode(cursor: string): Promise<CursorValue[]>
}

/**
 * A cursor codec over one key ring: see {@link createCursorCodec}.
 *
 * @example
 * ```ts
 * const codec: CursorCodec = createCursorCodec({ keys })
 * const cursors = codec.forQuery({ order: { keys: ['id'], direction: 'asc' } })
 * ```
 */
export interface CursorCodec {
  /** The codec for the cursors of one query (order and filters). */
  forQuery(query: CursorQuery): QueryCursorCodec
}

interface RingKey {
  readonly id: string
  readonly key: HmacKey
}

const encoder = new TextEncoder()

function secretBytes(key: CursorKey, index: number): Uint8Array {
  if (
    typeof key !== 'object' ||
    key === null ||
    typeof key.id !== 'string' ||
    !KEY_ID.test(key.id)
  ) {
    throw new TypeError(`Cursor key ${index}: id must be 1 to 32 characters of A-Z a-z 0-9 _ -`)
  }
  const { secret } = key
  let bytes: Uint8Array
  if (typeof secret === 'string') bytes = encoder.encode(secret)
  else if (secret instanceof Uint8Array) bytes = secret
  else throw new TypeError(`Cursor key "${key.id}": secret must be a Uint8Array or a string`)
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RangeError(
      `Cursor key "${key.id}": secret is ${bytes.length} bytes; at least ${MIN_SECRET_BYTES} are required`,
    )
  }
  return bytes
}

function malformed(): never {
  throw new PaginationError('CURSOR_MALFORMED', 'The cursor is malformed.')
}

/**
 * Makes a cursor codec over a key ring. Keys are checked here, synchronously (a short or
 * duplicate key throws at start-up, never at request time), and each becomes one HMAC key
 * (`createHmacKey` of `@api-blocks/core/crypto`) for every cursor it signs or verifies.
 *
 * Decoding checks, in this order, and answers `invalid-cursor` (400) at the first failure:
 * length (before any decoding), format and canonical base64url, version, key id, signature
 * (constant time), payload shape, expiry, sort, filters. A cursor is never silently ignored:
 * a bad one is an error, not a restart from page one.
 *
 * @example
 * ```ts
 * const codec = createCursorCodec({
 *   keys: [{ id: '2026-06', secret: process.env.CURSOR_SECRET! }],
 *   ttlMs: 24 * 60 * 60 * 1000,
 * })
 * const cursors = codec.forQuery({
 *   order: { keys: ['created_at', 'id'], direction: 'desc' },
 *   filters: { status: 'open' },
 * })
 * const cursor = await cursors.encode(['2026-06-01T10:00:00.000Z', 'ord_000042'])
 * await cursors.decode(cursor) // ['2026-06-01T10:00:00.000Z', 'ord_000042']
 * ```
 */
export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  const { keys, ttlMs, clock = Date.now, maxLength = MAX_CURSOR_LENGTH } = options
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new TypeError('A cursor codec needs at least one key')
  }
  if (ttlMs !== undefined && !(Number.isSafeInteger(ttlMs) && ttlMs > 0)) {
    throw new RangeError('ttlMs must be a positive whole number of milliseconds')
  }
  if (!Number.isSafeInteger(maxLength) || maxLength < 128) {
    throw new RangeError('maxLength must be a whole number of at least 128 characters')
  }
  const ring = new Map<string, RingKey>()
  keys.forEach((key, index) => {
    const bytes = secretBytes(key, index)
    if (ring.has(key.id)) throw new TypeError(`Cursor key id "${key.id}" is listed twice`)
    // One key object per secret, made here: no cursor imports the secret again.
    ring.set(key.id, { id: key.id, key: createHmacKey(bytes) })
  })
  const signer = ring.get(keys[0]!.id)!

  return {
    forQuery(query: CursorQuery): QueryCursorCodec {
      assertOrder(query.order)
      const { order } = query
      let hashes: Promise<{ sort: string; filters: string }> | undefined
      const queryHashes = () => {
        hashes ??= hashQuery(query)
        return hashes
      }

      const encode = async (position: CursorPosition): Promise<string> => {
        if (
          !Array.isArray(position) ||
          position.length !== order.keys.length ||
          !position.every(isCursorValue)
        ) {
          throw new TypeError(
            `A position needs ${order.keys.length} values (strings, finite numbers or booleans)`,
          )
        }
        const { sort, filters } = await queryHashes()
        const payload: Payload = {
          // -0 is written as 0, as JSON does.
          p: position.map((value) => (value === 0 ? 0 : value)),
          d: order.direction,
          s: sort,
          q: filters,
        }
        if (ttlMs !== undefined) {
          const expiry = Math.floor(clock()) + ttlMs
          if (!Number.isSafeInteger(expiry) || expiry < 0) {
            throw new TypeError('The clock must return milliseconds since the epoch')
          }
          payload.e = expiry
        }
        const body = `v${CURSOR_VERSION}.${signer.id}.${encodeBase64url(encoder.encode(JSON.stringify(payload)))}`
        const cursor = `${body}.${encodeBase64url(await hmacSha256(signer.key, body))}`
        if (cursor.length > maxLength) {
          // A server-side fault: the sort keys are too long to page by. Failing here beats
          // handing out a cursor that every later request would reject.
          throw new RangeError(
            `The cursor would be ${cursor.length} characters, more than maxLength ${maxLength}: use shorter sort keys`,
          )
        }
        return cursor
      }

      const decode = async (cursor: string): Promise<CursorValue[]> => {
        if (typeof cursor !== 'string') malformed()
        // The length limit comes before any parsing or decoding.
        if (cursor.length > maxLength) {
          throw new PaginationError(
            'CURSOR_TOO_LONG',
            `The cursor is longer than ${maxLength} characters.`,
          )
        }
        const parts = CURSOR.exec(cursor)
        if (parts === null) malformed()
        const [, version, keyId, payloadText, macText] = parts as unknown as [
          string,
          string,
          string,
          string,
          string,
        ]
        if (Number(version) !== CURSOR_VERSION) {
          throw new PaginationError('CURSOR_VERSION', 'The cursor format is not supported.')
        }
        const ringKey = ring.get(keyId)
        if (ringKey === undefined) {
          throw new PaginationError(
            'CURSOR_UNKNOWN_KEY',
            'The cursor was signed with a key that is no longer accepted; start from the first page.',
          )
        }
        // Canonical base64url only: a second spelling of the same MAC is not accepted either.
        const mac = decodeBase64url(macText)
        if (mac === undefined) malformed()
        // verifyHmacSha256 recomputes the HMAC and compares it in constant time, so timing does
        // not reveal how many leading bytes of a forged signature were right. Never compare
        // MACs with === or a byte loop that returns early.
        const signed = cursor.slice(0, cursor.length - macText.length - 1)
        if (!(await verifyHmacSha256(ringKey.key, signed, mac))) {
          throw new PaginationError('CURSOR_SIGNATURE', 'The cursor signature does not verify.')
        }
        // Signed by us: a bad payload now means a bug or a compromised key, still a 400.
        const payload = parsePayload(payloadText)
        if (payload.e !== undefined && clock() >= payload.e) {
          throw new PaginationError(
            'CURSOR_EXPIRED',
            'The cursor has expired; start again from the first page.',
          )
        }
        const { sort, filters } = await queryHashes()
        if (
          payload.d !== order.direction ||
          payload.s !== sort ||
          payload.p.length !== order.keys.length
        ) {
          throw new PaginationError(
            'CURSOR_SORT_MISMATCH',
            'The cursor was issued for another sort order.',
          )
        }
        if (payload.q !== filters) {
          throw new PaginationError(
            'CURSOR_QUERY_MISMATCH',
            'The cursor was issued for other query parameters; keep them unchanged while paging.',
          )
        }
        return payload.p
      }

      return {
        query,
        encode,
        decode,
        cursorOf: async (item) => encode(positionOf(item, order)),
      }
    },
  }
}

interface Payload {
  p: CursorValue[]
  d: 'asc' | 'desc'
  s: string
  q: string
  e?: number
}

const decoder = new TextDecoder('utf-8', { fatal: true })

function parsePayload(text: string): Payload {
  const bytes = decodeBase64url(text)
  if (bytes === undefined) malformed()
  let value: unknown
  try {
    value = JSON.parse(decoder.decode(bytes))
  } catch {
    malformed()
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) malformed()
  const { p, d, s, q, e, ...rest } = value as Record<string, unknown>
  const valid =
    Object.keys(rest).length === 0 &&
    Array.isArray(p) &&
    p.length > 0 &&
    p.length <= MAX_KEYS &&
    p.every(isCursorValue) &&
    (d === 'asc' || d === 'desc') &&
    typeof s === 'string' &&
    SORT_HASH.test(s) &&
    typeof q === 'string' &&
    FILTER_HASH.test(q) &&
    (e === undefined || (Number.isSafeInteger(e) && (e as number) >= 0))
  if (!valid) malformed()
  const payload: Payload = {
    p: p as CursorValue[],
    d: d as Payload['d'],
    s: s as string,
    q: q as string,
  }
  if (e !== undefined) payload.e = e as number
  return payload
}

// The query hashes: SHA-256 over a domain tag and the order's keys (cut to 64 bits), and over
// a domain tag and the canonical filters (cut to 128 bits). The HMAC protects them from edits;
// the cut only has to keep accidental collisions out of reach.
async function hashQuery(query: CursorQuery): Promise<{ sort: string; filters: string }> {
  const [sort, filters] = await Promise.all([
    sha256(`api-blocks/pagination/v1/sort\n${JSON.stringify(query.order.keys)}`),
    sha256(`api-blocks/pagination/v1/filters\n${canonicalFilters(query.filters)}`),
  ])
  return {
    sort: encodeBase64url(sort.subarray(0, 8)),
    filters: encodeBase64url(filters.subarray(0, 16)),
  }
}
