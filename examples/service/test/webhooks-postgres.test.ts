// The service's webhooks on PostgreSQL (DATABASE_URL): endpoints and deliveries in the
// database, each order write enqueueing its deliveries in its own transaction (the
// transactional outbox), and every instance's worker delivering from the one queue.
import type { DeliveryWorkerEvent } from '@api-blocks/webhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { clientCredentialsToken } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'
import type { TestReceiver } from './webhook-receivers.ts'
import { eventOf, startTestReceiver } from './webhook-receivers.ts'

const databaseUrl = process.env['DATABASE_URL'] || undefined
const ALL = 'read:orders write:orders manage:webhooks'
const order = { customer: 'Ada Lovelace', items: [{ sku: 'BOOK-042', quantity: 2 }] }

describe.skipIf(!databaseUrl)(
  `webhooks on PostgreSQL${databaseUrl ? '' : ' (skipped: DATABASE_URL not set)'}`,
  () => {
    const schema = `service_webhooks_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    const attempts: { instance: string; event: DeliveryWorkerEvent }[] = []
    let receiver: TestReceiver
    let a: RunningService
    let b: RunningService
    // A token per instance: each is its own issuer (its public URL), on one shared OAuth store.
    const tokens = new Map<string, string>()

    const instance = (name: string) =>
      serveOnStores(
        { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema },
        {
          service: {
            rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }],
          },
          webhooks: {
            settings: {
              retry: { baseMs: 5, maxMs: 20, maxAttempts: 3 },
              timeoutMs: 2_000,
              allowedOrigins: [receiver.origin],
            },
            pollIntervalMs: 20,
            onEvent: (event) => attempts.push({ instance: name, event }),
          },
        },
      )

    beforeAll(async () => {
      receiver = await startTestReceiver()
      a = await instance('a')
      b = await instance('b')
      for (const running of [a, b]) {
        tokens.set(running.base, await clientCredentialsToken(fetch, running.base, ALL))
      }
    })

    afterAll(async () => {
      await a?.close()
      await b?.close()
      await receiver?.close()
      const pg = (await import('pg')).default
      const admin = new pg.Client({ connectionString: databaseUrl })
      await admin.connect()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    })

    const call = (base: string, path: string, init: { method?: string; body?: unknown } = {}) =>
      fetch(`${base}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          authorization: `Bearer ${tokens.get(base)}`,
          ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      })

    async function register(base: string, url: string): Promise<{ id: string; secret: string }> {
      const response = await call(base, '/v1/webhook_endpoints', { method: 'POST', body: { url } })
      const body = await response.json()
      expect(response.status, JSON.stringify(body)).toBe(201)
      return body
    }

    test('the secret shown once is stored sealed, never as the whsec_ text', async () => {
      const endpoint = await register(a.base, `${receiver.origin}/ok?sealed`)
      expect(endpoint.secret).toMatch(/^whsec_/)
      const pg = (await import('pg')).default
      const admin = new pg.Client({ connectionString: databaseUrl })
      await admin.connect()
      try {
        const { rows } = await admin.query(
          `SELECT secrets::text AS secrets FROM ${schema}.api_blocks_webhook_endpoints WHERE id = $1`,
          [endpoint.id],
        )
        expect(rows).toHaveLength(1)
        const stored = String(rows[0].secrets)
        expect(stored).not.toContain(endpoint.secret)
        expect(stored).not.toContain(endpoint.secret.slice('whsec_'.length))
        expect(stored).not.toContain('whsec_')
      } finally {
        await admin.end()
      }
    })

    test('an endpoint registered on one instance is read, listed and used by the other', async () => {
      const endpoint = await register(a.base, `${receiver.origin}/ok?shared`)
      const read = await call(b.base, `/v1/webhook_endpoints/${endpoint.id}`)
      expect(read.status).toBe(200)
      const created = await call(b.base, '/v1/orders', { method: 'POST', body: order })
      const { id } = await created.json()
      const delivered = await receiver.waitFor(
        (request) => request.path === '/ok?shared' && eventOf(request).data.object['id'] === id,
      )
      expect(eventOf(delivered).type).toBe('order.created')
      // The deliveries list (cursor on the queue's order) and a redelivery, from either side.
      const path = `/v1/webhook_endpoints/${endpoint.id}/deliveries`
      let listed: { data: { event_id: string; status: string }[] } = { data: [] }
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline) {
        listed = await (await call(a.base, path)).json()
        if (listed.data[0]?.status === 'succeeded') break
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(listed.data).toMatchObject([
        { event_id: delivered.headers['webhook-id'], status: 'succeeded' },
      ])
      const before = receiver.received.length
      const again = await call(b.base, `${path}/${listed.data[0]?.event_id}/redeliver`, {
        method: 'POST',
      })
      expect(again.status).toBe(202)
      const repeat = await receiver.waitFor(
        (request) => request.headers['webhook-id'] === delivered.headers['webhook-id'],
        { from: before },
      )
      expect(repeat.body).toBe(delivered.body)
    })

    test('an order write whose transaction rolls back enqueues nothing; one that commits enqueues its event', async () => {
      const endpoint = await register(a.base, `${receiver.origin}/ok?outbox`)
      const store = a.stores.orderStore!
      let ordered: string | undefined
      // The answer fails inside the write's transaction (as a lost Idempotency-Key lease does):
      // the INSERT and the deliveries enqueued with it roll back together.
      await expect(
        store.create(order, async (created) => {
          ordered = created.id
          throw new Error('the answer could not be completed')
        }),
      ).rejects.toThrow('the answer could not be completed')
      expect(ordered).toBeDefined()
      expect(await store.get(ordered as string)).toBeUndefined()
      const queue = a.stores.deliveryQueue!
      expect(await queue.list({ endpointId: endpoint.id, limit: 10 })).toEqual([])
      // A conditional write that loses its race writes nothing and enqueues nothing either.
      const committed = await store.create(order, async (created) => created)
      expect(await store.update({ ...committed, version: 99 }, { note: 'x' })).toBeUndefined()
      const enqueued = await queue.list({ endpointId: endpoint.id, limit: 10 })
      expect(enqueued.map((delivery) => delivery.eventType)).toEqual(['order.created'])
      expect(JSON.parse(enqueued[0]!.payload).data.object).toEqual(committed)
    })

    test('two instances deliver from one queue: every event at least once, none lost', async () => {
      await register(a.base, `${receiver.origin}/ok?many`)
      attempts.length = 0
      const ids: string[] = []
      const writes = Array.from({ length: 40 }, async (_, index) => {
        const response = await call(index % 2 === 0 ? a.base : b.base, '/v1/orders', {
          method: 'POST',
          body: order,
        })
        expect(response.status).toBe(201)
        ids.push(((await response.json()) as { id: string }).id)
      })
      await Promise.all(writes)
      const received = () =>
        new Set(
          receiver.received
            .filter((request) => request.path === '/ok?many' && request.status === 200)
            .map((request) => eventOf(request).data.object['id'] as string),
        )
      const deadline = Date.now() + 20_000
      while (received().size < ids.length && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect([...received()].sort()).toEqual([...ids].sort())
      // Which worker sent what: both instances claim from the queue; report the split.
      const byInstance = { a: 0, b: 0 }
      for (const { instance: name, event } of attempts) {
        if (event.type === 'attempt' && event.resolution.status === 'succeeded') {
          byInstance[name as 'a' | 'b'] += 1
        }
      }
      expect(byInstance.a + byInstance.b).toBeGreaterThanOrEqual(ids.length)
      console.log(`deliveries of 40 events by instance: ${JSON.stringify(byInstance)}`)
    })
  },
)
