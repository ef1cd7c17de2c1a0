import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, counting, dropSchema, testSchema } from '../test/databases.ts'
import { T0 } from '../test/webhook-records.ts'
import { PostgresStoreError } from './error.ts'
import { migrate } from './migrations.ts'
import type { Queryable } from './queryable.ts'
import { PostgresDedupStore } from './webhook-dedup-store.ts'

const DAY = 86_400_000

test('a db without query, a clock that is not a function, or a bad schema is refused', () => {
  expect(() => new PostgresDedupStore({ db: {} as Queryable })).toThrow(TypeError)
  expect(
    () => new PostgresDedupStore({ db: new pg.Client(), clock: 5 as unknown as () => number }),
  ).toThrow(TypeError)
  expect(() => new PostgresDedupStore({ db: new pg.Client(), schema: 'A' })).toThrow(TypeError)
})

test('bad ids and TTLs are refused before anything is sent; a driver error is QUERY_FAILED', async () => {
  const counted = counting({ query: async () => ({ rows: [] }) })
  const store = new PostgresDedupStore({ db: counted.db })
  await expect(store.claim('', DAY)).rejects.toThrow(RangeError)
  await expect(store.claim('x'.repeat(257), DAY)).rejects.toThrow(RangeError)
  await expect(store.claim('msg_1', 0)).rejects.toThrow(RangeError)
  await expect(store.claim('msg_1', Number.NaN)).rejects.toThrow(RangeError)
  await expect(store.release('')).rejects.toThrow(RangeError)
  await expect(store.purgeExpired(T0, { maxBatches: 0 })).rejects.toThrow(RangeError)
  expect(counted.statements).toEqual([])
  const failure = new Error('Connection terminated unexpectedly')
  const failing = new PostgresDedupStore({ db: { query: () => Promise.reject(failure) } })
  const error = await failing.claim('msg_1', DAY).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(PostgresStoreError)
  expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'webhook-dedup.claim' })
  expect((error as PostgresStoreError).cause).toBe(failure)
})

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`PostgresDedupStore on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    let now = T0
    const store = () => new PostgresDedupStore({ db, schema, clock: () => now })

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      await migrate(db, { schema })
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    test('one statement per claim; first wins, a repeat is refused until the record expires', async () => {
      now = T0
      const counted = counting(db)
      const on = new PostgresDedupStore({ db: counted.db, schema, clock: () => now })
      expect(await on.claim('msg_a', DAY)).toBe(true)
      expect(await on.claim('msg_a', DAY)).toBe(false)
      expect(counted.statements).toEqual(['INSERT', 'INSERT'])
      now = T0 + DAY - 1
      expect(await on.claim('msg_a', DAY)).toBe(false)
      now = T0 + DAY
      expect(await on.claim('msg_a', DAY)).toBe(true) // expired: taken over, for a new day
      now = T0 + 2 * DAY - 1
      expect(await on.claim('msg_a', DAY)).toBe(false)
    })

    test('50 concurrent claims of one id: exactly one is first', async () => {
      now = T0
      const results = await Promise.all(
        Array.from({ length: 50 }, () => store().claim('msg_race', DAY)),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
    })

    test('release forgets an id, so the next delivery is handled again', async () => {
      now = T0
      const dedup = store()
      expect(await dedup.claim('msg_b', DAY)).toBe(true)
      await dedup.release('msg_b')
      expect(await dedup.claim('msg_b', DAY)).toBe(true)
      await dedup.release('msg_never_seen') // a no-op
    })

    test('purgeExpired deletes expired records in batches, and only those', async () => {
      now = T0
      const dedup = store()
      for (let i = 0; i < 5; i++) await dedup.claim(`msg_old_${i}`, 1000)
      await dedup.claim('msg_live', DAY)
      expect(await dedup.purgeExpired(T0 + 1000, { batchSize: 2 })).toBeGreaterThanOrEqual(5)
      expect(await dedup.claim('msg_live', DAY)).toBe(false)
      const { rows } = await db.query(
        `SELECT count(*)::integer AS n FROM "${schema}"."api_blocks_webhook_dedup" WHERE id LIKE 'msg_old_%'`,
      )
      expect(rows).toEqual([{ n: 0 }])
    })
  })
}
