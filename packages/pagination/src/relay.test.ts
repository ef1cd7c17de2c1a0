import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { QueryCursorCodec } from './cursor.ts'
import { createCursorCodec } from './cursor.ts'
import { PaginationError } from './error.ts'
import type { KeysetOrder } from './keyset.ts'
import { seekArray } from './keyset.ts'
import type { ConnectionArgs } from './relay.ts'
import { parseConnectionArgs, toConnection } from './relay.ts'

// Tests name the rules of the GraphQL Cursor Connections Specification,
// https://relay.dev/graphql/connections.htm (Pagination algorithm, PageInfo).

interface Node {
  id: string
  rank: number
}

const codec = createCursorCodec({
  keys: [{ id: 'k1', secret: 'relay-test-secret-0123456789abcdef' }],
})
const order: KeysetOrder = { keys: ['rank', 'id'], direction: 'asc' }
const cursors = codec.forQuery({ order })
const policy = { cursors, defaultLimit: 3, maxLimit: 5 }
// a..h, ranks 1..8: the list order is a, b, c, d, e, f, g, h.
const nodes: Node[] = [...'hgfedcba'].map((id) => ({ id, rank: id.charCodeAt(0) - 96 }))
const cursorOf = (id: string) => cursors.cursorOf(nodes.find((node) => node.id === id)!)

async function connection(args: ConnectionArgs, items = nodes) {
  const page = await parseConnectionArgs(args, policy)
  return toConnection(seekArray(items, page), page, cursors)
}
const idsOf = (result: { edges: { node: Node }[] }) =>
  result.edges.map((edge) => edge.node.id).join('')

describe('ApplyCursorsToEdges', () => {
  test('after: removes all edges before and including the after-edge', async () => {
    expect(idsOf(await connection({ first: 5, after: await cursorOf('c') }))).toBe('defgh')
  })

  test('before: removes all edges after and including the before-edge', async () => {
    expect(idsOf(await connection({ last: 5, before: await cursorOf('f') }))).toBe('abcde')
  })

  test('after and before together keep the edges strictly between', async () => {
    expect(
      idsOf(
        await connection({ first: 5, after: await cursorOf('b'), before: await cursorOf('f') }),
      ),
    ).toBe('cde')
    expect(
      idsOf(await connection({ last: 5, after: await cursorOf('b'), before: await cursorOf('f') })),
    ).toBe('cde')
  })

  test('deviation, documented: a cursor whose edge was deleted still bounds the page', async () => {
    // The spec applies `after` only "if afterEdge exists"; a keyset cursor is a position, so
    // the page continues after it instead of starting over at the first edge.
    const after = await cursorOf('c')
    const withoutC = nodes.filter((node) => node.id !== 'c')
    expect(idsOf(await connection({ first: 2, after }, withoutC))).toBe('de')
  })

  test('deviation, documented: after at or past before gives no edges', async () => {
    // The spec looks for the before-edge among the edges left after `after`, and ignores a
    // before it cannot find there; here both are bounds, and nothing lies between them.
    const result = await connection({
      last: 2,
      after: await cursorOf('e'),
      before: await cursorOf('c'),
    })
    expect(result.edges).toEqual([])
    expect(result.pageInfo.hasPreviousPage).toBe(false)
  })
})

