import { decodeBase64url } from '@api-blocks/core'
import { ProblemError } from '@api-blocks/problem-details'
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { CursorCodecOptions, CursorQuery, FilterValue } from './cursor.ts'
import { createCursorCodec, MAX_CURSOR_LENGTH } from './cursor.ts'
import type { PaginationErrorCode } from './error.ts'
import { PaginationError } from './error.ts'
import type { CursorValue } from './keyset.ts'

const SECRET_1 = 'k1-secret-0123456789abcdef0123456789'
const SECRET_2 = 'k2-secret-fedcba9876543210fedcba9876'
const orderDesc = { keys: ['created_at', 'id'], direction: 'desc' } as const
const query: CursorQuery = { order: orderDesc, filters: { status: 'open' } }
const position = ['2026-06-01T10:00:00.000Z', 'ord_000042']

const codecWith = (options: Partial<CursorCodecOptions> = {}) =>
  createCursorCodec({ keys: [{ id: 'k1', secret: SECRET_1 }], ...options })

/** Asserts that `promise` rejects with the invalid-cursor problem and this code. */
async function rejects(promise: Promise<unknown>, code: PaginationErrorCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(PaginationError)
  expect(error).toBeInstanceOf(ProblemError)
  expect((error as PaginationError).code).toBe(code)
  expect((error as PaginationError).toProblem()).toMatchObject({
    type: 'invalid-cursor',
    status: 400,
  })
}

describe('cursor format', () => {
  test('round trip: decode gives back the encoded position', async () => {
    const cursors = codecWith().forQuery(query)
    expect(await cursors.decode(await cursors.encode(position))).toEqual(position)
  })

  test('is versioned, carries the key id and is URL-safe without percent-encoding', async () => {
    const cursor = await codecWith().forQuery(query).encode(position)
    expect(cursor).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(encodeURIComponent(cursor)).toBe(cursor)
  })

  test('cursorOf encodes the position of an item', async () => {
    const cursors = codecWith().forQuery(query)
    const item = { id: 'ord_000042', created_at: new Date('2026-06-01T10:00:00Z'), total: 3 }
    expect(await cursors.decode(await cursors.cursorOf(item))).toEqual(position)
  })

  test('-0 is written as 0', async () => {
    const cursors = codecWith().forQuery({ order: { keys: ['n', 'id'], direction: 'asc' } })
    const [value] = await cursors.decode(await cursors.encode([-0, 'a']))
    expect(Object.is(value, 0)).toBe(true)
  })

  test('encode refuses a position that does not fit the order (a server bug)', async () => {
    const cursors = codecWith().forQuery(query)
    await expect(cursors.encode(['only one'])).rejects.toThrow(TypeError)
    await expect(cursors.encode([Number.NaN, 'a'])).rejects.toThrow(TypeError)
    await expect(cursors.encode([null as never, 'a'])).rejects.toThrow(TypeError)
  })

  test('cursorOf rejects (never throws synchronously) for an item without the sort keys', async () => {
    const cursors = codecWith().forQuery(query)
    const result = cursors.cursorOf({ id: 'x' })
    expect(result).toBeInstanceOf(Promise)
    await expect(result).rejects.toThrow(TypeError)
  })

  test('a fractional clock still gives a whole-millisecond expiry that decodes', async () => {
    const cursors = codecWith({ ttlMs: 1000, clock: () => 1_000.75 }).forQuery(query)
    expect(await cursors.decode(await cursors.encode(position))).toEqual(position)
  })

  test('encode refuses to issue a cursor longer than maxLength', async () => {
    const cursors = codecWith({ maxLength: 200 }).forQuery(query)
    await expect(cursors.encode(['x'.repeat(200), 'a'])).rejects.toThrow(RangeError)
  })

  test('a single percent-encoding is undone by the query parser before the codec sees it', async () => {
    const cursors = codecWith().forQuery(query)
    const cursor = await cursors.encode(position)
    const once = new URLSearchParams(`after=${cursor.replaceAll('.', '%2E')}`).get('after')
    expect(await cursors.decode(once!)).toEqual(position)
  })
})

