import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { backends, counting, databaseUrl, dropSchema, testSchema } from '../test/databases.ts'
import { attempt, delivery, T0 } from '../test/webhook-records.ts'
import { PostgresStoreError } from './error.ts'
import { migrate } from './migrations.ts'
import type { Queryable } from './queryable.ts'
import { PostgresDeliveryQueue } from './webhook-delivery-queue.ts'

const LEASE = 30_000

test('a db without query, or a bad table prefix, is refused', () => {
  expect(() => new PostgresDeliveryQueue({ db: {} as Queryable })).toThrow(TypeError)
  expect(() => new PostgresDeliveryQueue({ db: new pg.Client(), tablePrefix: 'x"; --' })).toThrow(
    TypeError,
  )
  const queue = new PostgresDeliveryQueue({ db: new pg.Client() })
  expect(() => queue.inTransaction({} as Queryable)).toThrow(TypeError)
})

test('a failing statement rejects with PostgresStoreError QUERY_FAILED, the driver error as cause', async () => {
  const failure = Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' })
  const queue = new PostgresDeliveryQueue({ db: { query: () => Promise.reject(failure) } })
  const error = await queue
    .claim({ now: T0, limit: 1, leaseMs: LEASE })
    .catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(PostgresStoreError)
  expect(error).toMatchObject({ code: 'QUERY_FAILED', operation: 'webhook-deliveries.claim' })
  expect((error as PostgresStoreError).cause).toBe(failure)
  expect((error as PostgresStoreError).toProblem().status).toBe(503)
  await expect(queue.enqueue([delivery('evt_1', 'we_1')])).rejects.toMatchObject({
    operation: 'webhook-deliveries.enqueue',
  })
})

test('bad times, limits and filters are refused before anything is sent', async () => {
  const counted = counting({ query: async () => ({ rows: [] }) })
  const queue = new PostgresDeliveryQueue({ db: counted.db })
  await expect(queue.claim({ now: Number.NaN, limit: 1, leaseMs: 1 })).rejects.toThrow(TypeError)
  await expect(queue.claim({ now: T0, limit: -1, leaseMs: 1 })).rejects.toThrow(RangeError)
  await expect(queue.claim({ now: T0, limit: 1, leaseMs: 0 })).rejects.toThrow(RangeError)
  await expect(queue.claim({ now: T0, limit: 1, leaseMs: 1, perEndpoint: 1.5 })).rejects.toThrow(
    RangeError,
  )
  await expect(
    queue.enqueue([{ ...delivery('evt_1', 'we_1'), nextAttemptAt: Number.POSITIVE_INFINITY }]),
  ).rejects.toThrow(TypeError)
  await expect(queue.replay({ from: T0 } as never, T0)).rejects.toThrow(TypeError)
  await expect(queue.purge(T0, { batchSize: 0 })).rejects.toThrow(RangeError)
  // Nothing to do: no statement either.
  expect(await queue.enqueue([])).toBe(0)
  expect(await queue.claim({ now: T0, limit: 0, leaseMs: 1 })).toEqual([])
  expect(counted.statements).toEqual([])
})

