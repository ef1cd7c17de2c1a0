import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, counting, dropSchema, testSchema } from '../test/databases.ts'
import { endpoint, T0 } from '../test/webhook-records.ts'
import { PostgresStoreError } from './error.ts'
import { migrate } from './migrations.ts'
import type { Queryable } from './queryable.ts'
import { PostgresEndpointStore } from './webhook-endpoint-store.ts'

test('a db without query, or a bad schema, is refused', () => {
  expect(() => new PostgresEndpointStore({ db: {} as Queryable })).toThrow(TypeError)
  expect(() => new PostgresEndpointStore({ db: new pg.Client(), schema: '1x' })).toThrow(TypeError)
})

test('bad times and versions are refused before anything is sent; a row it never writes is UNEXPECTED_ROW', async () => {
  const counted = counting({ query: async () => ({ rows: [] }) })
  const store = new PostgresEndpointStore({ db: counted.db })
  await expect(store.insert(endpoint('we_1', { createdAt: Number.NaN }))).rejects.toThrow(TypeError)
  await expect(store.update('we_1', { updatedAt: Number.POSITIVE_INFINITY })).rejects.toThrow(
    TypeError,
  )
  await expect(store.update('we_1', { updatedAt: T0 }, 0.5)).rejects.toThrow(RangeError)
  await expect(store.list({ limit: -1 })).rejects.toThrow(RangeError)
  expect(counted.statements).toEqual([])
  const odd = new PostgresEndpointStore({
    db: { query: async () => ({ rows: [{ ...endpoint('we_1'), status: 'paused' }] }) },
  })
  await expect(odd.get('we_1')).rejects.toMatchObject({
    code: 'UNEXPECTED_ROW',
    operation: 'webhook-endpoints.get',
  })
})

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`PostgresEndpointStore on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    let n = 0
    const fresh = async () => {
      const tablePrefix = `e${n++}_`
      await migrate(db, { schema, tablePrefix })
      return new PostgresEndpointStore({ db, schema, tablePrefix })
    }

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    test('an endpoint reads back as saved; a taken id is refused (QUERY_FAILED, 23505)', async () => {
      const store = await fresh()
      const saved = endpoint('we_1', {
        secrets: [
          { value: 'whsec_new', createdAt: T0 + 5, expiresAt: null },
          { value: 'whsec_old', createdAt: T0, expiresAt: T0 + 86_400_000 },
        ],
      })
      await store.insert(saved)
      expect(await store.get('we_1')).toEqual(saved)
      expect(await store.get('we_2')).toBeUndefined()
      const error = await store.insert(saved).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(PostgresStoreError)
      expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'webhook-endpoints.insert' })
      expect((error as PostgresStoreError).cause).toMatchObject({ code: '23505' })
    }, 30_000)

    test('update sets only the members given and adds one to version; the compare-and-set holds under concurrency', async () => {
      const store = await fresh()
      await store.insert(endpoint('we_1'))
      const updated = await store.update(
        'we_1',
        { events: null, status: 'disabled', disabledReason: 'gone', updatedAt: T0 + 1 },
        1,
      )
      expect(updated).toEqual({
        ...endpoint('we_1'),
        events: null,
        status: 'disabled',
        disabledReason: 'gone',
        updatedAt: T0 + 1,
        version: 2,
      })
      expect(
        await store.update('we_1', { url: 'https://x.example', updatedAt: T0 + 2 }, 1),
      ).toBeUndefined()
      expect(await store.update('we_9', { updatedAt: T0 + 2 })).toBeUndefined()
      // Ten updates at version 2 at once: one applies.
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.update('we_1', { url: `https://hooks.example.com/${i}`, updatedAt: T0 + 3 }, 2),
        ),
      )
      expect(results.filter((result) => result !== undefined)).toHaveLength(1)
      expect(await store.get('we_1')).toMatchObject({ version: 3 })
      // Without expectedVersion it applies whatever the version.
      expect(
        await store.update('we_1', { status: 'enabled', disabledReason: null, updatedAt: T0 + 4 }),
      ).toMatchObject({
        status: 'enabled',
        version: 4,
      })
    })

    test('list pages ids in byte order, by owner (null: unowned); subscribed finds enabled endpoints of a type', async () => {
      const store = await fresh()
      await store.insert(endpoint('we_b'))
      await store.insert(endpoint('we_B', { owner: null, events: null }))
      await store.insert(endpoint('we_a', { owner: 'client:other', events: ['order.deleted'] }))
      await store.insert(endpoint('we_c', { status: 'disabled', disabledReason: 'manual' }))
      const ids = async (query: Parameters<typeof store.list>[0]) =>
        (await store.list(query)).map(({ id }) => id)
      expect(await ids({ limit: 10 })).toEqual(['we_B', 'we_a', 'we_b', 'we_c'])
      expect(await ids({ limit: 2, after: 'we_B' })).toEqual(['we_a', 'we_b'])
      expect(await ids({ owner: 'client:demo', limit: 10 })).toEqual(['we_b', 'we_c'])
      expect(await ids({ owner: null, limit: 10 })).toEqual(['we_B'])
      expect((await store.subscribed('order.created')).map(({ id }) => id)).toEqual([
        'we_B',
        'we_b',
      ])
      expect((await store.subscribed('order.deleted')).map(({ id }) => id)).toEqual([
        'we_B',
        'we_a',
      ])
      expect(await store.delete('we_b')).toBe(true)
      expect(await store.delete('we_b')).toBe(false)
    })
  })
}
