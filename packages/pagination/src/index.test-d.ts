import { describe, expectTypeOf, test } from 'vitest'
import type {
  Connection,
  ConnectionArgs,
  CursorCodec,
  CursorPosition,
  CursorValue,
  Edge,
  KeysetOrder,
  KeysetSql,
  ListEnvelope,
  PageInfo,
  PageRequest,
  PaginationErrorCode,
  QueryCursorCodec,
} from './index.ts'
import {
  comparePositions,
  createCursorCodec,
  keysetSql,
  PaginationError,
  parseConnectionArgs,
  parseLimit,
  parseListRequest,
  positionOf,
  seekArray,
  toConnection,
  toListEnvelope,
} from './index.ts'

interface Order {
  id: string
  created_at: Date
  total: number
}
declare const orders: Order[]
declare const page: PageRequest
const order = { keys: ['created_at', 'id'], direction: 'desc' } as const
const codec = createCursorCodec({
  keys: [{ id: 'k1', secret: 'a secret of at least 32 bytes!!!' }],
})
const cursors = codec.forQuery({ order, filters: { status: 'open' } })

describe('public types of @api-blocks/pagination', () => {
  test('a codec binds cursors to one query; positions are tuples of scalars', () => {
    expectTypeOf(codec).toEqualTypeOf<CursorCodec>()
    expectTypeOf(cursors).toEqualTypeOf<QueryCursorCodec>()
    expectTypeOf(cursors.encode).parameter(0).toEqualTypeOf<CursorPosition>()
    expectTypeOf(cursors.encode(['2026-06-01T10:00:00.000Z', 'ord_1'])).toEqualTypeOf<
      Promise<string>
    >()
    expectTypeOf(cursors.decode('v1.k1.x.y')).toEqualTypeOf<Promise<CursorValue[]>>()
    expectTypeOf<CursorValue>().toEqualTypeOf<string | number | boolean>()
    // @ts-expect-error: null has no place in an order (rows with NULL keys would drop out)
    cursors.encode([null, 'ord_1'])
    // @ts-expect-error: a Date becomes a string through positionOf or cursorOf, not encode
    cursors.encode([new Date(), 'ord_1'])
    expectTypeOf(cursors.cursorOf(orders[0]!)).toEqualTypeOf<Promise<string>>()
  })

  test('filters are JSON values and undefined', () => {
    codec.forQuery({ order, filters: { status: null, tags: ['a'], owner: undefined, n: 1 } })
    codec.forQuery({ order })
    // @ts-expect-error: a Date is not a filter value; normalise it to a string first
    codec.forQuery({ order, filters: { since: new Date() } })
    // @ts-expect-error: nor is a bigint
    codec.forQuery({ order, filters: { id: 1n } })
  })

  test('an order is keys and one direction; `as const` orders fit', () => {
    expectTypeOf(order).toExtend<KeysetOrder>()
    // @ts-expect-error: one direction for the whole tuple
    codec.forQuery({ order: { keys: ['id'], direction: ['asc'] } })
    // @ts-expect-error: the direction is asc or desc
    codec.forQuery({ order: { keys: ['id'], direction: 'up' } })
  })

  test('keyset helpers keep the row type', () => {
    expectTypeOf(seekArray(orders, page)).toEqualTypeOf<Order[]>()
    // @ts-expect-error: rows are objects with the sort keys
    seekArray([1, 2, 3], page)
    expectTypeOf(positionOf(orders[0]!, order)).toEqualTypeOf<CursorValue[]>()
    expectTypeOf(comparePositions(['a', 1], ['a', 2])).toEqualTypeOf<number>()
    expectTypeOf(keysetSql(page)).toEqualTypeOf<KeysetSql>()
    expectTypeOf(keysetSql(page).params).toEqualTypeOf<CursorValue[]>()
    // @ts-expect-error: the placeholder style is dollar or question
    keysetSql(page, { placeholder: 'colon' })
  })

  test('page requests come from a query string or Relay arguments', () => {
    const params = new URLSearchParams('limit=2')
    expectTypeOf(
      parseListRequest(params, { cursors, defaultLimit: 20, maxLimit: 100 }),
    ).toEqualTypeOf<Promise<PageRequest>>()
    expectTypeOf(page.direction).toEqualTypeOf<'forward' | 'backward'>()
    expectTypeOf(page.after).toEqualTypeOf<CursorPosition | undefined>()
    expectTypeOf(
      parseLimit(params.getAll('limit'), { defaultLimit: 20, maxLimit: 100 }),
    ).toEqualTypeOf<number>()
    parseLimit(params.get('limit'), { defaultLimit: 20, maxLimit: 100 })
    // GraphQL hands nullable arguments over as they are.
    const args: ConnectionArgs = { first: null, after: null, last: 5, before: 'v1.k1.x.y' }
    expectTypeOf(
      parseConnectionArgs(args, { cursors, defaultLimit: 20, maxLimit: 100 }),
    ).toEqualTypeOf<Promise<PageRequest>>()
    // @ts-expect-error: first is a number of edges
    parseConnectionArgs({ first: '5' }, { cursors, defaultLimit: 20, maxLimit: 100 })
  })

  test('the list envelope and Relay connections carry the row type', async () => {
    const envelope = await toListEnvelope(orders, page, cursors)
    expectTypeOf(envelope).toEqualTypeOf<ListEnvelope<Order>>()
    expectTypeOf(envelope.data).toEqualTypeOf<Order[]>()
    expectTypeOf(envelope.next_cursor).toEqualTypeOf<string | null>()

    const connection = await toConnection(orders, page, cursors)
    expectTypeOf(connection).toEqualTypeOf<Connection<Order>>()
    expectTypeOf(connection.edges).toEqualTypeOf<Edge<Order>[]>()
    expectTypeOf(connection.edges[0]!.node).toEqualTypeOf<Order>()
    expectTypeOf(connection.pageInfo).toEqualTypeOf<PageInfo>()
    expectTypeOf(connection.pageInfo.endCursor).toEqualTypeOf<string | null>()
  })

  test('PaginationError carries one of its codes', () => {
    const error = new PaginationError('CURSOR_EXPIRED', 'The cursor has expired.')
    expectTypeOf(error.code).toEqualTypeOf<PaginationErrorCode>()
    expectTypeOf<
      'CURSOR_EXPIRED' | 'LIMIT_INVALID' | 'FIRST_AND_LAST'
    >().toExtend<PaginationErrorCode>()
    // @ts-expect-error: codes are UPPER_SNAKE_CASE; the snake_case reasons are gone
    new PaginationError('cursor_expired', 'x')
    // @ts-expect-error: `reason` became `code`
    void error.reason
  })
})
