import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Receivers } from '../test/receivers.ts'
import { startReceivers } from '../test/receivers.ts'
import type { ClaimOptions, DeliveryQueue, LeasedDelivery } from './delivery-queue.ts'
import type { EndpointStore } from './endpoint-store.ts'
import { createEvent } from './event.ts'
import { MemoryDeliveryQueue } from './memory/delivery-queue.ts'
import { MemoryEndpointStore } from './memory/endpoint-store.ts'
import { createWebhookPublisher } from './publisher.ts'
import { createEndpointRegistry } from './registry.ts'
import { createRetryPolicy } from './retry-policy.ts'
import { createWebhookSender } from './sender.ts'
import type { SsrfGuard } from './ssrf/guard.ts'
import { createSsrfGuard } from './ssrf/guard.ts'
import type { DeliveryWorkerEvent, DeliveryWorkerOptions } from './worker.ts'
import { createDeliveryWorker } from './worker.ts'

let receivers: Receivers
let guard: SsrfGuard
beforeAll(async () => {
  receivers = await startReceivers()
  guard = createSsrfGuard({ allowedOrigins: [receivers.origin] })
})
afterAll(async () => {
  await guard.close()
  await receivers.close()
})

let sequence = 0

/** The queue, with some methods replaced (a store that fails on demand). */
function queueWith(queue: DeliveryQueue, overrides: Partial<DeliveryQueue>): DeliveryQueue {
  return {
    enqueue: (deliveries) => queue.enqueue(deliveries),
    claim: (options) => queue.claim(options),
    settle: (...args) => queue.settle(...args),
    release: (...args) => queue.release(...args),
    get: (...args) => queue.get(...args),
    list: (query) => queue.list(query),
    replay: (...args) => queue.replay(...args),
    ...overrides,
  }
}

/** The store, with some methods replaced. */
function storeWith(store: EndpointStore, overrides: Partial<EndpointStore>): EndpointStore {
  return {
    insert: (endpoint) => store.insert(endpoint),
    get: (id) => store.get(id),
    list: (query) => store.list(query),
    subscribed: (type) => store.subscribed(type),
    update: (...args) => store.update(...args),
    delete: (id) => store.delete(id),
    ...overrides,
  }
}

function world(
  options: {
    queue?: (queue: MemoryDeliveryQueue) => DeliveryQueue
    store?: (store: EndpointStore) => EndpointStore
    worker?: Partial<DeliveryWorkerOptions>
  } = {},
) {
  const clock = { now: 1_764_460_800_000 }
  const time = () => clock.now
  const memory = new MemoryDeliveryQueue({ clock: time })
  const queue = options.queue?.(memory) ?? memory
  const store = options.store?.(new MemoryEndpointStore()) ?? new MemoryEndpointStore()
  const registry = createEndpointRegistry({ store, clock: time })
  const publisher = createWebhookPublisher({ registry, queue: memory, clock: time })
  const events: DeliveryWorkerEvent[] = []
  const worker = createDeliveryWorker({
    queue,
    registry,
    sender: createWebhookSender({ guard, timeoutMs: 2_000, clock: time }),
    policy: createRetryPolicy({ baseMs: 1_000, maxMs: 1_000, random: () => 0.5 }),
    clock: time,
    onEvent: (event) => events.push(event),
    ...options.worker,
  })
  async function publish(count = 1) {
    const ids: string[] = []
    for (let i = 0; i < count; i++) {
      const event = createEvent(
        { type: 'order.created', object: { n: i }, id: `evt_${++sequence}` },
        { clock: time },
      )
      await publisher.publish(event)
      ids.push(event.id)
    }
    return ids
  }
  return { clock, memory, queue, registry, worker, events, publish }
}