describe('EdgesToReturn', () => {
  test('first: slices edges to length first by removing edges from the end', async () => {
    expect(idsOf(await connection({ first: 2 }))).toBe('ab')
  })

  test('last: slices edges to length last by removing edges from the start', async () => {
    expect(idsOf(await connection({ last: 2 }))).toBe('gh')
  })

  test('MUST throw an error when first is less than 0', async () => {
    await expect(parseConnectionArgs({ first: -1 }, policy)).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      status: 400,
    })
  })

  test('MUST throw an error when last is less than 0', async () => {
    await expect(parseConnectionArgs({ last: -1 }, policy)).rejects.toMatchObject({
      code: 'ARGUMENT_INVALID',
      status: 400,
    })
  })

  test('first or last that is not a whole number is refused', async () => {
    for (const args of [
      { first: 1.5 },
      { last: Number.NaN },
      { first: Number.POSITIVE_INFINITY },
      { first: '2' as never },
    ]) {
      await expect(parseConnectionArgs(args, policy)).rejects.toBeInstanceOf(PaginationError)
    }
  })

  test('first: 0 returns no edges; hasNextPage still tells whether edges exist', async () => {
    const result = await connection({ first: 0 })
    expect(result.edges).toEqual([])
    expect(result.pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: null,
    })
  })

  test('first and last together (strongly discouraged by the spec) → 400 FIRST_AND_LAST', async () => {
    await expect(parseConnectionArgs({ first: 2, last: 2 }, policy)).rejects.toMatchObject({
      code: 'FIRST_AND_LAST',
      problem: { type: 'bad-request' },
    })
  })

  test('neither first nor last: first is the default page size', async () => {
    expect(idsOf(await connection({}))).toBe('abc')
    expect(idsOf(await connection({ first: null, last: null }))).toBe('abc')
  })

  test('first or last above the maximum is coerced to the maximum (AIP-158)', async () => {
    expect(idsOf(await connection({ first: 1000 }))).toBe('abcde')
    expect(idsOf(await connection({ last: 1000 }))).toBe('defgh')
  })

  test('a bad after or before cursor is the invalid-cursor problem, never a first page', async () => {
    for (const args of [{ after: '' }, { before: 'nope' }, { first: 1, after: 'v1.k1.x.y' }]) {
      await expect(parseConnectionArgs(args, policy)).rejects.toMatchObject({
        problem: { type: 'invalid-cursor' },
        status: 400,
      })
    }
  })
})

describe('HasPreviousPage', () => {
  test('last set: true when the edges exceed last', async () => {
    expect(
      (await connection({ last: 2, before: await cursorOf('e') })).pageInfo.hasPreviousPage,
    ).toBe(true)
  })

  test('last set: false when they do not', async () => {
    expect(
      (await connection({ last: 4, before: await cursorOf('e') })).pageInfo.hasPreviousPage,
    ).toBe(false)
  })

  test('first/after: false, even with edges before after (the optional step is not taken)', async () => {
    const result = await connection({ first: 2, after: await cursorOf('d') })
    expect(result.pageInfo.hasPreviousPage).toBe(false)
  })
})

describe('HasNextPage', () => {
  test('first set: true when the edges exceed first', async () => {
    expect((await connection({ first: 2, after: await cursorOf('e') })).pageInfo.hasNextPage).toBe(
      true,
    )
  })

  test('first set: false when they do not', async () => {
    expect((await connection({ first: 3, after: await cursorOf('e') })).pageInfo.hasNextPage).toBe(
      false,
    )
  })

  test('last/before: false, even with edges after before (the optional step is not taken)', async () => {
    const result = await connection({ last: 2, before: await cursorOf('d') })
    expect(result.pageInfo.hasNextPage).toBe(false)
  })
})

describe('PageInfo cursors and edge cursors', () => {
  test('startCursor and endCursor are the cursors of the first and last edges', async () => {
    const result = await connection({ first: 3, after: await cursorOf('a') })
    expect(result.pageInfo.startCursor).toBe(result.edges[0]!.cursor)
    expect(result.pageInfo.endCursor).toBe(result.edges[2]!.cursor)
    expect(await cursors.decode(result.pageInfo.endCursor!)).toEqual([4, 'd'])
  })

  test('startCursor and endCursor are null when there are no edges', async () => {
    const result = await connection({ first: 3, after: await cursorOf('h') })
    expect(result.pageInfo).toEqual({
      hasNextPage: false,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: null,
    })
  })

  test('an edge cursor as after starts right after its edge; as before ends right before it', async () => {
    const page = await connection({ first: 3 })
    const middle = page.edges[1]!.cursor
    expect(idsOf(await connection({ first: 1, after: middle }))).toBe('c')
    expect(idsOf(await connection({ last: 1, before: middle }))).toBe('a')
  })

  test('a cursor from another connection query is refused', async () => {
    const other = codec.forQuery({ order, filters: { owner: 'u1' } })
    await expect(
      parseConnectionArgs({ after: await cursorOf('a') }, { ...policy, cursors: other }),
    ).rejects.toMatchObject({
      code: 'CURSOR_QUERY_MISMATCH',
    })
  })
})

