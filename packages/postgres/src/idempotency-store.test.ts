import type { StoredResponse } from '@api-blocks/idempotency'
import { idempotency } from '@api-blocks/idempotency'
import { runIdempotencyStoreConformance } from '@api-blocks/idempotency/testing'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, counting, dropSchema, testSchema } from '../test/databases.ts'
import { PostgresStoreError } from './error.ts'
import { PostgresIdempotencyStore } from './idempotency-store.ts'
import { migrate } from './migrations.ts'
import type { Queryable } from './queryable.ts'

const T0 = 1_700_000_000_000
const LEASE = 30_000
const RETENTION = 24 * 60 * 60 * 1000
const response: StoredResponse = {
  status: 201,
  headers: [
    ['content-type', 'application/octet-stream'],
    ['link', '</a>; rel="a", </b>; rel="b"'],
  ],
  body: new Uint8Array([0, 255, 10, 13, 0]),
}

test('pg.Pool, pg.Client and PGlite satisfy Queryable (checked by tsc); a db without query is refused', () => {
  const client: Queryable = new pg.Client()
  const pool: Queryable = new pg.Pool()
  expect(typeof client.query).toBe('function')
  expect(typeof pool.query).toBe('function')
  expect(() => new PostgresIdempotencyStore({ db: {} as Queryable })).toThrow(TypeError)
  expect(
    () => new PostgresIdempotencyStore({ db: client, schema: 'Robert"; DROP TABLE x; --' }),
  ).toThrow(TypeError)
})

