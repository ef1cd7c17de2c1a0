// The attempt log keeps whatever text a receiver answered: PostgreSQL's jsonb refuses the
// escape \u0000 and lone surrogates, so a body or failure with them is stored with U+FFFD in
// their place, and the settle succeeds (before, it threw, and the delivery stayed pending with
// no attempt, redelivered forever). On PGlite and, when DATABASE_URL is set, on a server pool.
import type { AttemptRecord } from '@api-blocks/webhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate } from '../src/migrations.ts'
import type { Queryable } from '../src/queryable.ts'
import { PostgresDeliveryQueue } from '../src/webhook-delivery-queue.ts'
import { backends, dropSchema, testSchema } from './databases.ts'

const NOW = 1_700_000_000_000

for (const backend of backends) {
  describe.skipIf(!backend.enabled)(`the attempt log's text on ${backend.title}`, () => {
    const schema = testSchema()
    let db: Queryable
    let close: () => Promise<void>
    let queue: PostgresDeliveryQueue

    beforeAll(async () => {
      ;({ db, close } = await backend.open())
      await migrate(db, { schema, tablePrefix: 'log_text_' })
      queue = new PostgresDeliveryQueue({ db, schema, tablePrefix: 'log_text_' })
    }, 30_000) // starting PGlite takes seconds on a busy machine
    afterAll(async () => {
      await dropSchema(db, schema)
      await close()
    })

    async function settled(eventId: string, line: Partial<AttemptRecord>) {
      await queue.enqueue([
        {
          eventId,
          endpointId: 'we_1',
          eventType: 'order.created',
          payload: '{}',
          createdAt: NOW,
          nextAttemptAt: NOW,
        },
      ])
      const leased = (await queue.claim({ now: NOW, limit: 10, leaseMs: 1000 })).find(
        (delivery) => delivery.eventId === eventId,
      )
      if (leased === undefined) throw new Error(`${eventId} was not claimed`)
      const attempt: AttemptRecord = {
        attempt: 0,
        at: NOW,
        latencyMs: 1,
        status: 200,
        failure: null,
        body: null,
        ...line,
      }
      expect(await queue.settle(leased, attempt, { status: 'succeeded' }, NOW + 1)).toBe(true)
      return queue.get(eventId, 'we_1')
    }

    it('stores a body with NUL with U+FFFD in its place', async () => {
      const delivery = await settled('evt_nul', { body: 'ok\u0000' })
      expect(delivery?.status).toBe('succeeded')
      expect(delivery?.attempts).toBe(1)
      expect(delivery?.log.map((line) => line.body)).toEqual(['ok\uFFFD'])
    })

    it('stores lone surrogates in the body and the failure with U+FFFD in their place', async () => {
      const delivery = await settled('evt_surrogate', {
        status: null,
        failure: 'connection\uDC00',
        body: 'x\uD800 y\uDBFF\uDFFF z\uDFFF\u0000',
      })
      expect(delivery?.status).toBe('succeeded')
      expect(delivery?.attempts).toBe(1)
      // A well-formed pair (U+10FFFF) is kept.
      expect(delivery?.log).toEqual([
        expect.objectContaining({
          failure: 'connection\uFFFD',
          body: 'x\uFFFD y\uDBFF\uDFFF z\uFFFD\uFFFD',
        }),
      ])
    })
  })
}