describe('key ring', () => {
  test('the newest key signs; every listed key verifies (rotation)', async () => {
    const before = codecWith().forQuery(query)
    const rotated = createCursorCodec({
      keys: [
        { id: 'k2', secret: SECRET_2 },
        { id: 'k1', secret: SECRET_1 },
      ],
    }).forQuery(query)
    const old = await before.encode(position)
    expect(await rotated.decode(old)).toEqual(position)
    const fresh = await rotated.encode(position)
    expect(fresh.startsWith('v1.k2.')).toBe(true)
    expect(await rotated.decode(fresh)).toEqual(position)
  })

  test('a retired key no longer verifies: CURSOR_UNKNOWN_KEY', async () => {
    const old = await codecWith().forQuery(query).encode(position)
    const retired = createCursorCodec({ keys: [{ id: 'k2', secret: SECRET_2 }] }).forQuery(query)
    await rejects(retired.decode(old), 'CURSOR_UNKNOWN_KEY')
  })

  test('a foreign cursor (same key id, other secret) fails: CURSOR_SIGNATURE', async () => {
    const foreign = await createCursorCodec({ keys: [{ id: 'k1', secret: SECRET_2 }] })
      .forQuery(query)
      .encode(position)
    await rejects(codecWith().forQuery(query).decode(foreign), 'CURSOR_SIGNATURE')
  })

  test('a cursor relabelled with another listed key id fails: CURSOR_SIGNATURE', async () => {
    const ring = createCursorCodec({
      keys: [
        { id: 'k1', secret: SECRET_1 },
        { id: 'k2', secret: SECRET_2 },
      ],
    }).forQuery(query)
    const cursor = await ring.encode(position)
    await rejects(ring.decode(cursor.replace('v1.k1.', 'v1.k2.')), 'CURSOR_SIGNATURE')
  })

  test('raw bytes and strings of at least 32 bytes are accepted', () => {
    expect(() => codecWith({ keys: [{ id: 'a', secret: new Uint8Array(32) }] })).not.toThrow()
    expect(() => codecWith({ keys: [{ id: 'a', secret: 'x'.repeat(32) }] })).not.toThrow()
    // 16 two-byte characters: 32 UTF-8 bytes.
    expect(() => codecWith({ keys: [{ id: 'a', secret: 'é'.repeat(16) }] })).not.toThrow()
  })

  test('a secret shorter than 32 bytes is refused at configuration time', () => {
    expect(() => codecWith({ keys: [{ id: 'a', secret: new Uint8Array(31) }] })).toThrow(RangeError)
    expect(() => codecWith({ keys: [{ id: 'a', secret: 'x'.repeat(31) }] })).toThrow(RangeError)
    expect(() => codecWith({ keys: [{ id: 'a', secret: 42 as never }] })).toThrow(TypeError)
  })

  test('an empty ring, a duplicate id or an id outside the cursor alphabet is refused', () => {
    expect(() => codecWith({ keys: [] })).toThrow(TypeError)
    const dup = { id: 'a', secret: SECRET_1 }
    expect(() => codecWith({ keys: [dup, dup] })).toThrow(/twice/)
    for (const id of ['', 'a.b', 'a b', 'x'.repeat(33), 'ü']) {
      expect(() => codecWith({ keys: [{ id, secret: SECRET_1 }] })).toThrow(TypeError)
    }
  })

  test('the secret bytes are copied: changing the caller’s array later changes nothing', async () => {
    const bytes = new Uint8Array(32).fill(7)
    const codec = createCursorCodec({ keys: [{ id: 'a', secret: bytes }] }).forQuery(query)
    const first = await codec.encode(position)
    bytes.fill(8)
    expect(await codec.encode(position)).toBe(first)
  })

  test('options that cannot work are refused', () => {
    expect(() => codecWith({ ttlMs: 0 })).toThrow(RangeError)
    expect(() => codecWith({ ttlMs: 1.5 })).toThrow(RangeError)
    expect(() => codecWith({ maxLength: 64 })).toThrow(RangeError)
  })
})

