// The sending side and the receiving side of the package together, over a real socket:
// publisher → memory queue → worker → sender (through the SSRF guard) → node:http →
// createWebhookReceiver (verify, dedup, handler). It shows at the wire what the parts promise
// one by one: a rotation signs with both secrets during the overlap (receivers holding either
// verify), only with the new one after; a redelivery keeps its webhook-id and the receiver's
// dedup answers it 200 without running the handler again.
import { once } from 'node:events'
import type { Server } from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeListener } from '@api-blocks/node'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createEvent } from '../src/event.ts'
import { MemoryDeliveryQueue } from '../src/memory/delivery-queue.ts'
import { MemoryEndpointStore } from '../src/memory/endpoint-store.ts'
import { createWebhookPublisher } from '../src/publisher.ts'
import { createWebhookReceiver } from '../src/receiver.ts'
import { createEndpointRegistry } from '../src/registry.ts'
import { createRetryPolicy } from '../src/retry-policy.ts'
import { createWebhookSender } from '../src/sender.ts'
import type { SsrfGuard } from '../src/ssrf/guard.ts'
import { createSsrfGuard } from '../src/ssrf/guard.ts'
import { createDeliveryWorker } from '../src/worker.ts'

const T0 = 1_764_460_800_000
let now = T0
const clock = () => now

/** Receivers by path, each holding its own secrets; what their handlers saw. */
const secretsOf = new Map<string, string[]>()
const handled: { path: string; id: string }[] = []
const receivers = new Map<string, ReturnType<typeof createWebhookReceiver>>()
let server: Server
let origin: string
let guard: SsrfGuard

function receiverFor(path: string) {
  let receiver = receivers.get(path)
  if (receiver === undefined) {
    receiver = createWebhookReceiver({
      secrets: secretsOf.get(path)!,
      clock,
      handler: (event) => {
        handled.push({ path, id: event.id })
      },
    })
    receivers.set(path, receiver)
  }
  return receiver
}

beforeAll(async () => {
  server = createServer(
    toNodeListener((request) => receiverFor(new URL(request.url).pathname).handle(request)),
  )
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  guard = createSsrfGuard({ allowedOrigins: [origin] })
})
afterAll(async () => {
  await guard.close()
  server.close()
})

function system(encryptionKey?: Uint8Array) {
  const registry = createEndpointRegistry({
    store: new MemoryEndpointStore(),
    guard,
    clock,
    rotationOverlapMs: 3_600_000,
    ...(encryptionKey === undefined ? {} : { encryptionKey }),
  })
  const queue = new MemoryDeliveryQueue({ clock })
  const publisher = createWebhookPublisher({ registry, queue, clock })
  const worker = createDeliveryWorker({
    queue,
    registry,
    sender: createWebhookSender({ guard, clock }),
    policy: createRetryPolicy({ baseMs: 1_000, maxMs: 1_000, maxAttempts: 3, random: () => 0.5 }),
    clock,
  })
  return { registry, queue, publisher, worker }
}

async function send(world: ReturnType<typeof system>, endpointId: string) {
  const event = createEvent({ type: 'order.created', object: { id: 'ord_1' } }, { clock })
  await world.publisher.publish(event)
  expect(await world.worker.tick()).toBe(1)
  return { event, delivery: (await world.queue.get(event.id, endpointId))! }
}

describe('sender to receiver', () => {
  it('a rotation: both secrets sign during the overlap, the new one alone after it', async () => {
    const world = system(new Uint8Array(32).fill(3)) // secrets sealed at rest on the way
    const { endpoint, secret: first } = await world.registry.create({ url: `${origin}/rotation` })
    const { secret: second } = await world.registry.rotateSecret(endpoint.id)
    function receiverHolds(secret: string) {
      secretsOf.set('/rotation', [secret])
      receivers.delete('/rotation')
    }
    // Within the overlap, a receiver holding either secret verifies.
    receiverHolds(first)
    expect((await send(world, endpoint.id)).delivery.status).toBe('succeeded')
    receiverHolds(second)
    expect((await send(world, endpoint.id)).delivery.status).toBe('succeeded')
    now += 3_599_999
    receiverHolds(first)
    expect((await send(world, endpoint.id)).delivery.status).toBe('succeeded')
    // After it, only the new secret signs: the old receiver refuses (400, a permanent failure).
    now += 1
    const after = await send(world, endpoint.id)
    expect(after.delivery.status).toBe('failed')
    expect(after.delivery.log[0]).toMatchObject({ status: 400 })
    receiverHolds(second)
    expect(
      await world.queue.replay({ eventId: after.event.id, endpointId: endpoint.id }, now),
    ).toBe(1)
    expect(await world.worker.tick()).toBe(1)
    expect((await world.queue.get(after.event.id, endpoint.id))?.status).toBe('succeeded')
  })

  it('a redelivery keeps its webhook-id; the receiver answers 200 and does not handle it twice', async () => {
    now = T0
    const world = system()
    const { endpoint, secret } = await world.registry.create({ url: `${origin}/dedup` })
    secretsOf.set('/dedup', [secret])
    const { event, delivery } = await send(world, endpoint.id)
    expect(delivery.status).toBe('succeeded')
    await vi.waitFor(() => expect(handled.filter((h) => h.path === '/dedup')).toHaveLength(1))
    for (let i = 0; i < 3; i++) {
      expect(await world.queue.replay({ eventId: event.id, endpointId: endpoint.id }, now)).toBe(1)
      expect(await world.worker.tick()).toBe(1)
    }
    const redelivered = await world.queue.get(event.id, endpoint.id)
    expect(redelivered?.log.map((line) => line.status)).toEqual([200, 200, 200, 200])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(handled.filter((h) => h.path === '/dedup')).toEqual([{ path: '/dedup', id: event.id }])
  })
})
