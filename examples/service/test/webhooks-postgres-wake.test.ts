// On PostgreSQL an order write enqueues its deliveries in its transaction; once it commits, the
// instance's worker is woken, so the event leaves at once: with a poll of a minute, it still
// reaches the receiver within the receiver's wait (10 s), where without the wake it would wait
// for the next poll.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { clientCredentialsToken } from './oauth-client.ts'
import type { RunningService } from './serve-on-stores.ts'
import { serveOnStores } from './serve-on-stores.ts'
import type { TestReceiver } from './webhook-receivers.ts'
import { eventOf, startTestReceiver } from './webhook-receivers.ts'

const databaseUrl = process.env['DATABASE_URL'] || undefined

describe.skipIf(!databaseUrl)(
  `the worker woken after an order commits on PostgreSQL${databaseUrl ? '' : ' (skipped: DATABASE_URL not set)'}`,
  () => {
    const schema = `service_wake_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
    let receiver: TestReceiver
    let running: RunningService
    let token: string

    beforeAll(async () => {
      receiver = await startTestReceiver()
      running = await serveOnStores(
        { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema },
        {
          service: { rateLimits: [{ name: 'tests', quota: 1_000_000, windowSeconds: 1 }] },
          webhooks: {
            settings: {
              retry: { baseMs: 5, maxMs: 20, maxAttempts: 3 },
              timeoutMs: 2_000,
              allowedOrigins: [receiver.origin],
            },
            // Far longer than the receiver waits: only a wake sends the event in time.
            pollIntervalMs: 60_000,
          },
        },
      )
      token = await clientCredentialsToken(
        fetch,
        running.base,
        'read:orders write:orders manage:webhooks',
      )
    })

    afterAll(async () => {
      await running?.close()
      await receiver?.close()
      const pg = (await import('pg')).default
      const admin = new pg.Client({ connectionString: databaseUrl })
      await admin.connect()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    })

    const call = (path: string, body: unknown) =>
      fetch(`${running.base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })

    test('an order’s event reaches the receiver without waiting for the poll', async () => {
      const registered = await call('/v1/webhook_endpoints', { url: `${receiver.origin}/ok?wake` })
      expect(registered.status).toBe(201)
      const created = await call('/v1/orders', {
        customer: 'Ada Lovelace',
        items: [{ sku: 'BOOK-042', quantity: 1 }],
      })
      expect(created.status).toBe(201)
      const { id } = (await created.json()) as { id: string }
      const delivered = await receiver.waitFor(
        (request) =>
          request.path === '/ok?wake' &&
          eventOf(request).type === 'order.created' &&
          eventOf(request).data.object['id'] === id,
        { timeoutMs: 10_000 },
      )
      expect(eventOf(delivered).data.object['id']).toBe(id)
    }, 20_000)
  },
)
