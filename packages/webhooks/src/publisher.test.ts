import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { DeliveryQueue, NewDelivery } from './delivery-queue.ts'
import { WebhookError } from './error.ts'
import type { WebhookEvent } from './event.ts'
import { createEvent } from './event.ts'
import { MemoryDeliveryQueue } from './memory/delivery-queue.ts'
import { MemoryEndpointStore } from './memory/endpoint-store.ts'
import { createWebhookPublisher } from './publisher.ts'
import { createEndpointRegistry } from './registry.ts'

const budget = { interruptAfterTimeLimit: 2000 }
/** Any UTF-16 text, lone surrogates included, with the UTF-8 length boundaries well represented. */
const utf16 = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 0xffff }),
      fc.constantFrom(0x7f, 0x80, 0x7ff, 0x800, 0xd83d, 0xde00, 0xdbff, 0xdc00, 0xfffd, 0xffff),
    ),
    { maxLength: 200 },
  )
  .map((codes) => String.fromCharCode(...codes))
const NOW = 1_764_460_800_000

function event(
  object: Record<string, unknown> = { id: 'ord_1' },
  type = 'order.created',
): WebhookEvent {
  return createEvent({ type, object, id: 'evt_1', created: 1_764_460_700 })
}

/** A queue that remembers what it was given, around a real one. */
function recording(queue: DeliveryQueue) {
  const batches: NewDelivery[][] = []
  return {
    batches,
    enqueue(deliveries: readonly NewDelivery[]) {
      batches.push([...deliveries])
      return queue.enqueue(deliveries)
    },
  }
}

async function setup() {
  const registry = createEndpointRegistry({ store: new MemoryEndpointStore(), clock: () => NOW })
  const queue = new MemoryDeliveryQueue()
  const publisher = createWebhookPublisher({ registry, queue, clock: () => NOW })
  return { registry, queue, publisher }
}