// The spec's algorithms, literally, over an array whose edge cursors are the node ids; the
// optional "server can efficiently determine" steps are not taken.
function specConnection(
  all: readonly Node[],
  args: { first?: number; last?: number; after?: string; before?: string },
) {
  let edges = [...all]
  if (args.after !== undefined) {
    const index = edges.findIndex((node) => node.id === args.after)
    if (index !== -1) edges = edges.slice(index + 1)
  }
  if (args.before !== undefined) {
    const index = edges.findIndex((node) => node.id === args.before)
    if (index !== -1) edges = edges.slice(0, index)
  }
  const applied = edges
  if (args.first !== undefined && edges.length > args.first) edges = edges.slice(0, args.first)
  if (args.last !== undefined && edges.length > args.last)
    edges = edges.slice(edges.length - args.last)
  return {
    ids: edges.map((node) => node.id).join(''),
    hasPreviousPage: args.last !== undefined && applied.length > args.last,
    hasNextPage: args.first !== undefined && applied.length > args.first,
  }
}

test('agrees with the spec algorithm for random lists and arguments', async () => {
  const data = fc.uniqueArray(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 2 }),
      rank: fc.integer({ min: 0, max: 4 }),
    }),
    {
      selector: (node) => node.id,
      maxLength: 15,
    },
  )
  await fc.assert(
    fc.asyncProperty(
      data,
      fc.boolean(),
      fc.nat(6),
      fc.option(fc.nat(20), { nil: undefined }),
      fc.option(fc.nat(20), { nil: undefined }),
      async (items, forward, size, afterIndex, beforeIndex) => {
        const sorted = seekArray(items, { order, direction: 'forward', limit: items.length })
        // Cursors of existing edges, as a client would hold them.
        const pick = (index: number | undefined) =>
          index === undefined ? undefined : sorted[index % Math.max(1, sorted.length)]
        const after = pick(afterIndex)
        const before = pick(beforeIndex)
        // An after at or past before is the documented deviation, tested by name above.
        fc.pre(!after || !before || sorted.indexOf(after) < sorted.indexOf(before))
        const args: ConnectionArgs = {
          ...(forward ? { first: size } : { last: size }),
          ...(after ? { after: await cursors.cursorOf(after) } : {}),
          ...(before ? { before: await cursors.cursorOf(before) } : {}),
        }
        const page = await parseConnectionArgs(args, { cursors, defaultLimit: 3, maxLimit: 100 })
        const result = await toConnection(seekArray(items, page), page, cursors)
        const expected = specConnection(sorted, {
          ...(forward ? { first: size } : { last: size }),
          ...(after ? { after: after.id } : {}),
          ...(before ? { before: before.id } : {}),
        })
        expect({
          ids: idsOf(result),
          hasPreviousPage: result.pageInfo.hasPreviousPage,
          hasNextPage: result.pageInfo.hasNextPage,
        }).toEqual(expected)
      },
    ),
    { interruptAfterTimeLimit: 3000 },
  )
})

test('paging backward with last/before from the end visits every node once', async () => {
  const seen: string[] = []
  let before: string | null = null
  for (;;) {
    const result = await connection(before === null ? { last: 3 } : { last: 3, before })
    seen.unshift(...result.edges.map((edge) => edge.node.id))
    if (!result.pageInfo.hasPreviousPage) break
    before = result.pageInfo.startCursor
  }
  expect(seen.join('')).toBe('abcdefgh')
})

test('the same cursors page a descending order too', async () => {
  const descending: QueryCursorCodec = codec.forQuery({
    order: { keys: ['rank', 'id'], direction: 'desc' },
  })
  const page = await parseConnectionArgs({ first: 2 }, { ...policy, cursors: descending })
  const first = await toConnection(seekArray(nodes, page), page, descending)
  expect(idsOf(first)).toBe('hg')
  const next = await parseConnectionArgs(
    { first: 2, after: first.pageInfo.endCursor },
    { ...policy, cursors: descending },
  )
  expect(idsOf(await toConnection(seekArray(nodes, next), next, descending))).toBe('fe')
})