describe('rejections: each gives the invalid-cursor problem (400), never a first page', () => {
  const cursors = codecWith().forQuery(query)
  const valid = cursors.encode(position)

  test('tampered payload: CURSOR_SIGNATURE', async () => {
    const cursor = await valid
    const [v, kid, payload, mac] = cursor.split('.') as [string, string, string, string]
    const json = JSON.parse(
      new TextDecoder().decode(
        Uint8Array.from(atob(payload.replaceAll('-', '+').replaceAll('_', '/')), (c) =>
          c.charCodeAt(0),
        ),
      ),
    )
    json.p = ['2099-01-01T00:00:00.000Z', 'ord_999999']
    const forged = btoa(JSON.stringify(json))
      .replaceAll('+', '-')
      .replaceAll('/', '_')
      .replaceAll('=', '')
    await rejects(cursors.decode([v, kid, forged, mac].join('.')), 'CURSOR_SIGNATURE')
  })

  test('tampered signature: CURSOR_SIGNATURE', async () => {
    const cursor = await valid
    const flipped = cursor.at(-2) === 'A' ? 'B' : 'A'
    await rejects(cursors.decode(cursor.slice(0, -2) + flipped + cursor.at(-1)), 'CURSOR_SIGNATURE')
  })

  test('truncated: CURSOR_MALFORMED', async () => {
    const cursor = await valid
    await rejects(cursors.decode(cursor.slice(0, -1)), 'CURSOR_MALFORMED')
    await rejects(cursors.decode(cursor.slice(0, cursor.lastIndexOf('.'))), 'CURSOR_MALFORMED')
    await rejects(cursors.decode(cursor.slice(0, 20)), 'CURSOR_MALFORMED')
  })

  test('payload truncated by one character: rejected', async () => {
    const cursor = await valid
    const [v, kid, payload, mac] = cursor.split('.') as [string, string, string, string]
    const error = await cursors
      .decode([v, kid, payload.slice(0, -1), mac].join('.'))
      .catch((e) => e)
    expect(error).toBeInstanceOf(PaginationError)
  })

  test('re-encoded as standard base64 with padding: CURSOR_MALFORMED', async () => {
    const cursor = await valid
    const [v, kid, payload, mac] = cursor.split('.') as [string, string, string, string]
    const standard = (text: string) =>
      text.replaceAll('-', '+').replaceAll('_', '/') + '='.repeat((4 - (text.length % 4)) % 4)
    await rejects(
      cursors.decode([v, kid, standard(payload), standard(mac)].join('.')),
      'CURSOR_MALFORMED',
    )
    await rejects(cursors.decode(`${cursor}=`), 'CURSOR_MALFORMED')
  })

  test('percent-encoded twice: CURSOR_MALFORMED', async () => {
    const cursor = await valid
    const twice = new URLSearchParams(`after=${cursor.replaceAll('.', '%252E')}`).get('after')!
    expect(twice).toContain('%2E')
    await rejects(cursors.decode(twice), 'CURSOR_MALFORMED')
  })

  test('a second base64url spelling of the same signature: CURSOR_MALFORMED', async () => {
    const cursor = await valid
    // 32 bytes take 43 characters; the last one carries 4 bits, so its 2 low bits must be 0.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const last = alphabet.indexOf(cursor.at(-1)!)
    await rejects(cursors.decode(cursor.slice(0, -1) + alphabet[last ^ 1]), 'CURSOR_MALFORMED')
  })

  test('longer than the maximum: CURSOR_TOO_LONG, before any decoding', async () => {
    await rejects(cursors.decode('v'.repeat(MAX_CURSOR_LENGTH + 1)), 'CURSOR_TOO_LONG')
    await rejects(cursors.decode('v'.repeat(MAX_CURSOR_LENGTH)), 'CURSOR_MALFORMED')
    const cursor = await valid
    await rejects(
      codecWith({ maxLength: cursor.length - 1 })
        .forQuery(query)
        .decode(cursor),
      'CURSOR_TOO_LONG',
    )
  })

  test('another format version: CURSOR_VERSION', async () => {
    const cursor = await valid
    await rejects(cursors.decode(cursor.replace(/^v1\./, 'v2.')), 'CURSOR_VERSION')
  })

  test('empty, non-string and garbage input: CURSOR_MALFORMED', async () => {
    for (const input of ['', '.', 'v1...', 'null', '{"p":[1]}', 42, null, undefined, {}]) {
      await rejects(cursors.decode(input as string), 'CURSOR_MALFORMED')
    }
  })

  test('expired, by the injected clock: CURSOR_EXPIRED', async () => {
    let now = 1_000_000
    const expiring = codecWith({ ttlMs: 60_000, clock: () => now }).forQuery(query)
    const cursor = await expiring.encode(position)
    now += 59_999
    expect(await expiring.decode(cursor)).toEqual(position)
    now += 1
    await rejects(expiring.decode(cursor), 'CURSOR_EXPIRED')
  })

  test('an expiry binds even a codec configured without ttlMs', async () => {
    let now = 0
    const cursor = await codecWith({ ttlMs: 1000, clock: () => now })
      .forQuery(query)
      .encode(position)
    now = 5000
    await rejects(
      codecWith({ clock: () => now })
        .forQuery(query)
        .decode(cursor),
      'CURSOR_EXPIRED',
    )
  })

  test('without ttlMs a cursor does not expire', async () => {
    let now = 0
    const forever = codecWith({ clock: () => now }).forQuery(query)
    const cursor = await forever.encode(position)
    now = 8.64e15
    expect(await forever.decode(cursor)).toEqual(position)
  })

  test('issued for the other direction: CURSOR_SORT_MISMATCH', async () => {
    const other = codecWith().forQuery({ ...query, order: { ...orderDesc, direction: 'asc' } })
    await rejects(other.decode(await valid), 'CURSOR_SORT_MISMATCH')
  })

  test('issued for other sort keys: CURSOR_SORT_MISMATCH', async () => {
    const other = codecWith().forQuery({
      ...query,
      order: { keys: ['total', 'id'], direction: 'desc' },
    })
    await rejects(other.decode(await valid), 'CURSOR_SORT_MISMATCH')
    const longer = codecWith().forQuery({
      ...query,
      order: { keys: ['created_at', 'total', 'id'], direction: 'desc' },
    })
    await rejects(longer.decode(await valid), 'CURSOR_SORT_MISMATCH')
  })

  test('issued for other filters: CURSOR_QUERY_MISMATCH', async () => {
    for (const filters of [
      { status: 'shipped' },
      {},
      undefined,
      { status: 'open', customer: 'c1' },
    ]) {
      await rejects(
        codecWith()
          .forQuery({ ...query, filters })
          .decode(await valid),
        'CURSOR_QUERY_MISMATCH',
      )
    }
  })

  test('filters are compared canonically: member order and undefined members do not matter', async () => {
    const cursor = await codecWith()
      .forQuery({ order: orderDesc, filters: { status: 'open', customer: 'c1' } })
      .encode(position)
    const same = codecWith().forQuery({
      order: orderDesc,
      filters: { customer: 'c1', q: undefined, status: 'open' },
    })
    expect(await same.decode(cursor)).toEqual(position)
  })
})

