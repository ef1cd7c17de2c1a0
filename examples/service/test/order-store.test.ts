// One contract, two stores: MemoryOrderStore and PostgresOrderStore (on the server of
// DATABASE_URL) answer the same operations the same way; and the PostgreSQL list is one index
// range scan, never a scan of the table.
import type { PageRequest } from '@api-blocks/pagination'
import { positionOf } from '@api-blocks/pagination'
import pg from 'pg'
import { afterAll, describe, expect, test } from 'vitest'
import { createIdGenerator } from '../src/orders/id.ts'
import { migrateOrders, PostgresOrderStore } from '../src/orders/postgres-store.ts'
import type { Order } from '../src/orders/schema.ts'
import type { OrderStore } from '../src/orders/store.ts'
import { LIST_ORDER, MemoryOrderStore } from '../src/orders/store.ts'

const databaseUrl = process.env['DATABASE_URL'] || undefined
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)
const input = (customer: string) => ({ customer, items: [{ sku: 'BOOK-042', quantity: 2 }] })
const page = (limit: number, after?: Order): PageRequest => ({
  order: LIST_ORDER,
  direction: 'forward',
  limit,
  ...(after ? { after: positionOf(after, LIST_ORDER) } : {}),
})
const created = (store: OrderStore, customer: string) =>
  store.create(input(customer), async (order) => order)

// A time the store wrote: the memory store's from the clock it is given, the PostgreSQL store's
// from the database's clock (the one every instance shares), millisecond ISO text either way.
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

function contract(
  title: string,
  open: (clock: () => number) => Promise<OrderStore>,
  times: 'from the clock' | 'from the database',
) {
  const at = (ms: number) =>
    times === 'from the clock' ? new Date(ms).toISOString() : expect.stringMatching(ISO_MS)
  describe(title, () => {
    test('create, get, and pages in (created_at, id) order with the status filter', async () => {
      let now = T0
      const store = await open(() => now)
      const orders: Order[] = []
      for (let i = 0; i < 7; i += 1) {
        if (i % 3 === 0) now += 1 // some share a millisecond
        orders.push(await created(store, `c${i}`))
      }
      expect(orders[0]).toMatchObject({
        status: 'open',
        version: 1,
        note: null,
        created_at: at(T0 + 1),
      })
      expect(await store.get(orders[3]!.id)).toEqual(orders[3])
      expect(await store.get('ord_missing')).toBeUndefined()
      // Pages of 3 (each fetch returns up to limit + 1).
      const first = await store.list({ status: null, page: page(3) })
      expect(first).toEqual(orders.slice(0, 4))
      const second = await store.list({ status: null, page: page(3, first[2]) })
      expect(second).toEqual(orders.slice(3, 7))
      // Two cancelled: the filter skips the others.
      for (const order of [orders[1]!, orders[5]!]) {
        expect(await store.update(order, { status: 'cancelled' })).toMatchObject({
          status: 'cancelled',
          version: 2,
        })
      }
      const cancelled = await store.list({ status: 'cancelled', page: page(1) })
      expect(cancelled.map((order) => order.id)).toEqual([orders[1]!.id, orders[5]!.id])
      const rest = await store.list({ status: 'cancelled', page: page(1, cancelled[0]) })
      expect(rest.map((order) => order.id)).toEqual([orders[5]!.id])
      expect(await store.list({ status: 'open', page: page(10, orders[5]) })).toEqual([orders[6]])
    })

    test('writes are conditional on the version they read', async () => {
      const store = await open(() => T0)
      const order = await created(store, 'Ada')
      const updated = await store.update(order, {
        note: 'Gift wrap',
        items: [{ sku: 'X-1', quantity: 3 }],
      })
      expect(updated).toMatchObject({
        note: 'Gift wrap',
        items: [{ sku: 'X-1', quantity: 3 }],
        version: 2,
      })
      expect(await store.update(order, { note: 'stale' })).toBeUndefined()
      expect(await store.delete(order)).toBe(false)
      expect((await store.get(order.id))?.note).toBe('Gift wrap')
      expect(await store.delete(updated!)).toBe(true)
      expect(await store.get(order.id)).toBeUndefined()
      expect(await store.update(updated!, { note: 'gone' })).toBeUndefined()
    })

    test('an answer that fails undoes the write (create, cancel)', async () => {
      const store = await open(() => T0)
      const failure = new Error('the answer failed')
      await expect(
        store.create(input('Nobody'), async () => {
          throw failure
        }),
      ).rejects.toBe(failure)
      expect(await store.list({ status: null, page: page(100) })).toEqual([])
      const order = await created(store, 'Ada')
      await expect(
        store.cancel(order.id, `/v1/orders/${order.id}`, async () => {
          throw failure
        }),
      ).rejects.toBe(failure)
      expect(await store.get(order.id)).toEqual(order)
    })

    test('cancel: open → cancelling with a running operation, then cancelled and succeeded', async () => {
      const store = await open(() => T0)
      const order = await created(store, 'Ada')
      const operation = await store.cancel(order.id, `/v1/orders/${order.id}`, async (op) => op)
      expect(operation).toMatchObject({
        kind: 'order.cancel',
        status: 'running',
        target: `/v1/orders/${order.id}`,
        completed_at: null,
      })
      expect(await store.getOperation(operation!.id)).toEqual(operation)
      expect((await store.get(order.id))?.status).toBe('cancelling')
      // Not open any more: no second cancellation.
      expect(await store.cancel(order.id, 'x', async (op) => op)).toBeUndefined()
      expect(await store.cancel('ord_missing', 'x', async (op) => op)).toBeUndefined()
      await store.finishCancel(order.id, operation!.id)
      expect(await store.get(order.id)).toMatchObject({ status: 'cancelled', version: 3 })
      expect(await store.getOperation(operation!.id)).toMatchObject({
        status: 'succeeded',
        completed_at: at(T0),
      })
      expect(await store.getOperation('op_missing')).toBeUndefined()
    })
  })
}

