import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { createCursorCodec } from './cursor.ts'
import { PaginationError } from './error.ts'
import type { KeysetOrder, PageRequest } from './keyset.ts'
import { seekArray } from './keyset.ts'
import { nextPageLink, parseListRequest, toListEnvelope } from './list.ts'

interface Order {
  id: string
  created_at: string
  status: string
}

const codec = createCursorCodec({
  keys: [{ id: 'k1', secret: 'list-test-secret-0123456789abcdef' }],
})
const order: KeysetOrder = { keys: ['created_at', 'id'], direction: 'desc' }
const policy = { defaultLimit: 2, maxLimit: 3 }
const orders: Order[] = Array.from({ length: 7 }, (_, i) => ({
  id: `ord_${i}`,
  created_at: `2026-06-0${1 + (i % 3)}T00:00:00.000Z`,
  status: i % 2 ? 'open' : 'shipped',
}))

const cursorsFor = (status: string | null) => codec.forQuery({ order, filters: { status } })

/** One GET of the list endpoint, as a service would write it. */
async function list(url: string, items = orders) {
  const parsed = new URL(url)
  const status = parsed.searchParams.get('status')
  const cursors = cursorsFor(status)
  const page = await parseListRequest(parsed.searchParams, { cursors, ...policy })
  const rows = seekArray(
    items.filter((item) => status === null || item.status === status),
    page,
  )
  const body = await toListEnvelope(rows, page, cursors)
  return { body, link: nextPageLink(parsed, body.next_cursor) }
}

describe('parseListRequest', () => {
  test('no parameters: the default limit, no cursor', async () => {
    expect(
      await parseListRequest(new URLSearchParams(), { cursors: cursorsFor(null), ...policy }),
    ).toEqual({
      order,
      direction: 'forward',
      limit: 2,
    })
  })

  test('after is verified and decoded into the position', async () => {
    const cursors = cursorsFor(null)
    const after = await cursors.encode(['2026-06-02T00:00:00.000Z', 'ord_4'])
    const page = await parseListRequest(new URLSearchParams({ after, limit: '9' }), {
      cursors,
      ...policy,
    })
    expect(page).toEqual({
      order,
      direction: 'forward',
      limit: 3,
      after: ['2026-06-02T00:00:00.000Z', 'ord_4'],
    })
  })

  test('a repeated after → 400 bad-request, PARAMETER_REPEATED', async () => {
    const cursors = cursorsFor(null)
    const after = await cursors.encode(['x', 'y'])
    const params = new URLSearchParams([
      ['after', after],
      ['after', after],
    ])
    await expect(parseListRequest(params, { cursors, ...policy })).rejects.toMatchObject({
      code: 'PARAMETER_REPEATED',
      status: 400,
    })
  })

  test('an empty after is an invalid cursor, never a first page', async () => {
    await expect(
      parseListRequest(new URLSearchParams('after='), { cursors: cursorsFor(null), ...policy }),
    ).rejects.toMatchObject({
      code: 'CURSOR_MALFORMED',
      problem: { type: 'invalid-cursor' },
    })
  })

  test('custom parameter names', async () => {
    const cursors = cursorsFor(null)
    const after = await cursors.encode(['x', 'y'])
    const page = await parseListRequest(
      new URLSearchParams({ page_size: '1', page_token: after }),
      {
        cursors,
        ...policy,
        limitParam: 'page_size',
        afterParam: 'page_token',
      },
    )
    expect(page).toMatchObject({ limit: 1, after: ['x', 'y'] })
  })
})

describe('toListEnvelope (docs/spec.md §2.3)', () => {
  const cursors = cursorsFor(null)
  const request: PageRequest = { order, direction: 'forward', limit: 2 }

  test('has_more === (next_cursor !== null) for every fetch size', async () => {
    for (let fetched = 0; fetched <= 3; fetched++) {
      const body = await toListEnvelope(orders.slice(0, fetched), request, cursors)
      expect(body.has_more).toBe(body.next_cursor !== null)
      expect(body.has_more).toBe(fetched === 3)
      expect(body.data).toEqual(orders.slice(0, Math.min(fetched, 2)))
    }
  })

  test('the last page has next_cursor null (present, not omitted)', async () => {
    const body = await toListEnvelope(orders.slice(0, 1), request, cursors)
    expect(body).toEqual({ data: [orders[0]], has_more: false, next_cursor: null })
    expect(JSON.parse(JSON.stringify(body))).toHaveProperty('next_cursor', null)
  })

  test('next_cursor is the position of the last item of the page', async () => {
    const body = await toListEnvelope(orders.slice(0, 3), request, cursors)
    expect(await cursors.decode(body.next_cursor!)).toEqual([orders[1]!.created_at, orders[1]!.id])
  })

  test('a backward request or a limit below 1 is a TypeError (a server bug)', async () => {
    await expect(
      toListEnvelope([], { ...request, direction: 'backward' }, cursors),
    ).rejects.toThrow(TypeError)
    await expect(toListEnvelope([], { ...request, limit: 0 }, cursors)).rejects.toThrow(TypeError)
  })
})