describe('properties', () => {
  const value = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 24 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.boolean(),
  )

  test('round trip for arbitrary positions', async () => {
    const codec = codecWith({ maxLength: 8192 })
    await fc.assert(
      fc.asyncProperty(
        fc.array(value, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('asc', 'desc'),
        fc.jsonValue({ maxDepth: 2 }),
        async (values, direction, filters) => {
          const keys = values.map((_, i) => `k${i}`)
          const cursors = codec.forQuery({ order: { keys, direction }, filters: filters as never })
          const decoded = await cursors.decode(await cursors.encode(values))
          expect(decoded).toEqual(values.map((v: CursorValue) => (v === 0 ? 0 : v)))
        },
      ),
      { interruptAfterTimeLimit: 3000 },
    )
  })

  test('decoding any string rejects with the invalid-cursor error and nothing else', async () => {
    const cursors = codecWith().forQuery(query)
    const cursor = await cursors.encode(position)
    const input = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 1100 }),
      fc.string({ unit: fc.constantFrom(...'v1.k-_Aa0%='), maxLength: 200 }),
      fc.string({ maxLength: 60 }).map((tail) => `v1.k1.${tail}`),
      // A valid cursor with one character replaced, inserted or deleted.
      fc
        .tuple(fc.nat(cursor.length), fc.string({ minLength: 0, maxLength: 1 }), fc.boolean())
        .map(([at, text, drop]) => cursor.slice(0, at) + text + cursor.slice(at + (drop ? 1 : 0))),
    )
    await fc.assert(
      fc.asyncProperty(input, async (text) => {
        if (text === cursor) return
        const error = await cursors.decode(text).then(
          () => 'decoded',
          (caught: unknown) => caught,
        )
        expect(error).toBeInstanceOf(PaginationError)
        expect((error as PaginationError).toProblem()).toMatchObject({
          type: 'invalid-cursor',
          status: 400,
        })
      }),
      { interruptAfterTimeLimit: 3000 },
    )
  })
})