test('a failing statement rejects with PostgresStoreError QUERY_FAILED, the driver error as cause', async () => {
  const failure = Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' })
  const store = new PostgresIdempotencyStore({ db: { query: () => Promise.reject(failure) } })
  const error = await store
    .claim('k', { fingerprint: 'f', owner: 'o', leaseMs: LEASE, now: T0 })
    .catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(PostgresStoreError)
  expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'idempotency.claim' })
  expect((error as PostgresStoreError).cause).toBe(failure)
  expect((error as PostgresStoreError).toProblem().status).toBe(503)
})

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`PostgresIdempotencyStore on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    const store = () => new PostgresIdempotencyStore({ db, schema })
    const table = `"${schema}"."api_blocks_idempotency_records"`

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      await migrate(db, { schema })
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    runIdempotencyStoreConformance(backend.title, () => store())

    test('every operation is ONE statement (one round trip), whatever it finds', async () => {
      const counted = counting(db)
      const s = new PostgresIdempotencyStore({ db: counted.db, schema })
      const key = crypto.randomUUID()
      const claim = (owner: string, now: number) =>
        s.claim(key, { fingerprint: 'f', owner, leaseMs: LEASE, now })
      const steps: [string, () => Promise<unknown>][] = [
        ['claim (absent)', () => claim('a', T0)],
        ['claim (in flight)', () => claim('b', T0 + 1)],
        [
          'checkpoint',
          () =>
            s.checkpoint(key, 'a', {
              recoveryPoint: 'charged',
              retentionMs: RETENTION,
              now: T0 + 2,
            }),
        ],
        ['release', () => s.release(key, 'a')],
        ['claim (resumable)', () => claim('c', T0 + 3)],
        ['complete', () => s.complete(key, 'c', { response, retentionMs: RETENTION, now: T0 + 4 })],
        ['claim (completed: replay)', () => claim('d', T0 + 5)],
      ]
      for (const [step, run] of steps) {
        counted.statements.length = 0
        await run()
        expect({ step, statements: counted.statements.length }).toEqual({ step, statements: 1 })
      }
    })

    test('the body is stored as bytea and the header fields as jsonb, in order', async () => {
      const s = store()
      const key = crypto.randomUUID()
      await s.claim(key, { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: T0 })
      await s.complete(key, 'a', { response, retentionMs: RETENTION, now: T0 + 1 })
      const { rows } = await db.query(
        `SELECT state, status, headers, body, expires_at, ends_at, recovery_point FROM ${table} WHERE key = $1`,
        [key],
      )
      const row = rows[0] as Record<string, unknown>
      expect({ ...row, body: [...(row['body'] as Uint8Array)] }).toEqual({
        state: 'completed',
        status: 201,
        headers: response.headers,
        body: [...response.body],
        expires_at: T0 + 1 + RETENTION,
        ends_at: T0 + 1 + RETENTION,
        recovery_point: null,
      })
    })

    test('fractions of a millisecond are compared exactly, as the memory store compares them', async () => {
      const s = store()
      const key = crypto.randomUUID()
      await s.claim(key, { fingerprint: 'f', owner: 'a', leaseMs: 0.5, now: T0 + 0.25 })
      expect(
        await s.claim(key, { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: T0 + 0.5 }),
      ).toEqual({ state: 'in-flight', leaseExpiresAt: T0 + 0.75 })
      expect(
        (await s.claim(key, { fingerprint: 'f', owner: 'b', leaseMs: LEASE, now: T0 + 0.75 }))
          .state,
      ).toBe('claimed')
    })

    test('withDb: a completion on a transaction commits and rolls back with it, on the same table', async () => {
      // One connection for the transaction: a client of the pool, or PGlite itself.
      const pooled = 'connect' in db ? await (db as pg.Pool).connect() : undefined
      const conn: Queryable = pooled ?? db
      try {
        const s = store()
        const bound = s.withDb(conn)
        expect(bound).toBeInstanceOf(PostgresIdempotencyStore)
        expect(bound.table).toBe(s.table)
        expect(bound.db).toBe(conn)
        const key = crypto.randomUUID()
        const claim = (owner: string, now: number) =>
          s.claim(key, { fingerprint: 'f', owner, leaseMs: LEASE, now })
        await claim('a', T0)
        await conn.query('BEGIN')
        expect(
          await bound.complete(key, 'a', { response, retentionMs: RETENTION, now: T0 + 1 }),
        ).toBe(true)
        await conn.query('ROLLBACK')
        // Rolled back: still a live claim of `a`.
        expect(await claim('b', T0 + 2)).toEqual({ state: 'in-flight', leaseExpiresAt: T0 + LEASE })
        await conn.query('BEGIN')
        // The fence holds inside the transaction too: another owner completes nothing.
        expect(
          await bound.complete(key, 'x', { response, retentionMs: RETENTION, now: T0 + 3 }),
        ).toBe(false)
        expect(
          await bound.complete(key, 'a', { response, retentionMs: RETENTION, now: T0 + 3 }),
        ).toBe(true)
        await conn.query('COMMIT')
        expect(await claim('c', T0 + 4)).toEqual({ state: 'completed', response })
        expect(() => s.withDb({} as Queryable)).toThrow(TypeError)
      } finally {
        pooled?.release()
      }
    })

    test('sweepExpired deletes exactly the records that are logically absent, in batches', async () => {
      const s = store()
      const keys = Object.fromEntries(
        [
          'completedOld',
          'completedLive',
          'claimEnded',
          'claimLive',
          'resumable',
          'resumableOld',
        ].map((name) => [name, `${name}-${crypto.randomUUID()}`]),
      ) as Record<string, string>
      const at = (key: string, owner: string, now: number) =>
        s.claim(key, { fingerprint: 'f', owner, leaseMs: LEASE, now })
      const k = (name: string) => keys[name] as string
      await at(k('completedOld'), 'a', T0)
      await s.complete(k('completedOld'), 'a', { response, retentionMs: 1_000, now: T0 })
      await at(k('completedLive'), 'a', T0)
      await s.complete(k('completedLive'), 'a', { response, retentionMs: RETENTION, now: T0 })
      await at(k('claimEnded'), 'a', T0)
      await at(k('claimLive'), 'a', T0 + 2 * LEASE)
      await at(k('resumable'), 'a', T0)
      await s.checkpoint(k('resumable'), 'a', {
        recoveryPoint: 'p',
        retentionMs: RETENTION,
        now: T0,
      })
      await at(k('resumableOld'), 'a', T0)
      await s.checkpoint(k('resumableOld'), 'a', {
        recoveryPoint: 'p',
        retentionMs: LEASE + 1,
        now: T0,
      })
      const now = T0 + 2 * LEASE
      // Other tests' records share the table: count only ours, before and after.
      const ours = async () => {
        const { rows } = await db.query(`SELECT key FROM ${table} WHERE key = ANY($1)`, [
          Object.values(keys),
        ])
        return rows.map((row) => (row as { key: string }).key).sort()
      }
      expect(await ours()).toHaveLength(6)
      const swept = await s.sweepExpired(now, { batchSize: 1 })
      expect(swept).toBeGreaterThanOrEqual(3)
      expect(await ours()).toEqual([k('claimLive'), k('completedLive'), k('resumable')].sort())
      // What is left behaves as before the sweep.
      expect((await at(k('claimLive'), 'b', now)).state).toBe('in-flight')
      expect((await at(k('completedLive'), 'b', now)).state).toBe('completed')
      expect(await at(k('resumable'), 'b', now)).toEqual({ state: 'claimed', recoveryPoint: 'p' })
      expect(await s.sweepExpired(T0 - 1)).toBe(0)
    })

    test('sweepExpired stops after maxBatches and the next call carries on', async () => {
      const s = store()
      const old = Array.from({ length: 5 }, () => `sweep-${crypto.randomUUID()}`)
      for (const key of old)
        await s.claim(key, { fingerprint: 'f', owner: 'a', leaseMs: 1, now: 1 })
      // Time 2: only these five (lease ended at 2) are absent; other tests write at T0 and later.
      expect(await s.sweepExpired(2, { batchSize: 2, maxBatches: 2 })).toBe(4)
      expect(await s.sweepExpired(2, { batchSize: 2, maxBatches: 2 })).toBe(1)
      await expect(s.sweepExpired(2, { batchSize: 0 })).rejects.toThrow(RangeError)
    })

    test('a schema that was never migrated rejects with NOT_MIGRATED', async () => {
      const unmigrated = new PostgresIdempotencyStore({ db, schema: testSchema() })
      await expect(
        unmigrated.claim('k', { fingerprint: 'f', owner: 'a', leaseMs: LEASE, now: T0 }),
      ).rejects.toMatchObject({ code: 'NOT_MIGRATED', operation: 'idempotency.claim' })
    })

    test('the middleware over a failing database answers 503 and runs nothing', async () => {
      let ran = 0
      const broken = new PostgresIdempotencyStore({ db, schema: testSchema() })
      const answer = await idempotency({ store: broken, scope: 'tenant' })(
        new Request('https://api.example/v1/orders', {
          method: 'POST',
          headers: { 'idempotency-key': 'k1', 'content-type': 'application/json' },
          body: '{}',
        }),
        async () => {
          ran++
          return new Response(null, { status: 201 })
        },
      )
      expect(answer.status).toBe(503)
      expect(ran).toBe(0)
    })
  })
}