describe('createDeliveryWorker: bounds', () => {
  it('never has more than `concurrency` attempts in flight', async () => {
    const { registry, worker, publish } = world({ worker: { concurrency: 3, perEndpoint: 100 } })
    await registry.create({ url: receivers.url('slow/c') })
    await publish(10)
    receivers.load.max = 0
    expect(await worker.tick()).toBe(3)
    expect(await worker.tick()).toBe(3)
    expect(receivers.load.max).toBe(3)
  })

  it('never has more than `perEndpoint` attempts to one endpoint in flight', async () => {
    const { registry, worker, publish, memory } = world({
      worker: { concurrency: 16, perEndpoint: 2 },
    })
    const a = (await registry.create({ url: receivers.url('slow/a') })).endpoint
    const b = (await registry.create({ url: receivers.url('slow/b') })).endpoint
    const ids = await publish(5)
    expect(await worker.tick()).toBe(4)
    let done = 0
    for (const id of ids) {
      for (const endpoint of [a, b])
        if ((await memory.get(id, endpoint.id))?.status === 'succeeded') done++
    }
    expect(done).toBe(4)
  })

  it('reads each endpoint once per claimed batch', async () => {
    let reads = 0
    const { registry, worker, publish } = world({
      worker: { perEndpoint: 10 },
      store: (store) =>
        storeWith(store, {
          get: (id) => {
            reads++
            return store.get(id)
          },
        }),
    })
    await registry.create({ url: receivers.url('ok/batch') })
    await publish(5)
    reads = 0
    expect(await worker.tick()).toBe(5)
    expect(reads).toBe(1)
  })

  it('the running loop claims in batches, not once per finished attempt', async () => {
    let claims = 0
    const { registry, worker, publish, memory } = world({
      worker: { concurrency: 8, batchSize: 8, perEndpoint: 8, pollIntervalMs: 600_000 },
      queue: (queue) =>
        queueWith(queue, {
          claim: (options) => {
            claims++
            return queue.claim(options)
          },
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/batches') })
    const ids = await publish(64)
    worker.start()
    try {
      await vi.waitFor(
        async () => {
          const done = await memory.list({
            endpointId: endpoint.id,
            status: 'succeeded',
            limit: 100,
          })
          expect(done).toHaveLength(ids.length)
        },
        { timeout: 10_000 },
      )
    } finally {
      await worker.stop()
    }
    // At least 4 free slots (half of 8) per claim: 16 claims for 64, plus the empty ones at the end.
    expect(claims).toBeLessThan(32)
  })

  it('refuses options that make no sense', () => {
    for (const bad of [
      { concurrency: 0 },
      { batchSize: 1.5 },
      { perEndpoint: -1 },
      { leaseMs: Number.NaN },
      { pollIntervalMs: 0 },
    ]) {
      expect(() => world({ worker: bad })).toThrow(RangeError)
    }
  })

  it("refuses a lease that does not outlast the sender's deadline by 5 s (or by the deadline, when shorter)", () => {
    const deadline = (timeoutMs: number) => ({
      timeoutMs,
      send: () => Promise.reject(new Error('unused')),
    })
    expect(() => world({ worker: { sender: deadline(10_000), leaseMs: 14_999 } })).toThrow(
      /leaseMs \(14999\).*timeoutMs \(10000\) plus 5000 ms/,
    )
    expect(() => world({ worker: { sender: deadline(10_000), leaseMs: 15_000 } })).not.toThrow()
    // The world's sender has a 2 s deadline: 2 s more.
    expect(() => world({ worker: { leaseMs: 3_999 } })).toThrow(RangeError)
    expect(() => world({ worker: { leaseMs: 4_000 } })).not.toThrow()
    // The default follows the deadline: 30 s past it.
    expect(() => world({ worker: { sender: deadline(60_000) } })).not.toThrow()
  })

  it('gives a delivery back, unsent, when its lease could expire during the attempt', async () => {
    let sends = 0
    const { registry, worker, publish, memory, clock } = world({
      worker: { leaseMs: 7_000 },
      queue: (queue) =>
        queueWith(queue, {
          claim: async (options: ClaimOptions) => {
            const leased = await queue.claim(options)
            clock.now += 5_000 // the claim answered late: 2 s of lease left, the deadline is 2 s
            return leased
          },
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/latelease') })
    const path = new URL(endpoint.url).pathname
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    sends = receivers.received.filter((r) => r.path === path).length
    expect(sends).toBe(0)
    // Given back, not waiting for the lease to expire: the next claim takes it at once.
    expect(await memory.get(id!, endpoint.id)).toMatchObject({ status: 'pending', attempts: 0 })
    expect(await memory.claim({ now: clock.now, limit: 10, leaseMs: 60_000 })).toHaveLength(1)
  })
})

describe('createDeliveryWorker: a lost lease', () => {
  it('is reported and not retried: the other holder settles', async () => {
    let other: LeasedDelivery[] = []
    const { registry, worker, events, publish, memory, clock } = world({
      worker: {
        leaseMs: 6_000,
        sender: {
          timeoutMs: 1_000,
          async send(request) {
            // While this attempt runs, the lease expires and another worker claims the delivery.
            clock.now += 6_001
            other = await memory.claim({ now: clock.now, limit: 10, leaseMs: 60_000 })
            return await createWebhookSender({ guard, clock: () => clock.now }).send(request)
          },
        },
      },
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/lease') })
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    expect(other).toHaveLength(1)
    const attempt = events.find((e) => e.type === 'attempt')
    expect(attempt).toMatchObject({
      type: 'attempt',
      eventId: id,
      settled: false,
      resolution: { status: 'succeeded' },
    })
    const stored = await memory.get(id!, endpoint.id)
    expect(stored).toMatchObject({ status: 'pending', attempts: 0, log: [] })
    expect(
      await memory.settle(other[0]!, { ...attempt!.record }, { status: 'succeeded' }, clock.now),
    ).toBe(true)
  })
})

describe('createDeliveryWorker: faults of its own parts', () => {
  it('a sender that throws (a bug) counts as a failed attempt, so retries stay bounded', async () => {
    const { registry, worker, publish, memory } = world({
      worker: {
        sender: {
          timeoutMs: 10_000,
          send: async () => {
            throw new Error('bug')
          },
        },
      },
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/bug') })
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    const stored = await memory.get(id!, endpoint.id)
    expect(stored).toMatchObject({ status: 'pending', attempts: 1 })
    expect(stored!.log[0]).toMatchObject({
      status: null,
      failure: 'connection',
      body: 'Error: bug',
    })
  })

  it('an endpoint without a live secret (a store edited by hand) fails without a request', async () => {
    const { registry, worker, publish, memory } = world()
    const { endpoint } = await registry.create({ url: receivers.url('ok/nosecret') })
    await registry.store.update(endpoint.id, { secrets: [], updatedAt: 0 })
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    const stored = await memory.get(id!, endpoint.id)
    expect(stored).toMatchObject({ status: 'failed', attempts: 1 })
    expect(stored!.log[0]).toMatchObject({ failure: 'no-signing-secret' })
  })
})

describe('createDeliveryWorker: secrets that will not open', () => {
  it('a sealed secret that does not open settles `failed` (signing-secret-unavailable), replayable', async () => {
    const { registry, worker, events, publish, memory } = world()
    const { endpoint } = await registry.create({ url: receivers.url('ok/sealed') })
    const path = new URL(endpoint.url).pathname
    // The stored secret is sealed under a key this registry does not have.
    await registry.store.update(
      endpoint.id,
      { secrets: [{ ...endpoint.secrets[0]!, value: `whenc_v1.${'A'.repeat(60)}` }], updatedAt: 1 },
      endpoint.version,
    )
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    const stored = await memory.get(id!, endpoint.id)
    expect(stored).toMatchObject({ status: 'failed', attempts: 1 })
    expect(stored!.log[0]).toMatchObject({ status: null, failure: 'signing-secret-unavailable' })
    expect(events[0]).toMatchObject({ type: 'error', stage: 'endpoint', eventId: id })
    expect(receivers.received.filter((r) => r.path === path)).toHaveLength(0)
    expect(await worker.tick()).toBe(0) // not claimed again and again
    expect(await memory.replay({ eventId: id!, endpointId: endpoint.id }, 0)).toBe(1)
  })
})

describe('createDeliveryWorker: store failures never crash it', () => {
  it('a failed claim is reported; tick() answers 0', async () => {
    const { worker, events } = world({
      queue: (queue) =>
        queueWith(queue, {
          claim: async () => {
            throw new Error('database down')
          },
        }),
    })
    expect(await worker.tick()).toBe(0)
    expect(events).toEqual([{ type: 'error', stage: 'claim', error: new Error('database down') }])
  })

  it('a failed settle is reported; the delivery is claimed again when its lease expires', async () => {
    let failures = 1
    const { registry, worker, events, publish, memory, clock } = world({
      worker: { leaseMs: 7_000 },
      queue: (queue) =>
        queueWith(queue, {
          settle: (...args: Parameters<DeliveryQueue['settle']>) => {
            if (failures-- > 0) return Promise.reject(new Error('connection lost'))
            return queue.settle(...args)
          },
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/settle') })
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    expect(events).toMatchObject([
      { type: 'error', stage: 'settle', eventId: id, endpointId: endpoint.id },
    ])
    expect(await worker.tick()).toBe(0)
    clock.now += 7_000
    expect(await worker.tick()).toBe(1)
    expect(await memory.get(id!, endpoint.id)).toMatchObject({ status: 'succeeded', attempts: 1 })
  })

  it('a failed endpoint read is reported and the lease given back', async () => {
    let failures = 1
    const { registry, worker, events, publish, memory, clock } = world({
      store: (store) =>
        storeWith(store, {
          get: (id: string) =>
            failures-- > 0 ? Promise.reject(new Error('timeout')) : store.get(id),
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/read') })
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    expect(events).toMatchObject([{ type: 'error', stage: 'endpoint', eventId: id }])
    expect(await worker.tick()).toBe(0) // released, due a poll interval later
    clock.now += 1_000
    expect(await worker.tick()).toBe(1)
    expect(await memory.get(id!, endpoint.id)).toMatchObject({ status: 'succeeded' })
  })

  it('one failed endpoint read counts once for the batch that waited on it', async () => {
    const { registry, worker, publish, memory, clock } = world({
      store: (store) => storeWith(store, { get: () => Promise.reject(new Error('timeout')) }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/readbatch') })
    await publish(4)
    expect(await worker.tick()).toBe(4)
    const given = await memory.list({ endpointId: endpoint.id, limit: 10 })
    expect(given.map((d) => d.nextAttemptAt - clock.now)).toEqual([1_000, 1_000, 1_000, 1_000])
  })

  it('failed endpoint reads give the delivery back later and later (doubling, up to 30 s)', async () => {
    let failing = true
    const { registry, worker, publish, memory, clock } = world({
      store: (store) =>
        storeWith(store, {
          get: (id: string) => (failing ? Promise.reject(new Error('timeout')) : store.get(id)),
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/readbackoff') })
    const [id] = await publish()
    const delays: number[] = []
    for (let i = 0; i < 8; i++) {
      const before = clock.now
      expect(await worker.tick()).toBe(1)
      const due = (await memory.get(id!, endpoint.id))!.nextAttemptAt
      delays.push(due - before)
      clock.now = due
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000])
    failing = false
    expect(await worker.tick()).toBe(1)
    expect(await memory.get(id!, endpoint.id)).toMatchObject({ status: 'succeeded' })
  })

  it('the running loop backs off after failed claims and carries on', async () => {
    let failures = 3
    const { registry, worker, events, publish, memory } = world({
      worker: { pollIntervalMs: 5 },
      queue: (queue) =>
        queueWith(queue, {
          claim: (options: ClaimOptions) =>
            failures-- > 0 ? Promise.reject(new Error('down')) : queue.claim(options),
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/loop') })
    const [id] = await publish()
    worker.start()
    try {
      await vi.waitFor(
        async () => expect((await memory.get(id!, endpoint.id))?.status).toBe('succeeded'),
        { timeout: 5_000 },
      )
    } finally {
      await worker.stop()
    }
    expect(events.filter((e) => e.type === 'error')).toHaveLength(3)
  })

  it('an observer that throws changes nothing', async () => {
    const { registry, worker, publish, memory } = world({
      worker: {
        onEvent: () => {
          throw new Error('observer bug')
        },
      },
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/observer') })
    const [id] = await publish()
    expect(await worker.tick()).toBe(1)
    expect(await memory.get(id!, endpoint.id)).toMatchObject({ status: 'succeeded' })
  })
})

describe('createDeliveryWorker: start, wake and stop', () => {
  it('wake() cuts the poll wait short', async () => {
    let claims = 0
    const { registry, worker, publish, memory } = world({
      worker: { pollIntervalMs: 600_000 },
      queue: (queue) =>
        queueWith(queue, {
          claim: (options) => {
            claims++
            return queue.claim(options)
          },
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/wake') })
    worker.start()
    worker.start() // a second start does nothing
    try {
      await vi.waitFor(() => expect(claims).toBe(1)) // nothing due: the loop sleeps ten minutes
      const [id] = await publish()
      worker.wake()
      await vi.waitFor(
        async () => expect((await memory.get(id!, endpoint.id))?.status).toBe('succeeded'),
        {
          timeout: 5_000,
        },
      )
      expect(claims).toBeGreaterThanOrEqual(2)
    } finally {
      await worker.stop()
    }
  })

  it('a wake() while the loop is busy is not lost', async () => {
    let claims = 0
    let worker!: ReturnType<typeof world>['worker']
    let published: Promise<string[]> | undefined
    const made = world({
      worker: { pollIntervalMs: 600_000 },
      queue: (queue) =>
        queueWith(queue, {
          claim: async (options) => {
            const leased = await queue.claim(options)
            if (++claims === 1) {
              // Published and woken while this first claim is under way.
              published = made.publish()
              await published
              worker.wake()
            }
            return leased
          },
        }),
    })
    worker = made.worker
    const { endpoint } = await made.registry.create({ url: receivers.url('ok/busywake') })
    worker.start()
    try {
      await vi.waitFor(() => expect(published).toBeDefined())
      const [id] = await published!
      await vi.waitFor(
        async () => expect((await made.memory.get(id!, endpoint.id))?.status).toBe('succeeded'),
        {
          timeout: 5_000,
        },
      )
    } finally {
      await worker.stop()
    }
  })

  it('stop() waits for the attempts in flight to settle', async () => {
    const { registry, worker, publish, memory } = world({ worker: { pollIntervalMs: 600_000 } })
    const { endpoint } = await registry.create({ url: receivers.url('slow/stop') })
    const path = new URL(endpoint.url).pathname
    const ids = await publish(3)
    worker.start()
    await vi.waitFor(
      () => expect(receivers.received.filter((r) => r.path === path)).toHaveLength(3),
      { interval: 1 },
    )
    const pending = await Promise.all(ids.map((id) => memory.get(id, endpoint.id)))
    expect(pending.map((d) => d?.status)).toEqual(['pending', 'pending', 'pending'])
    await worker.stop()
    for (const id of ids)
      expect(await memory.get(id, endpoint.id)).toMatchObject({ status: 'succeeded' })
  })

  it('start() during a draining stop(): the stop resolves, then one loop runs', async () => {
    let claims = 0
    const { registry, worker, publish, memory } = world({
      worker: { pollIntervalMs: 600_000 },
      queue: (queue) =>
        queueWith(queue, {
          claim: (options) => {
            claims++
            return queue.claim(options)
          },
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('slow/restart') })
    const path = new URL(endpoint.url).pathname
    const [first] = await publish()
    worker.start()
    await vi.waitFor(
      () => expect(receivers.received.filter((r) => r.path === path)).toHaveLength(1),
      {
        interval: 1,
      },
    )
    const stopped = worker.stop()
    worker.start() // a supervisor's restart while the attempt in flight drains
    await stopped
    expect(await memory.get(first!, endpoint.id)).toMatchObject({ status: 'succeeded' })
    // The restarted loop runs: it sends what is published next, and sleeps in between.
    const [second] = await publish()
    worker.wake()
    await vi.waitFor(
      async () => expect((await memory.get(second!, endpoint.id))?.status).toBe('succeeded'),
      { timeout: 5_000 },
    )
    await worker.stop()
    // Claims: the first loop's (one or two), the second loop's (two or three): no spinning.
    expect(claims).toBeLessThanOrEqual(6)
  })

  it('a tick() whose claim is under way when stop() is called sends nothing after stop() resolves', async () => {
    let answer!: () => void
    const { registry, worker, publish, memory } = world({
      queue: (queue) =>
        queueWith(queue, {
          claim: async (options: ClaimOptions) => {
            const leased = await queue.claim(options)
            await new Promise<void>((resolve) => {
              answer = resolve
            })
            return leased
          },
        }),
    })
    const { endpoint } = await registry.create({ url: receivers.url('ok/tickstop') })
    const path = new URL(endpoint.url).pathname
    const [id] = await publish()
    const ticked = worker.tick()
    await vi.waitFor(() => expect(answer).toBeDefined())
    const stopped = worker.stop()
    expect(await worker.tick()).toBe(0) // while stopping, no new claim
    answer()
    await stopped
    expect(receivers.received.filter((r) => r.path === path)).toHaveLength(0)
    expect(await memory.get(id!, endpoint.id)).toMatchObject({ status: 'pending', attempts: 0 })
    await ticked
    expect(receivers.received.filter((r) => r.path === path)).toHaveLength(0)
  })

  it('stop() gives back the leases of deliveries claimed but not yet attempted', async () => {
    let claimed!: () => void
    const claiming = new Promise<void>((resolve) => {
      claimed = resolve
    })
    const { registry, worker, publish, memory, clock } = world({
      worker: { pollIntervalMs: 600_000 },
      queue: (queue) =>
        queueWith(queue, {
          claim: async (options: ClaimOptions) => {
            const leased = await queue.claim(options)
            claimed()
            await new Promise((resolve) => setTimeout(resolve, 20))
            return leased
          },
        }),
    })
    const { endpoint, path } = await registry
      .create({ url: receivers.url('ok/unstarted') })
      .then((r) => ({
        ...r,
        path: new URL(r.endpoint.url).pathname,
      }))
    const ids = await publish(2)
    worker.start()
    await claiming
    await worker.stop()
    expect(receivers.received.filter((r) => r.path === path)).toHaveLength(0)
    for (const id of ids)
      expect(await memory.get(id, endpoint.id)).toMatchObject({ status: 'pending', attempts: 0 })
    // Not leased any more: claimable at once, no lease expiry to wait for.
    expect(await memory.claim({ now: clock.now, limit: 10, leaseMs: 1_000 })).toHaveLength(2)
  })
})
