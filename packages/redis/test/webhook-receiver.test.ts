// The webhook receiver of @api-blocks/webhooks on RedisDedupStore, end to end: the sender signs
// and POSTs over a real socket to a node:http server that hands the request to the receiver.
// A delivery sent twice (a retry after a lost answer) runs the handler once, on two receiver
// instances sharing one Redis; a dedup store that fails answers 503 and runs nothing, so the
// sender retries.
import { once } from 'node:events'
import type { IncomingMessage, Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WebhookReceiver } from '@api-blocks/webhooks'
import {
  createEvent,
  createSsrfGuard,
  createWebhookReceiver,
  createWebhookSender,
} from '@api-blocks/webhooks'
import { createClient } from 'redis'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { RedisDedupStore } from '../src/dedup-store.ts'
import { clientOptions, deletePrefix, redisUrl, serverSuite, testPrefix } from './server.ts'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

/** Serves `receivers` on one port, in turn (a load balancer's round robin). */
async function serve(receivers: readonly WebhookReceiver[]): Promise<Server> {
  let next = 0
  const server = createServer(async (message: IncomingMessage, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of message) chunks.push(chunk as Buffer)
    const headers = new Headers()
    for (const [name, value] of Object.entries(message.headers)) {
      if (typeof value === 'string') headers.set(name, value)
    }
    const request = new Request(`http://127.0.0.1${message.url}`, {
      method: message.method ?? 'POST',
      headers,
      body: Buffer.concat(chunks),
    })
    const answer = await receivers[next++ % receivers.length]!.handle(request)
    response.writeHead(answer.status, Object.fromEntries(answer.headers))
    response.end(Buffer.from(await answer.arrayBuffer()))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return server
}

async function send(server: Server, event: ReturnType<typeof createEvent>) {
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const guard = createSsrfGuard({ allowedOrigins: [origin] })
  const sender = createWebhookSender({ guard, timeoutMs: 5_000 })
  try {
    return await sender.send({
      url: `${origin}/hooks`,
      eventId: event.id,
      payload: JSON.stringify(event),
      secrets: [SECRET],
    })
  } finally {
    await sender.close()
    await guard.close()
  }
}

test('a dedup store that fails: 503 problem, the handler does not run, the sender will retry', async () => {
  const failure = new Error('Socket closed unexpectedly')
  const dedup = new RedisDedupStore({
    client: { evalSha: () => Promise.reject(failure), eval: () => Promise.reject(failure) },
  })
  const handled: string[] = []
  const server = await serve([
    createWebhookReceiver({
      secrets: [SECRET],
      dedup,
      handler: (event) => void handled.push(event.id),
    }),
  ])
  try {
    const result = await send(
      server,
      createEvent({ type: 'order.created', object: { id: 'ord_1' } }),
    )
    expect(result).toMatchObject({ kind: 'response', status: 503 })
    // The claim failed before anything was scheduled: nothing can run later either.
    expect(handled).toEqual([])
  } finally {
    server.close()
  }
})

describe.skipIf(redisUrl === undefined)(
  serverSuite('the webhook receiver on RedisDedupStore'),
  () => {
    const client = createClient(clientOptions)
    client.on('error', () => {}) // failures reach the tests as rejections
    const prefix = testPrefix('webhook-receiver')

    beforeAll(async () => {
      await client.connect()
    })
    afterAll(async () => {
      await deletePrefix(client, prefix)
      client.destroy()
    })

    test('a delivery sent twice, to two instances sharing Redis: 200 both times, the handler runs once', async () => {
      const handled: string[] = []
      const receiver = () =>
        createWebhookReceiver({
          secrets: [SECRET],
          dedup: new RedisDedupStore({ client, prefix }),
          handler: (event) => void handled.push(event.id),
        })
      const server = await serve([receiver(), receiver()])
      try {
        const event = createEvent({ type: 'order.created', object: { id: 'ord_1' } })
        expect(await send(server, event)).toMatchObject({ kind: 'response', status: 200 })
        expect(await send(server, event)).toMatchObject({ kind: 'response', status: 200 })
        const other = createEvent({ type: 'order.created', object: { id: 'ord_2' } })
        expect(await send(server, other)).toMatchObject({ kind: 'response', status: 200 })
        await expect.poll(() => handled.length).toBe(2)
        expect(handled).toEqual([event.id, other.id])
        expect(await client.exists(`${prefix}${event.id}`)).toBe(1)
      } finally {
        server.close()
      }
    })
  },
)
