// Every change of an order reaches the store's `events` (the webhooks' publisher in the
// service): created, updated, cancelled when the cancellation completes, deleted, each with the
// order as the API shows it. On PostgreSQL they are called inside the write's transaction, with
// its connection: what they throw rolls the write back, and what they write commits with it.
import pg from 'pg'
import { afterAll, describe, expect, test } from 'vitest'
import { migrateOrders, PostgresOrderStore } from '../src/orders/postgres-store.ts'
import type { Order } from '../src/orders/schema.ts'
import type { OrderEvents, OrderEventType, OrderStore } from '../src/orders/store.ts'
import { MemoryOrderStore } from '../src/orders/store.ts'

const databaseUrl = process.env['DATABASE_URL'] || undefined
const input = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }

interface Recorded {
  type: OrderEventType
  order: Order
  inTransaction: boolean
}

function recorder(): { events: OrderEvents; seen: Recorded[]; failNext: () => void } {
  const seen: Recorded[] = []
  let fail = false
  return {
    seen,
    failNext: () => {
      fail = true
    },
    events: async (type, order, db) => {
      if (fail) {
        fail = false
        throw new Error('the queue refused the event')
      }
      seen.push({ type, order, inTransaction: db !== undefined })
    },
  }
}

function contract(
  title: string,
  open: (events: OrderEvents) => Promise<OrderStore>,
  transactional: boolean,
) {
  describe(title, () => {
    test('created, updated, cancelled (when it completes) and deleted, with the order as the API shows it', async () => {
      const { events, seen } = recorder()
      const store = await open(events)
      const order = await store.create(input, async (created) => created)
      const updated = await store.update(order, { note: 'Gift wrap' })
      const accepted = await store.cancel(order.id, `/v1/orders/${order.id}`, async (op) => op)
      // Cancelling is not yet cancelled: no event until the operation completes.
      expect(seen.map((event) => event.type)).toEqual(['order.created', 'order.updated'])
      await store.finishCancel(order.id, accepted!.id)
      const cancelled = await store.get(order.id)
      expect(await store.delete(cancelled!)).toBe(true)
      expect(seen.map((event) => event.type)).toEqual([
        'order.created',
        'order.updated',
        'order.cancelled',
        'order.deleted',
      ])
      expect(seen[0]?.order).toEqual(order)
      expect(seen[1]?.order).toEqual(updated)
      expect(seen[2]?.order).toEqual(cancelled)
      expect(seen[2]?.order).toMatchObject({ status: 'cancelled', version: 4 })
      // The order as it was when it was deleted.
      expect(seen[3]?.order).toEqual(cancelled)
      expect(seen.every((event) => event.inTransaction === transactional)).toBe(true)
      // Writes that do not happen emit nothing.
      expect(await store.update(order, { note: 'stale' })).toBeUndefined()
      expect(await store.delete(order)).toBe(false)
      await store.finishCancel(order.id, accepted!.id)
      expect(seen).toHaveLength(4)
    })

    test('a create whose event fails is undone', async () => {
      const { events, seen, failNext } = recorder()
      const store = await open(events)
      failNext()
      let id: string | undefined
      await expect(
        store.create(input, async (created) => {
          id = created.id
          return created
        }),
      ).rejects.toThrow()
      expect(id).toBeDefined()
      expect(await store.get(id as string)).toBeUndefined()
      expect(seen).toEqual([])
    })
  })
}

contract('MemoryOrderStore', async (events) => new MemoryOrderStore({ events }), false)

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function database() {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 })
  const schema = `order_events_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  cleanups.push(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await pool.end()
  })
  await migrateOrders(pool, { schema })
  return { pool, schema }
}

describe.skipIf(!databaseUrl)(
  `PostgresOrderStore${databaseUrl ? '' : ' (skipped: DATABASE_URL not set)'}`,
  () => {
    contract(
      'the same events, in the write’s transaction',
      async (events) => {
        const { pool, schema } = await database()
        return new PostgresOrderStore({ pool, schema, events })
      },
      true,
    )

    test('what the events write commits with the order; an event that fails rolls every write back', async () => {
      const { pool, schema } = await database()
      await pool.query(`CREATE TABLE "${schema}".outbox (type text, order_id text)`)
      let fail = false
      const events: OrderEvents = async (type, order, db) => {
        // Written on the write's connection: visible only if the write commits.
        await db!.query(`INSERT INTO "${schema}".outbox VALUES ($1, $2)`, [type, order.id])
        if (fail) throw new Error('refused')
      }
      const store = new PostgresOrderStore({ pool, schema, events })
      const outbox = async () =>
        (await pool.query(`SELECT type FROM "${schema}".outbox ORDER BY type`)).rows.map(
          (row: { type: string }) => row.type,
        )
      const order = await store.create(input, async (created) => created)
      expect(await outbox()).toEqual(['order.created'])
      fail = true
      await expect(store.update(order, { note: 'x' })).rejects.toThrow('refused')
      expect(await store.get(order.id)).toEqual(order)
      await expect(store.delete(order)).rejects.toThrow('refused')
      expect(await store.get(order.id)).toEqual(order)
      await expect(store.create(input, async (created) => created)).rejects.toThrow('refused')
      fail = false
      const operation = await store.cancel(order.id, 'x', async (op) => op)
      fail = true
      await expect(store.finishCancel(order.id, operation!.id)).rejects.toThrow('refused')
      expect((await store.get(order.id))?.status).toBe('cancelling')
      expect((await store.getOperation(operation!.id))?.status).toBe('running')
      // Only the first create's event committed.
      expect(await outbox()).toEqual(['order.created'])
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".orders`)
      expect(rows[0].n).toBe(1)
    })
  },
)