contract('MemoryOrderStore', async (clock) => new MemoryOrderStore({ clock }), 'from the clock')

test('MemoryOrderStore: an order dated before the last one (a clock stepped back) is listed in its place', async () => {
  let now = T0
  const store = new MemoryOrderStore({ clock: () => now })
  for (const [customer, at] of [
    ['b', T0 + 2000],
    ['d', T0 + 3000],
    ['a', T0 + 1000],
    ['c', T0 + 2500],
  ] as const) {
    now = at
    await created(store, customer)
  }
  const rows = await store.list({ status: null, page: page(10) })
  expect(rows.map((order) => order.customer)).toEqual(['a', 'b', 'c', 'd'])
  const after = await store.list({ status: null, page: page(10, rows[1]) })
  expect(after.map((order) => order.customer)).toEqual(['c', 'd'])
})

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function database() {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 })
  const schema = `orders_test_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await pool.end()
  })
  // Two instances starting at once: the advisory lock makes it one migration after the other.
  await Promise.all([migrateOrders(pool, { schema }), migrateOrders(pool, { schema })])
  return { pool, schema }
}

describe.skipIf(!databaseUrl)(
  `PostgresOrderStore${databaseUrl ? '' : ' (skipped: DATABASE_URL not set)'}`,
  () => {
    contract(
      'the same contract as the memory store',
      async (clock) => {
        const { pool, schema } = await database()
        return new PostgresOrderStore({ pool, schema, clock })
      },
      'from the database',
    )

    test('instances whose clocks differ: an order created later is listed after a cursor past an earlier one', async () => {
      const { pool, schema } = await database()
      // Two instances on one database; the second's clock is an hour behind.
      const ahead = new PostgresOrderStore({ pool, schema })
      const behind = new PostgresOrderStore({ pool, schema, clock: () => Date.now() - 3_600_000 })
      const first = await created(ahead, 'Ada')
      const onePage = await ahead.list({ status: null, page: page(1) })
      expect(onePage).toEqual([first])
      const later = await created(behind, 'Grace')
      // The cursor of the first page, followed after the second create: the later order is on
      // the next page, not dated an hour before the cursor and skipped.
      expect(await behind.list({ status: null, page: page(1, onePage[0]) })).toEqual([later])
      expect(Date.parse(later.created_at)).toBeGreaterThanOrEqual(Date.parse(first.created_at))
    })

    test('a page is one index range scan of limit + 1 rows, with or without the status filter', async () => {
      const { pool, schema } = await database()
      const next = createIdGenerator({ clock: () => T0 })
      // 20,000 orders over a day; one in ten cancelled.
      const ids = Array.from({ length: 20_000 }, () => next('ord'))
      await pool.query(
        `INSERT INTO "${schema}".orders (id, status, customer, items, note, version, created_at, updated_at)
SELECT id, CASE WHEN n % 10 = 0 THEN 'cancelled' ELSE 'open' END, 'Ada', '[]', NULL, 1,
  to_timestamp(${T0 / 1000} + n * 4.32), to_timestamp(${T0 / 1000} + n * 4.32)
FROM unnest($1::text[]) WITH ORDINALITY AS t(id, n)`,
        [ids],
      )
      await pool.query(`ANALYZE "${schema}".orders`)
      // The statements the store sends, run again under EXPLAIN ANALYZE.
      const sent: { text: string; params: unknown[] }[] = []
      const recording = {
        query: (text: string, params?: unknown[]) => {
          sent.push({ text, params: params ?? [] })
          return pool.query(text, params)
        },
        connect: () => pool.connect(),
      }
      const store = new PostgresOrderStore({ pool: recording, schema })
      const middle = (await store.list({ status: null, page: page(10_000) }))[10_000]!
      for (const status of [null, 'cancelled'] as const) {
        sent.length = 0
        const rows = await store.list({ status, page: page(20, middle) })
        expect(rows).toHaveLength(21)
        const { text, params } = sent[0]!
        const { rows: plan } = await pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params)
        const root = (plan[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan
        const nodes = flatten(root)
        expect(
          nodes.map((node) => node['Node Type']),
          String(status),
        ).not.toContain('Seq Scan')
        expect(nodes.map((node) => node['Node Type'])).not.toContain('Sort')
        const scan = nodes.find((node) => node['Index Name'] !== undefined)!
        expect(scan['Index Name']).toBe(
          status === null ? 'orders_created_at_id' : 'orders_status_created_at_id',
        )
        // Bounded: the scan reads the page and one more row, wherever the page is.
        expect(scan['Actual Rows']).toBe(21)
      }
    })
  },
)

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  'Actual Rows': number
  Plans?: PlanNode[]
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)]
}