test('a row no version writes rejects with UNEXPECTED_ROW', async () => {
  const row = { event_id: 'evt_1', endpoint_id: 'we_1', status: 'lost', log: [] }
  const queue = new PostgresDeliveryQueue({ db: { query: async () => ({ rows: [row] }) } })
  await expect(queue.get('evt_1', 'we_1')).rejects.toMatchObject({
    code: 'UNEXPECTED_ROW',
    operation: 'webhook-deliveries.get',
  })
})

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`PostgresDeliveryQueue on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    let n = 0
    // Every test its own table prefix: a fresh, empty queue.
    const fresh = async () => {
      const tablePrefix = `q${n++}_`
      await migrate(db, { schema, tablePrefix })
      return new PostgresDeliveryQueue({ db, schema, tablePrefix, clock: () => T0 })
    }

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    test('a missing table rejects with NOT_MIGRATED', async () => {
      const queue = new PostgresDeliveryQueue({ db, schema, tablePrefix: 'never_migrated_' })
      await expect(queue.get('evt_1', 'we_1')).rejects.toMatchObject({
        code: 'NOT_MIGRATED',
        operation: 'webhook-deliveries.get',
      })
    }, 30_000) // the first statement on a fresh PGlite takes seconds on a busy machine

    test('every operation is one statement, claim included (one round trip per batch)', async () => {
      const queue = await fresh()
      const counted = counting(db)
      const on = new PostgresDeliveryQueue({
        db: counted.db,
        schema,
        tablePrefix: `q${n - 1}_`,
        clock: () => T0,
      })
      const many = Array.from({ length: 40 }, (_, i) => delivery(`evt_${i}`, `we_${i % 3}`))
      expect(await on.enqueue(many)).toBe(40)
      const batch = await on.claim({ now: T0, limit: 32, leaseMs: LEASE })
      expect(batch).toHaveLength(32)
      const perEndpoint = await on.claim({ now: T0, limit: 32, leaseMs: LEASE, perEndpoint: 20 })
      expect(perEndpoint).toHaveLength(8)
      await on.settle(batch[0]!, attempt(0, T0, 200), { status: 'succeeded' }, T0 + 1)
      await on.release(batch[1]!)
      await on.get('evt_0', 'we_0')
      await on.list({ endpointId: 'we_0', limit: 10 })
      await on.replay({ endpointId: 'we_0' }, T0)
      await on.replay({ eventId: 'evt_0', endpointId: 'we_0' }, T0)
      await on.inTransaction(counted.db).enqueue([delivery('evt_x', 'we_0')])
      // enqueue, claim, claim (perEndpoint: a SELECT of the function of migration 0005), settle,
      // release, get, list, replay (backlog), replay (one), enqueue in a transaction.
      expect(counted.statements).toEqual([
        'WITH',
        'WITH',
        'SELECT',
        'UPDATE',
        'UPDATE',
        'SELECT',
        'SELECT',
        'WITH',
        'UPDATE',
        'WITH',
      ])
      expect(await queue.get('evt_x', 'we_0')).toMatchObject({ status: 'pending', attempts: 0 })
    })

    test('enqueue is idempotent per (eventId, endpointId), within a batch too; the payload is kept byte for byte', async () => {
      const queue = await fresh()
      const first = delivery('evt_1', 'we_1')
      expect(await queue.enqueue([first, first, delivery('evt_1', 'we_2')])).toBe(2)
      expect(await queue.enqueue([{ ...first, payload: '{}' }, delivery('evt_2', 'we_1')])).toBe(1)
      expect(await queue.get('evt_1', 'we_1')).toEqual({
        ...first,
        status: 'pending',
        attempts: 0,
        log: [],
        updatedAt: T0,
      })
    })

    test('50 concurrent claims never lease one delivery twice, and together take them all', async () => {
      const queue = await fresh()
      const count = 200
      await queue.enqueue(
        Array.from({ length: count }, (_, i) => delivery(`evt_${i}`, `we_${i % 7}`, T0 + i)),
      )
      const batches = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          queue.claim({
            now: T0 + count,
            limit: 5,
            leaseMs: LEASE,
            ...(i % 2 ? { perEndpoint: 3 } : {}),
          }),
        ),
      )
      const leased = batches.flat().map((d) => `${d.eventId}/${d.endpointId}`)
      expect(new Set(leased).size).toBe(leased.length)
      const leases = batches.flat().map((d) => d.lease)
      expect(new Set(leases).size).toBe(leases.length)
      // What no claim got (rows skipped while locked) is still there for the next one.
      const rest = await queue.claim({ now: T0 + count, limit: count, leaseMs: LEASE })
      expect(leased.length + rest.length).toBe(count)
    })

    test('perEndpoint counts unexpired leases, and a long backlog does not hold back other endpoints', async () => {
      const queue = await fresh()
      // we_a: 100 deliveries due first; we_b: 5 due later.
      await queue.enqueue(
        Array.from({ length: 100 }, (_, i) => delivery(`evt_a${i}`, 'we_a', T0 + i)),
      )
      await queue.enqueue(
        Array.from({ length: 5 }, (_, i) => delivery(`evt_b${i}`, 'we_b', T0 + 1000 + i)),
      )
      const now = T0 + 2000
      const first = await queue.claim({ now, limit: 10, leaseMs: LEASE, perEndpoint: 4 })
      expect(first.map((d) => d.eventId)).toEqual([
        'evt_a0',
        'evt_a1',
        'evt_a2',
        'evt_a3',
        'evt_b0',
        'evt_b1',
        'evt_b2',
        'evt_b3',
      ])
      // Both endpoints are at their limit while the leases hold.
      expect(await queue.claim({ now, limit: 10, leaseMs: LEASE, perEndpoint: 4 })).toEqual([])
      // One settled: room for one more of we_a.
      await queue.settle(first[0]!, attempt(0, now, 200), { status: 'succeeded' }, now)
      const one = await queue.claim({ now, limit: 10, leaseMs: LEASE, perEndpoint: 4 })
      expect(one.map((d) => d.eventId)).toEqual(['evt_a4'])
      // Past the leases' expiry they no longer count, and their deliveries are claimable again.
      const later = await queue.claim({
        now: now + LEASE,
        limit: 10,
        leaseMs: LEASE,
        perEndpoint: 4,
      })
      expect(later.map((d) => d.eventId).sort()).toEqual(
        ['evt_a1', 'evt_a2', 'evt_a3', 'evt_a4', 'evt_b0', 'evt_b1', 'evt_b2', 'evt_b3'].sort(),
      )
    })

    test('settle holds only with the lease, until it expires; an expired lease is claimed again with a new one', async () => {
      const queue = await fresh()
      await queue.enqueue([delivery('evt_1', 'we_1')])
      const [leased] = await queue.claim({ now: T0, limit: 1, leaseMs: LEASE })
      expect(leased).toMatchObject({ eventId: 'evt_1', leaseExpiresAt: T0 + LEASE })
      // Wrong token: nothing written.
      expect(
        await queue.settle({ ...leased!, lease: 'forged' }, attempt(0, T0), { status: 'dead' }, T0),
      ).toBe(false)
      // At the expiry the lease no longer holds.
      expect(await queue.settle(leased!, attempt(0, T0), { status: 'succeeded' }, T0 + LEASE)).toBe(
        false,
      )
      expect(await queue.get('evt_1', 'we_1')).toMatchObject({
        status: 'pending',
        attempts: 0,
        log: [],
      })
      const [again] = await queue.claim({ now: T0 + LEASE, limit: 1, leaseMs: LEASE })
      expect(again!.lease).not.toBe(leased!.lease)
      expect(await queue.release(leased!)).toBe(false)
      expect(await queue.settle(leased!, attempt(0, T0), { status: 'dead' }, T0 + 1)).toBe(false)
      expect(
        await queue.settle(
          again!,
          attempt(0, T0 + LEASE, 500),
          { status: 'pending', nextAttemptAt: T0 + 2 * LEASE },
          T0 + LEASE + 1,
        ),
      ).toBe(true)
      expect(await queue.get('evt_1', 'we_1')).toMatchObject({
        status: 'pending',
        attempts: 1,
        nextAttemptAt: T0 + 2 * LEASE,
        updatedAt: T0 + LEASE + 1,
        log: [attempt(0, T0 + LEASE, 500)],
      })
      // Not due yet.
      expect(await queue.claim({ now: T0 + 2 * LEASE - 1, limit: 1, leaseMs: LEASE })).toEqual([])
      // The lease ended with the settle: a second settle with it writes nothing.
      expect(await queue.settle(again!, attempt(1, T0), { status: 'dead' }, T0 + LEASE + 2)).toBe(
        false,
      )
    })

    test('release gives the lease back, due as it was or at the time given', async () => {
      const queue = await fresh()
      await queue.enqueue([delivery('evt_1', 'we_1'), delivery('evt_2', 'we_1')])
      const [a, b] = await queue.claim({ now: T0, limit: 2, leaseMs: LEASE })
      expect(await queue.release(a!)).toBe(true)
      expect(await queue.release(a!)).toBe(false)
      expect(await queue.release(b!, T0 + 5000)).toBe(true)
      expect(
        (await queue.claim({ now: T0, limit: 2, leaseMs: LEASE })).map((d) => d.eventId),
      ).toEqual([a!.eventId])
      expect(await queue.get(b!.eventId, 'we_1')).toMatchObject({
        nextAttemptAt: T0 + 5000,
        attempts: 0,
      })
    })

    /** A queue on the table of the last `fresh()`, its statements counted. */
    const countedOn = () => {
      const counted = counting(db)
      const queue = new PostgresDeliveryQueue({
        db: counted.db,
        schema,
        tablePrefix: `q${n - 1}_`,
        clock: () => T0,
      })
      return { queue, statements: counted.statements }
    }

    test('concurrent settles go together: the first alone, those issued meanwhile in one statement, each with its own result', async () => {
      const queue = await fresh()
      await queue.enqueue(Array.from({ length: 40 }, (_, i) => delivery(`evt_${i}`, `we_${i % 4}`)))
      const leased = await queue.claim({ now: T0, limit: 40, leaseMs: LEASE })
      const { queue: on, statements } = countedOn()
      const results = await Promise.all(
        leased.map((d, i) =>
          on.settle(
            d,
            attempt(0, T0 + i, i % 2 === 0 ? 200 : 503),
            i % 2 === 0 ? { status: 'succeeded' } : { status: 'pending', nextAttemptAt: T0 + i },
            T0 + 100 + i,
          ),
        ),
      )
      expect(results).toEqual(leased.map(() => true))
      // 40 settles, two statements (two commits) instead of 40.
      expect(statements).toEqual(['UPDATE', 'UPDATE'])
      for (const [i, d] of leased.entries()) {
        expect(await queue.get(d.eventId, d.endpointId)).toMatchObject({
          status: i % 2 === 0 ? 'succeeded' : 'pending',
          attempts: 1,
          nextAttemptAt: i % 2 === 0 ? d.nextAttemptAt : T0 + i,
          updatedAt: T0 + 100 + i,
          log: [attempt(0, T0 + i, i % 2 === 0 ? 200 : 503)],
        })
      }
      // Nothing left leased: every settle ended its lease.
      expect(await queue.claim({ now: T0 + 100, limit: 40, leaseMs: LEASE })).toHaveLength(20)
    })

    test('a stale lease in a batch gets false, the others of the batch true', async () => {
      const queue = await fresh()
      await queue.enqueue(Array.from({ length: 6 }, (_, i) => delivery(`evt_${i}`, 'we_1')))
      const leased = await queue.claim({ now: T0, limit: 6, leaseMs: LEASE })
      const { queue: on, statements } = countedOn()
      // The first goes alone; the five others together, the third of them with a token that
      // is not its lease, the fourth past its lease's expiry.
      const results = await Promise.all(
        leased.map((d, i) =>
          on.settle(
            i === 3 ? { ...d, lease: `${d.lease}x` } : d,
            attempt(0, T0),
            { status: 'succeeded' },
            i === 4 ? T0 + LEASE : T0 + 1,
          ),
        ),
      )
      expect(results).toEqual([true, true, true, false, false, true])
      expect(statements).toEqual(['UPDATE', 'UPDATE'])
      expect(await queue.get(leased[3]!.eventId, 'we_1')).toMatchObject({
        status: 'pending',
        attempts: 0,
        log: [],
      })
      expect(await queue.get(leased[5]!.eventId, 'we_1')).toMatchObject({ status: 'succeeded' })
    })

    test('settles of one lease in one batch: exactly one is true, the delivery settled once', async () => {
      const queue = await fresh()
      await queue.enqueue([delivery('evt_1', 'we_1'), delivery('evt_2', 'we_1')])
      const [a, b] = await queue.claim({ now: T0, limit: 2, leaseMs: LEASE })
      const { queue: on, statements } = countedOn()
      // b goes alone first; the 20 settles of a go in the next statement together.
      const results = await Promise.all([
        on.settle(b!, attempt(0, T0), { status: 'succeeded' }, T0 + 1),
        ...Array.from({ length: 20 }, (_, i) =>
          on.settle(a!, attempt(i, T0), { status: 'dead' }, T0 + 1),
        ),
      ])
      expect(statements).toEqual(['UPDATE', 'UPDATE'])
      expect(results[0]).toBe(true)
      expect(results.slice(1).filter(Boolean)).toHaveLength(1)
      const settled = await queue.get('evt_1', 'we_1')
      expect(settled).toMatchObject({ status: 'dead', attempts: 1 })
      expect(settled!.log).toHaveLength(1)
    })

    test('a batch is bounded: 300 concurrent settles take 1 + 256 + 43', async () => {
      const queue = await fresh()
      await queue.enqueue(Array.from({ length: 300 }, (_, i) => delivery(`evt_${i}`, 'we_1')))
      const leased = await queue.claim({ now: T0, limit: 300, leaseMs: LEASE })
      const { queue: on, statements } = countedOn()
      const results = await Promise.all(
        leased.map((d) => on.settle(d, attempt(0, T0, 200), { status: 'succeeded' }, T0 + 1)),
      )
      expect(results.every(Boolean)).toBe(true)
      expect(statements).toEqual(['UPDATE', 'UPDATE', 'UPDATE'])
    })

    test('concurrent releases go together too, each with its own result', async () => {
      const queue = await fresh()
      await queue.enqueue(Array.from({ length: 5 }, (_, i) => delivery(`evt_${i}`, 'we_1')))
      const leased = await queue.claim({ now: T0, limit: 5, leaseMs: LEASE })
      const { queue: on, statements } = countedOn()
      const results = await Promise.all(
        leased.map((d, i) =>
          on.release(i === 2 ? { ...d, lease: 'forged' } : d, i === 4 ? T0 + 5000 : undefined),
        ),
      )
      expect(results).toEqual([true, true, false, true, true])
      expect(statements).toEqual(['UPDATE', 'UPDATE'])
      expect(
        (await queue.claim({ now: T0, limit: 5, leaseMs: LEASE })).map((d) => d.eventId),
      ).toEqual([leased[0]!.eventId, leased[1]!.eventId, leased[3]!.eventId])
      expect(await queue.get(leased[4]!.eventId, 'we_1')).toMatchObject({
        nextAttemptAt: T0 + 5000,
      })
    })

    test('a failing batch rejects every one of its settles; the next batch goes on', async () => {
      // A table that was never created: each statement fails, on the server, as a whole.
      const counted = counting(db)
      const missing = new PostgresDeliveryQueue({
        db: counted.db,
        schema,
        tablePrefix: 'never_migrated_',
      })
      const queue = await fresh()
      await queue.enqueue([delivery('evt_1', 'we_1')])
      const [leased] = await queue.claim({ now: T0, limit: 1, leaseMs: LEASE })
      const outcomes = await Promise.allSettled(
        Array.from({ length: 5 }, () =>
          missing.settle(leased!, attempt(0, T0), { status: 'succeeded' }, T0 + 1),
        ),
      )
      expect(counted.statements).toEqual(['UPDATE', 'UPDATE'])
      for (const outcome of outcomes) {
        expect(outcome).toMatchObject({
          status: 'rejected',
          reason: { code: 'NOT_MIGRATED', operation: 'webhook-deliveries.settle' },
        })
      }
      // The queue is not stuck: the next settle runs.
      expect(await queue.settle(leased!, attempt(0, T0), { status: 'succeeded' }, T0 + 1)).toBe(
        true,
      )
    })

    test('the attempt log keeps its last 50 lines; attempts counts them all', async () => {
      const queue = await fresh()
      await queue.enqueue([delivery('evt_1', 'we_1')])
      for (let i = 0; i < 55; i++) {
        const now = T0 + i * 10
        const [leased] = await queue.claim({ now, limit: 1, leaseMs: LEASE })
        const settled = await queue.settle(
          leased!,
          attempt(i, now),
          { status: 'pending', nextAttemptAt: now + 10 },
          now,
        )
        expect(settled).toBe(true)
      }
      const stored = await queue.get('evt_1', 'we_1')
      expect(stored!.attempts).toBe(55)
      expect(stored!.log).toHaveLength(50)
      expect(stored!.log.map((line) => line.attempt)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 5),
      )
    })

    test('list pages newest first, by (createdAt, eventId), in byte order whatever the collation', async () => {
      const queue = await fresh()
      // Same createdAt for the first four: the ids decide, in byte order ('B' < '_' < 'a').
      const ids = ['evt_a', 'evt_B', 'evt__', 'evt_b']
      await queue.enqueue([
        ...ids.map((id) => delivery(id, 'we_1')),
        delivery('evt_z', 'we_1', T0 - 1),
      ])
      await queue.enqueue([delivery('evt_other', 'we_2', T0 + 1)])
      const seen: string[] = []
      let after: { createdAt: number; eventId: string } | undefined
      for (;;) {
        const page = await queue.list({ endpointId: 'we_1', limit: 2, ...(after ? { after } : {}) })
        if (page.length === 0) break
        seen.push(...page.map((d) => d.eventId))
        const last = page.at(-1)!
        after = { createdAt: last.createdAt, eventId: last.eventId }
      }
      expect(seen).toEqual(['evt_b', 'evt_a', 'evt__', 'evt_B', 'evt_z'])
      const [leased] = await queue.claim({ now: T0, limit: 1, leaseMs: LEASE })
      await queue.settle(leased!, attempt(0, T0, 400), { status: 'failed' }, T0)
      expect(
        (await queue.list({ endpointId: 'we_1', status: 'failed', limit: 10 })).map(
          (d) => d.eventId,
        ),
      ).toEqual([leased!.eventId])
    })

    test('replay: one delivery of any status, an endpoint backlog, a time range; an unexpired lease of a pending one holds, any other ends', async () => {
      const queue = await fresh()
      await queue.enqueue([
        delivery('evt_1', 'we_1', T0),
        delivery('evt_2', 'we_1', T0 + 10),
        delivery('evt_3', 'we_2', T0 + 20),
        delivery('evt_4', 'we_2', T0 + 30),
      ])
      const leased = await queue.claim({ now: T0 + 30, limit: 4, leaseMs: LEASE })
      // evt_5's lease (10 ms) is over by the replays at T0 + 50.
      await queue.enqueue([delivery('evt_5', 'we_3', T0 + 30)])
      leased.push(...(await queue.claim({ now: T0 + 30, limit: 1, leaseMs: 10 })))
      const by = (id: string) => leased.find((d) => d.eventId === id)!
      await queue.settle(by('evt_1'), attempt(0, T0, 200), { status: 'succeeded' }, T0 + 40)
      await queue.settle(by('evt_2'), attempt(0, T0, 400), { status: 'failed' }, T0 + 40)
      await queue.settle(by('evt_3'), attempt(0, T0, 500), { status: 'dead' }, T0 + 40)
      // evt_4 and evt_5 stay leased (pending).
      expect(await queue.replay({ endpointId: 'we_1' }, T0 + 50)).toBe(1) // evt_2 only
      expect(await queue.replay({ from: T0 + 20, to: T0 + 21 }, T0 + 50)).toBe(1) // evt_3
      expect(await queue.replay({ from: T0 + 30, to: T0 + 40 }, T0 + 50)).toBe(0) // evt_4, evt_5 are pending
      expect(await queue.replay({ endpointId: 'we_3' }, T0 + 50)).toBe(0) // evt_5 is pending
      expect(await queue.replay({ eventId: 'evt_1', endpointId: 'we_1' }, T0 + 50)).toBe(1) // a succeeded one
      expect(await queue.replay({ eventId: 'evt_4', endpointId: 'we_2' }, T0 + 50)).toBe(1)
      expect(await queue.replay({ eventId: 'evt_5', endpointId: 'we_3' }, T0 + 50)).toBe(1)
      expect(await queue.replay({ eventId: 'evt_9', endpointId: 'we_2' }, T0 + 50)).toBe(0)
      for (const id of ['evt_1', 'evt_2']) {
        const stored = await queue.get(id, 'we_1')
        expect(stored).toMatchObject({ status: 'pending', attempts: 0, nextAttemptAt: T0 + 50 })
        expect(stored!.log).toHaveLength(1) // kept
      }
      // evt_4's lease was unexpired (an attempt in flight): it holds, so nobody else claims the
      // delivery meanwhile. evt_5's had expired: it ended, and the delivery is claimable at once.
      expect(
        (await queue.claim({ now: T0 + 50, limit: 10, leaseMs: LEASE }))
          .map((d) => d.eventId)
          .sort(),
      ).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_5'])
      expect(
        await queue.settle(by('evt_5'), attempt(0, T0), { status: 'succeeded' }, T0 + 51),
      ).toBe(false)
      // The holder's settle lands on the reset delivery: its line appended, 1 attempt.
      expect(
        await queue.settle(by('evt_4'), attempt(0, T0), { status: 'succeeded' }, T0 + 51),
      ).toBe(true)
      const evt4 = await queue.get('evt_4', 'we_2')
      expect(evt4).toMatchObject({ status: 'succeeded', attempts: 1, updatedAt: T0 + 51 })
      expect(evt4!.log).toHaveLength(1)
    })

    test('purge deletes final deliveries last changed before the time given, never pending ones', async () => {
      const queue = await fresh()
      await queue.enqueue(Array.from({ length: 7 }, (_, i) => delivery(`evt_${i}`, 'we_1')))
      const leased = await queue.claim({ now: T0, limit: 5, leaseMs: LEASE })
      const statuses = ['succeeded', 'failed', 'dead', 'succeeded'] as const
      for (const [i, status] of statuses.entries()) {
        await queue.settle(leased[i]!, attempt(0, T0, 200), { status }, T0 + i)
      }
      expect(await queue.purge(T0 + 3, { batchSize: 2 })).toBe(3)
      expect(await queue.purge(T0 + 1_000_000)).toBe(1)
      const left = await queue.list({ endpointId: 'we_1', limit: 10 })
      expect(left.map((d) => d.status)).toEqual(['pending', 'pending', 'pending'])
    })
  })
}

describe('the transactional outbox on PGlite', () => {
  test('a rolled-back transaction enqueues nothing; a committed one does', async () => {
    const db = new PGlite()
    try {
      const schema = testSchema()
      await migrate(db, { schema })
      const queue = new PostgresDeliveryQueue({ db, schema })
      await expect(
        db.transaction(async (tx) => {
          await queue.inTransaction(tx).enqueue([delivery('evt_1', 'we_1')])
          throw new Error('the order write failed')
        }),
      ).rejects.toThrow('the order write failed')
      expect(await queue.get('evt_1', 'we_1')).toBeUndefined()
      await db.transaction(async (tx) => {
        await queue.inTransaction(tx).enqueue([delivery('evt_2', 'we_1')])
      })
      expect(await queue.get('evt_2', 'we_1')).toMatchObject({ status: 'pending' })
    } finally {
      await db.close()
    }
  }, 30_000)
})

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? 'the transactional outbox on a server pool (skipped: DATABASE_URL not set)'
    : 'the transactional outbox on a server pool (DATABASE_URL)',
  () => {
    const schema = testSchema()
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 })
    afterAll(async () => {
      await dropSchema(pool, schema)
      await pool.end()
    })

    test('enqueued in a transaction: invisible to workers until it commits, gone if it rolls back', async () => {
      await migrate(pool, { schema })
      const queue = new PostgresDeliveryQueue({ db: pool, schema })
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        expect(await queue.inTransaction(client).enqueue([delivery('evt_1', 'we_1')])).toBe(1)
        // Not visible to a worker (another connection) before the commit.
        expect(await queue.claim({ now: T0, limit: 10, leaseMs: LEASE })).toEqual([])
        await client.query('COMMIT')
        const claimed = await queue.claim({ now: T0, limit: 10, leaseMs: LEASE })
        expect(claimed.map((d) => d.eventId)).toEqual(['evt_1'])
        await client.query('BEGIN')
        await queue.inTransaction(client).enqueue([delivery('evt_2', 'we_1')])
        await client.query('ROLLBACK')
      } finally {
        client.release()
      }
      expect(await queue.get('evt_2', 'we_1')).toBeUndefined()
    })
  },
)