describe('paging through a list', () => {
  test('walking next links visits every item once, in order, filters kept', async () => {
    const seen: Order[] = []
    let url: string | null = 'https://api.example.com/v1/orders?status=open'
    while (url !== null) {
      const { body, link } = await list(url)
      seen.push(...body.data)
      url = link === null ? null : /^<(.+)>; rel="next"$/.exec(link)![1]!
      if (url !== null) expect(new URL(url).searchParams.get('status')).toBe('open')
    }
    const expected = orders
      .filter((o) => o.status === 'open')
      .sort((a, b) =>
        a.created_at === b.created_at
          ? a.id < b.id
            ? 1
            : -1
          : a.created_at < b.created_at
            ? 1
            : -1,
      )
    expect(seen).toEqual(expected)
  })

  test('a next_cursor replayed with other filters → 400 invalid-cursor', async () => {
    const { body } = await list('https://api.example.com/v1/orders?status=open&limit=1')
    await expect(
      list(`https://api.example.com/v1/orders?status=shipped&after=${body.next_cursor}`),
    ).rejects.toMatchObject({ code: 'CURSOR_QUERY_MISMATCH', status: 400 })
  })

  test('the item a cursor points at may be deleted: the next page continues after it', async () => {
    const { body } = await list('https://api.example.com/v1/orders?limit=2')
    const last = body.data.at(-1)!
    const remaining = orders.filter((o) => o.id !== last.id)
    const next = await list(
      `https://api.example.com/v1/orders?limit=2&after=${body.next_cursor}`,
      remaining,
    )
    const whole = await list('https://api.example.com/v1/orders?limit=3', remaining)
    expect(next.body.data).toEqual(whole.body.data.slice(1, 3))
  })

  test('for random data and page sizes, the pages concatenate to the sorted list', async () => {
    const data = fc.uniqueArray(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 3 }),
        created_at: fc.constantFrom('2026-01-01', '2026-01-02', '2026-01-03'),
        status: fc.constantFrom('open', 'shipped'),
      }),
      { selector: (row) => row.id, maxLength: 20 },
    )
    await fc.assert(
      fc.asyncProperty(data, fc.integer({ min: 1, max: 4 }), async (items, limit) => {
        const all = seekArray(items, { order, direction: 'forward', limit: items.length })
        const seen: Order[] = []
        let url: string | null = `https://api.example.com/v1/orders?limit=${limit}`
        for (let pages = 0; url !== null; pages++) {
          expect(pages).toBeLessThanOrEqual(items.length)
          const { body, link } = await list(url, items)
          expect(body.has_more).toBe(body.next_cursor !== null)
          expect(body.data.length).toBe(body.has_more ? Math.min(limit, 3) : body.data.length)
          seen.push(...body.data)
          url = link === null ? null : /^<(.+)>; rel="next"$/.exec(link)![1]!
        }
        expect(seen).toEqual(all)
      }),
      { interruptAfterTimeLimit: 3000 },
    )
  })
})

describe('nextPageLink (RFC 8288)', () => {
  test('null on the last page', () => {
    expect(nextPageLink('https://api.example.com/v1/orders', null)).toBeNull()
  })

  test('sets after, keeping the other parameters byte for byte and in order', () => {
    expect(
      nextPageLink('https://api.example.com/v1/orders?q=a+b%20c&status=open&limit=2', 'v1.k1.p.s'),
    ).toBe(
      '<https://api.example.com/v1/orders?q=a+b%20c&status=open&limit=2&after=v1.k1.p.s>; rel="next"',
    )
  })

  test('replaces an existing after, however it was spelled, and drops a fragment', () => {
    expect(nextPageLink('https://x.test/o?after=old&%61fter=old2&a=1#frag', 'new')).toBe(
      '<https://x.test/o?a=1&after=new>; rel="next"',
    )
  })

  test('a custom parameter name, and a URL object', () => {
    expect(nextPageLink(new URL('https://x.test/o'), 'c', { param: 'page_token' })).toBe(
      '<https://x.test/o?page_token=c>; rel="next"',
    )
  })

  test('for any query string, the link URL has the cursor and every other parameter', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })), {
          maxLength: 5,
        }),
        fc.stringMatching(/^[A-Za-z0-9_.-]{1,40}$/),
        (pairs, cursor) => {
          const original = new URL('https://x.test/o')
          for (const [name, value] of pairs) original.searchParams.append(name, value)
          const link = nextPageLink(original, cursor)!
          expect(link).toMatch(/^<[^<>\s]+>; rel="next"$/)
          const target = new URL(link.slice(1, link.indexOf('>')))
          expect(target.searchParams.getAll('after')).toEqual([cursor])
          const others = (params: URLSearchParams) =>
            [...params].filter(([name]) => name !== 'after')
          expect(others(target.searchParams)).toEqual(others(original.searchParams))
        },
      ),
      { interruptAfterTimeLimit: 2000 },
    )
  })
})

test('parseListRequest rejects with a 400 PaginationError and nothing else, for any query', async () => {
  const cursors = cursorsFor(null)
  const valid = await cursors.encode(['2026-06-01T00:00:00.000Z', 'ord_1'])
  const value = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constant(valid),
    fc.nat(5).map((cut) => valid.slice(0, valid.length - cut)),
    fc.integer({ min: -5, max: 500 }).map(String),
  )
  const pair = fc.tuple(fc.constantFrom('limit', 'after', 'status', 'Limit', 'after '), value)
  await fc.assert(
    fc.asyncProperty(fc.array(pair, { maxLength: 4 }), async (pairs) => {
      const params = new URLSearchParams(pairs)
      const outcome = await parseListRequest(params, { cursors, ...policy }).then(
        (page): PageRequest | Error => page,
        (error: Error) => error,
      )
      if (outcome instanceof Error) {
        expect(outcome).toBeInstanceOf(PaginationError)
        expect((outcome as PaginationError).status).toBe(400)
      } else {
        expect(outcome.limit).toBeGreaterThanOrEqual(1)
        expect(outcome.limit).toBeLessThanOrEqual(policy.maxLimit)
      }
    }),
    { interruptAfterTimeLimit: 2000 },
  )
})
