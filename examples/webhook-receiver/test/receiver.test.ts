// The receiver over a real socket, fed by the library's own sender (signed POSTs through the
// SSRF guard, the receiver's loopback origin allowed): each event logged once, a repeated
// webhook-id answered 200 and not logged again, a bad signature or a stale timestamp 400.
import { createEvent, createSsrfGuard, createWebhookSender } from '@api-blocks/webhooks'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { parseSecrets } from '../src/config.ts'
import type { RunningReceiver } from '../src/server.ts'
import { startReceiver } from '../src/server.ts'

const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`
const lines: string[] = []
let receiver: RunningReceiver

beforeAll(async () => {
  receiver = await startReceiver({
    secrets: [secret],
    port: 0,
    host: '127.0.0.1',
    log: (line) => lines.push(line),
  })
})
afterAll(() => receiver?.close())

const order = { id: 'ord_1', status: 'open', version: 1, customer: 'Ada Lovelace' }

async function logged(count: number): Promise<string[]> {
  const deadline = Date.now() + 5_000
  while (lines.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return lines
}

test('each event is verified and logged once; a repeat answers 200 and is not logged again', async () => {
  const guard = createSsrfGuard({ allowedOrigins: [receiver.origin] })
  const sender = createWebhookSender({ guard })
  try {
    const event = createEvent({ type: 'order.created', object: order })
    const delivery = {
      url: `${receiver.origin}/webhooks`,
      eventId: event.id,
      payload: JSON.stringify(event),
      secrets: [secret],
    }
    const first = await sender.send(delivery)
    expect(first).toMatchObject({ kind: 'response', status: 200 })
    expect(await logged(1)).toHaveLength(1)
    expect(JSON.parse(lines[0] as string)).toEqual({
      event_id: event.id,
      type: 'order.created',
      created: event.created,
      order: { id: 'ord_1', status: 'open', version: 1 },
    })
    // The same event again (a retry, a redelivery): 200, no second line.
    const again = await sender.send(delivery)
    expect(again).toMatchObject({ kind: 'response', status: 200 })
    const next = createEvent({ type: 'order.updated', object: { ...order, version: 2 } })
    await sender.send({ ...delivery, eventId: next.id, payload: JSON.stringify(next) })
    expect(await logged(2)).toHaveLength(2)
    expect(lines.filter((line) => line.includes(event.id))).toHaveLength(1)

    // Signed with another secret: 400 before anything is parsed, nothing logged.
    const forged = createEvent({ type: 'order.created', object: order })
    const wrong = await sender.send({
      ...delivery,
      eventId: forged.id,
      payload: JSON.stringify(forged),
      secrets: [`whsec_${Buffer.alloc(32, 7).toString('base64')}`],
    })
    expect(wrong).toMatchObject({ kind: 'response', status: 400 })
    // Ten minutes old: past the 300 s tolerance.
    const stale = createWebhookSender({ guard, clock: () => Date.now() - 600_000 })
    const late = await stale.send({
      ...delivery,
      eventId: forged.id,
      payload: JSON.stringify(forged),
    })
    expect(late).toMatchObject({ kind: 'response', status: 400 })
    await stale.close()
    expect(lines.some((line) => line.includes(forged.id))).toBe(false)
  } finally {
    await sender.close()
    await guard.close()
  }
})

test('GET /webhooks is 405, /health 200, anything else 404', async () => {
  expect((await fetch(`${receiver.origin}/webhooks`)).status).toBe(405)
  expect((await fetch(`${receiver.origin}/health`)).status).toBe(200)
  expect((await fetch(`${receiver.origin}/elsewhere`)).status).toBe(404)
})

test('WEBHOOK_SECRET: one or several whsec_ secrets, nothing else; never quoted back', () => {
  expect(parseSecrets(`${secret}, ${secret.replace('whsec_', 'whsec_A')}`)).toHaveLength(2)
  for (const bad of [undefined, '', 'secret', 'whsec_short', `${secret},nope`]) {
    let message = ''
    try {
      parseSecrets(bad)
    } catch (error) {
      message = (error as Error).message
    }
    expect(message, String(bad)).toMatch(/^WEBHOOK_SECRET/)
    expect(message).not.toContain(secret.slice(6))
  }
})

const redisUrl = process.env['REDIS_URL']

describe.skipIf(!redisUrl)(
  `two receivers behind one URL share their dedup records in Redis${redisUrl ? '' : ' (skipped: REDIS_URL not set)'}`,
  () => {
    test('an event handled by one is answered 200 and not handled again by the other', async () => {
      const seen: string[] = []
      const options = {
        secrets: [secret],
        port: 0,
        host: '127.0.0.1',
        redisUrl,
        redisPrefix: `test:receiver:${crypto.randomUUID()}:`,
        log: (line: string) => seen.push(line),
      }
      const [a, b] = [await startReceiver(options), await startReceiver(options)]
      const guard = createSsrfGuard({ allowedOrigins: [a.origin, b.origin] })
      const sender = createWebhookSender({ guard })
      try {
        const event = createEvent({ type: 'order.created', object: order })
        const delivery = { eventId: event.id, payload: JSON.stringify(event), secrets: [secret] }
        const first = await sender.send({ ...delivery, url: `${a.origin}/webhooks` })
        const second = await sender.send({ ...delivery, url: `${b.origin}/webhooks` })
        expect([first, second]).toMatchObject([
          { kind: 'response', status: 200 },
          { kind: 'response', status: 200 },
        ])
        const deadline = Date.now() + 5_000
        while (seen.length === 0 && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
        // The handler runs after the answer: give a second (wrong) run the time to show.
        await new Promise((resolve) => setTimeout(resolve, 50))
        expect(seen.filter((line) => line.includes(event.id))).toHaveLength(1)
      } finally {
        await sender.close()
        await guard.close()
        await a.close()
        await b.close()
      }
    })
  },
)
