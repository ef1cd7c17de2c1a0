import type { ConnectionArgs } from '@api-blocks/pagination'
import {
  createCursorCodec,
  parseListRequest,
  seekArray,
  toListEnvelope,
} from '@api-blocks/pagination'
import { buildSchema, graphql } from 'graphql'
import { describe, expect, test } from 'vitest'
import { connectionTypeDefs, pageInfoTypeDefs, resolveConnection } from '../src/index.ts'

// GraphQL Cursor Connections Specification, https://relay.dev/graphql/connections.htm, over
// the signed keyset cursors of @api-blocks/pagination.

interface Order {
  id: string
  rank: number
}

const orders: Order[] = [...'abcdefgh'].map((id, index) => ({ id, rank: index + 1 }))
const codec = createCursorCodec({
  keys: [{ id: 'k1', secret: 'schema-relay-secret-0123456789abcdef' }],
})
const order = { keys: ['rank', 'id'], direction: 'asc' } as const
const cursors = codec.forQuery({ order })
const policy = { cursors, defaultLimit: 3, maxLimit: 5 }

const schema = buildSchema(`${pageInfoTypeDefs}${connectionTypeDefs('Order')}
  type Order { id: ID! rank: Int! }
  type Query { orders(first: Int, after: String, last: Int, before: String): OrderConnection }
`)
const rootValue = {
  orders: (args: ConnectionArgs) =>
    resolveConnection(args, policy, async (page) => seekArray(orders, page)),
}

async function run(query: string, variableValues?: Record<string, unknown>) {
  return graphql({
    schema,
    source: query,
    rootValue,
    ...(variableValues ? { variableValues } : {}),
  })
}

const PAGE = `query Page($first: Int, $after: String, $last: Int, $before: String) {
  orders(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

interface PageResult {
  orders: {
    edges: { cursor: string; node: { id: string } }[]
    pageInfo: {
      hasNextPage: boolean
      hasPreviousPage: boolean
      startCursor: string | null
      endCursor: string | null
    }
  }
}
const ids = (data: unknown) =>
  (data as PageResult).orders.edges.map((edge) => edge.node.id).join('')

describe('resolveConnection', () => {
  test('pages forward with first/after until hasNextPage is false', async () => {
    let after: string | null = null
    const seen: string[] = []
    for (let pages = 0; pages < 10; pages++) {
      const result = await run(PAGE, { first: 3, after })
      expect(result.errors).toBeUndefined()
      const { orders: page } = result.data as unknown as PageResult
      seen.push(ids(result.data))
      expect(page.pageInfo.startCursor).toBe(page.edges[0]?.cursor ?? null)
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor ?? null)
      if (!page.pageInfo.hasNextPage) break
      after = page.pageInfo.endCursor
    }
    expect(seen).toEqual(['abc', 'def', 'gh'])
  })

  test('pages backward with last/before, edges in list order', async () => {
    const before = await cursors.cursorOf(orders[5]!)
    const result = await run(PAGE, { last: 2, before })
    expect(ids(result.data)).toBe('de')
    expect((result.data as unknown as PageResult).orders.pageInfo).toMatchObject({
      hasPreviousPage: true,
      hasNextPage: false,
    })
  })

  test('neither first nor last: defaultLimit; above maxLimit: coerced to it', async () => {
    expect(ids((await run(PAGE)).data)).toBe('abc')
    expect(ids((await run(PAGE, { first: 50 })).data)).toBe('abcde')
  })

  test('a cursor of the REST list endpoint is valid as after (same signed cursors)', async () => {
    const page = await parseListRequest(new URLSearchParams('limit=2'), policy)
    const envelope = await toListEnvelope(seekArray(orders, page), page, cursors)
    const result = await run(PAGE, { first: 2, after: envelope.next_cursor })
    expect(ids(result.data)).toBe('cd')
  })

  const rejected: [string, () => Promise<Record<string, unknown>>, string][] = [
    [
      'a tampered cursor',
      async () => {
        const cursor = await cursors.cursorOf(orders[1]!)
        // The signature's first character (its last one carries padding bits).
        const at = cursor.lastIndexOf('.') + 1
        const swapped = cursor[at] === 'A' ? 'B' : 'A'
        return { first: 2, after: `${cursor.slice(0, at)}${swapped}${cursor.slice(at + 1)}` }
      },
      'CURSOR_SIGNATURE',
    ],
    ['garbage as a cursor', async () => ({ first: 2, after: 'garbage' }), 'CURSOR_MALFORMED'],
    [
      'a cursor of another query',
      async () => ({
        first: 2,
        after: await codec.forQuery({ order, filters: { status: 'open' } }).cursorOf(orders[1]!),
      }),
      'CURSOR_QUERY_MISMATCH',
    ],
    ['first and last together', async () => ({ first: 1, last: 1 }), 'FIRST_AND_LAST'],
    ['a negative first', async () => ({ first: -1 }), 'ARGUMENT_INVALID'],
    ['a negative last', async () => ({ last: -3 }), 'ARGUMENT_INVALID'],
  ]
  for (const [name, args, reason] of rejected) {
    test(`MUST refuse ${name}: BAD_USER_INPUT with reason ${reason} at the field`, async () => {
      const result = await run(PAGE, await args())
      expect(result.data).toEqual({ orders: null })
      expect(result.errors).toHaveLength(1)
      const [error] = result.errors!
      expect(error!.path).toEqual(['orders'])
      expect(error!.extensions).toEqual({ code: 'BAD_USER_INPUT', reason })
      expect(error!.originalError?.constructor.name).toBe('GraphQLError')
    })
  }

  test('an error of fetch passes through unchanged', async () => {
    const failure = new Error('database down')
    await expect(
      resolveConnection({ first: 1 }, policy, async () => {
        throw failure
      }),
    ).rejects.toBe(failure)
  })
})

describe('connectionTypeDefs', () => {
  test('builds a valid schema whose connection type ends in Connection', () => {
    const built = buildSchema(`${pageInfoTypeDefs}${connectionTypeDefs('Thing')}
      type Thing { id: ID! } type Query { things: ThingConnection! }`)
    expect(Object.keys(built.getTypeMap())).toEqual(
      expect.arrayContaining(['ThingConnection', 'ThingEdge', 'PageInfo']),
    )
  })

  test('refuses a name that is not a GraphQL name', () => {
    expect(() => connectionTypeDefs('Bad Name { x: Int }')).toThrow(TypeError)
  })
})