// Cursors issued with key k1 (SECRET_1), order (created_at, id) desc, no expiry, for `position`,
// by the release before filters and HMAC went through @api-blocks/core. Encoding is
// deterministic, so the same inputs MUST give the very same string, and each MUST still decode.
const PINNED: { name: string; filters: FilterValue; q: string; cursor: string }[] = [
  {
    name: 'no filters',
    filters: undefined,
    q: 'RFUAA2TPwAF6W44tuv1kvQ',
    cursor:
      'v1.k1.eyJwIjpbIjIwMjYtMDYtMDFUMTA6MDA6MDAuMDAwWiIsIm9yZF8wMDAwNDIiXSwiZCI6ImRlc2MiLCJzIjoiby1iclRRSVBUeEEiLCJxIjoiUkZVQUEyVFB3QUY2VzQ0dHV2MWt2USJ9.Pg5HexTA34x6qJFwBV_xR1-TDeYDce8imcVqFXAgz6s',
  },
  {
    name: '{ status: "open" }',
    filters: { status: 'open' },
    q: '1lS6U9LPaDwMDlu5a9ZphA',
    cursor:
      'v1.k1.eyJwIjpbIjIwMjYtMDYtMDFUMTA6MDA6MDAuMDAwWiIsIm9yZF8wMDAwNDIiXSwiZCI6ImRlc2MiLCJzIjoiby1iclRRSVBUeEEiLCJxIjoiMWxTNlU5TFBhRHdNRGx1NWE5WnBoQSJ9.5AW7EGTFMsiJV1lGYQWno5s52cwjtT81KeXUF2PWzT8',
  },
  {
    name: 'undefined, NaN, ±Infinity, -0 and integer-like names',
    filters: {
      b: [1, 'x', true, null, undefined, Number.NaN, -0, 1.5e300],
      a: { z: Number.POSITIVE_INFINITY, y: undefined, x: Number.NEGATIVE_INFINITY },
      10: 1,
      2: 'é😀',
    },
    q: 'N7LHwXLfr8vW4KcLIIsqkg',
    cursor:
      'v1.k1.eyJwIjpbIjIwMjYtMDYtMDFUMTA6MDA6MDAuMDAwWiIsIm9yZF8wMDAwNDIiXSwiZCI6ImRlc2MiLCJzIjoiby1iclRRSVBUeEEiLCJxIjoiTjdMSHdYTGZyOHZXNEtjTElJc3FrZyJ9.6EJlEv43Hh3FpiqI9o-n80pwrQa-zBcHiFTX2MEBTT0',
  },
]

describe('cursors issued by the previous release stay valid (pinned)', () => {
  const payloadOf = (cursor: string) =>
    JSON.parse(new TextDecoder().decode(decodeBase64url(cursor.split('.')[2]!))) as {
      s: string
      q: string
    }

  for (const { name, filters, q, cursor } of PINNED) {
    test(`MUST decode and re-issue the pinned cursor for ${name}`, async () => {
      const cursors = codecWith().forQuery({ order: orderDesc, filters })
      expect(await cursors.decode(cursor)).toEqual(position)
      expect(await cursors.encode(position)).toBe(cursor)
      expect(payloadOf(cursor)).toMatchObject({ s: 'o-brTQIPTxA', q })
    })
  }

  test('null filters hash as no filters; an undefined member as its absence', async () => {
    const [none, open] = PINNED as [(typeof PINNED)[0], (typeof PINNED)[1]]
    const withNull = codecWith().forQuery({ order: orderDesc, filters: null })
    expect(await withNull.decode(none.cursor)).toEqual(position)
    const withUndefined = codecWith().forQuery({
      order: orderDesc,
      filters: { q: undefined, status: 'open' },
    })
    expect(await withUndefined.decode(open.cursor)).toEqual(position)
  })

  test('the pinned cursor fails for other filters and under another secret', async () => {
    const [, open] = PINNED as [(typeof PINNED)[0], (typeof PINNED)[1]]
    const closed = codecWith().forQuery({ order: orderDesc, filters: { status: 'closed' } })
    await rejects(closed.decode(open.cursor), 'CURSOR_QUERY_MISMATCH')
    const foreign = createCursorCodec({ keys: [{ id: 'k1', secret: SECRET_2 }] }).forQuery({
      order: orderDesc,
      filters: { status: 'open' },
    })
    await rejects(foreign.decode(open.cursor), 'CURSOR_SIGNATURE')
  })
})