describe('createWebhookPublisher', () => {
  it('enqueues one delivery per enabled subscribed endpoint, the payload serialised once', async () => {
    const { registry, queue, publisher } = await setup()
    const all = (await registry.create({ url: 'https://a.example/' })).endpoint
    const orders = (await registry.create({ url: 'https://b.example/', events: ['order.created'] }))
      .endpoint
    const other = (await registry.create({ url: 'https://c.example/', events: ['order.deleted'] }))
      .endpoint
    const off = (await registry.create({ url: 'https://d.example/' })).endpoint
    await registry.setStatus(off.id, 'disabled', 'manual')

    const published = event({ id: 'ord_1', total: 'café 😀' })
    expect(await publisher.publish(published)).toBe(2)
    for (const endpoint of [all, orders]) {
      expect(await queue.get('evt_1', endpoint.id)).toMatchObject({
        eventId: 'evt_1',
        eventType: 'order.created',
        endpointId: endpoint.id,
        payload: JSON.stringify(published),
        createdAt: 1_764_460_700_000,
        nextAttemptAt: NOW,
        status: 'pending',
        attempts: 0,
      })
    }
    expect(await queue.get('evt_1', other.id)).toBeUndefined()
    expect(await queue.get('evt_1', off.id)).toBeUndefined()
    // Published again: enqueueing is idempotent.
    expect(await publisher.publish(published)).toBe(0)
  })

  it('checks the envelope first: EVENT_INVALID, nothing enqueued', async () => {
    const { registry, queue } = await setup()
    await registry.create({ url: 'https://a.example/' })
    const spy = recording(queue)
    const publisher = createWebhookPublisher({
      store: registry.store,
      queue: { enqueue: spy.enqueue },
    })
    const bad = { ...event(), type: 'Order Created' }
    const error = await publisher.publish(bad).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WebhookError)
    expect((error as WebhookError).code).toBe('EVENT_INVALID')
    expect(spy.batches).toEqual([])
  })

  it('checks what is sent, not the object: a toJSON that breaks the envelope is EVENT_INVALID', async () => {
    const { registry, queue, publisher } = await setup()
    const { endpoint } = await registry.create({ url: 'https://a.example/' })
    const sneaky = event({ id: 'ord_1', toJSON: () => 'ord_1' })
    const error = await publisher.publish(sneaky).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'EVENT_INVALID' })
    expect(await queue.get('evt_1', endpoint.id)).toBeUndefined()
    // A toJSON that keeps the envelope sound is sent as it serialises.
    const dated = event({ id: 'ord_1', at: new Date(0) })
    expect(await publisher.publish(dated)).toBe(1)
    expect(JSON.parse((await queue.get('evt_1', endpoint.id))!.payload).data.object.at).toBe(
      '1970-01-01T00:00:00.000Z',
    )
  })

  it('an event that does not serialise (a BigInt, a cycle) is EVENT_INVALID, not a TypeError', async () => {
    const { registry, publisher } = await setup()
    await registry.create({ url: 'https://a.example/' })
    const cyclic: { id: string; self?: unknown } = { id: 'ord_1' }
    cyclic.self = cyclic
    for (const object of [{ n: 1n }, cyclic]) {
      const error = await publisher.publish(event(object)).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(WebhookError)
      expect((error as WebhookError).code).toBe('EVENT_INVALID')
    }
  })

  it('an event id published again with another payload is EVENT_ID_REUSED, 409; the first stays', async () => {
    const { registry, queue, publisher } = await setup()
    const { endpoint } = await registry.create({ url: 'https://a.example/' })
    const first = event({ id: 'ord_1', v: 1 })
    expect(await publisher.publish(first)).toBe(1)
    const error = await publisher
      .publish(event({ id: 'ord_1', v: 2 }, 'order.updated'))
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WebhookError)
    expect((error as WebhookError).code).toBe('EVENT_ID_REUSED')
    expect((error as WebhookError).status).toBe(409)
    expect((await queue.get('evt_1', endpoint.id))!.payload).toBe(JSON.stringify(first))
    // The same event again is still an idempotent no-op.
    expect(await publisher.publish(first)).toBe(0)
  })

  it('refuses a payload over 256 KiB (in UTF-8 bytes) with BODY_TOO_LARGE, 413', async () => {
    const { registry, publisher } = await setup()
    await registry.create({ url: 'https://a.example/' })
    const empty = JSON.stringify(event({ text: '' })).length
    // 'é' is two bytes: the limit counts bytes, not characters.
    const fits = event({ text: 'a'.repeat(256 * 1024 - empty) })
    expect(await publisher.publish(fits)).toBe(1)
    const over = event({ text: 'é'.repeat((256 * 1024 - empty) / 2 + 1) })
    const error = (await publisher.publish(over).catch((e: unknown) => e)) as WebhookError
    expect(error.code).toBe('BODY_TOO_LARGE')
    expect(error.toProblem()).toMatchObject({ status: 413, max_bytes: 262_144 })
  })

  it('counts bytes as UTF-8 does, for any text (fast-check)', async () => {
    const { registry } = await setup()
    await registry.create({ url: 'https://a.example/' })
    const queue = { enqueue: async (deliveries: readonly NewDelivery[]) => deliveries.length }
    let n = 0
    await fc.assert(
      fc.asyncProperty(utf16, async (text) => {
        const published = createEvent({
          type: 'order.created',
          object: { text },
          id: `evt_${n++}`,
          created: 1,
        })
        const bytes = Buffer.byteLength(JSON.stringify(published))
        const exact = createWebhookPublisher({
          registry,
          queue,
          maxPayloadBytes: bytes,
        })
        if ((await exact.publish(published)) !== 1)
          throw new Error('not published at the exact limit')
        const under = createWebhookPublisher({
          registry,
          queue,
          maxPayloadBytes: bytes - 1,
        })
        const refused = await under.publish(published).then(
          () => false,
          (error: unknown) => error instanceof WebhookError && error.code === 'BODY_TOO_LARGE',
        )
        if (!refused) throw new Error(`not refused one byte under the limit (${bytes})`)
      }),
      budget,
    )
  })

  it('enqueues into the queue a publish names (the transactional outbox), in bounded batches', async () => {
    const { registry, queue, publisher } = await setup()
    for (let i = 0; i < 1_201; i++) await registry.create({ url: `https://e${i}.example/` })
    const other = new MemoryDeliveryQueue()
    const spy = recording(other)
    expect(await publisher.publish(event(), { queue: { enqueue: spy.enqueue } })).toBe(1_201)
    expect(spy.batches.map((batch) => batch.length)).toEqual([500, 500, 201])
    expect(new Set(spy.batches.flat().map((d) => d.payload)).size).toBe(1)
    const [first] = await registry.list({ limit: 1 })
    expect(await other.get('evt_1', first!.id)).toBeDefined()
    expect(await queue.get('evt_1', first!.id)).toBeUndefined()
  })

  it('does not touch the queue when no endpoint subscribes', async () => {
    const { queue } = await setup()
    const spy = recording(queue)
    const publisher = createWebhookPublisher({
      store: new MemoryEndpointStore(),
      queue: { enqueue: spy.enqueue },
    })
    expect(await publisher.publish(event())).toBe(0)
    expect(spy.batches).toEqual([])
    expect(() =>
      createWebhookPublisher({ store: new MemoryEndpointStore(), queue, maxPayloadBytes: 0 }),
    ).toThrow(RangeError)
  })
})
