// The retry table of issue 15's Reliability section: receivers on loopback that answer 200, 400,
// 410, 429 with Retry-After, 500, hang past the deadline, reset the connection or redirect; each
// delivery ends in the state docs/spec.md §3.1 names. Time is the injected clock (the worker is
// driven with tick()), the jitter a fixed random, so every next-attempt time is asserted exactly.
// Then replays (one, an endpoint's backlog, a time range) bring dead and failed deliveries back,
// and they succeed, with the same webhook-id, once the receiver recovers.
import { createVerifier } from '@api-blocks/webhook-signature'
import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Delivery } from '../src/delivery-queue.ts'
import { createEvent } from '../src/event.ts'
import { MemoryDeliveryQueue } from '../src/memory/delivery-queue.ts'
import { MemoryEndpointStore } from '../src/memory/endpoint-store.ts'
import { createWebhookPublisher } from '../src/publisher.ts'
import { createEndpointRegistry } from '../src/registry.ts'
import { createRetryPolicy } from '../src/retry-policy.ts'
import { createWebhookSender } from '../src/sender.ts'
import type { SsrfGuard } from '../src/ssrf/guard.ts'
import { createSsrfGuard } from '../src/ssrf/guard.ts'
import type { DeliveryWorkerEvent } from '../src/worker.ts'
import { createDeliveryWorker } from '../src/worker.ts'
import type { Answer, Receivers } from './receivers.ts'
import { LONG_BODY, startReceivers } from './receivers.ts'

const T0 = 1_764_460_800_000
/** The sender's deadline, in real milliseconds (the hanging receiver passes it). */
const DEADLINE_MS = 300

let receivers: Receivers
let guard: SsrfGuard
beforeAll(async () => {
  receivers = await startReceivers()
  // Loopback is refused by default: the receivers' origin (and a closed port) are allowed by name.
  guard = createSsrfGuard({ allowedOrigins: [receivers.origin, 'http://127.0.0.1:1'] })
})
afterAll(async () => {
  await guard.close()
  await receivers.close()
})

let now: number
let events: DeliveryWorkerEvent[]
let world: ReturnType<typeof makeWorld>
let sequence = 0

function makeWorld() {
  const clock = () => now
  const registry = createEndpointRegistry({ store: new MemoryEndpointStore(), guard, clock })
  const queue = new MemoryDeliveryQueue({ clock })
  const publisher = createWebhookPublisher({ registry, queue, clock })
  // base 1 s, cap 60 s, 4 attempts; random 0.5 is a factor of exactly 1.
  const policy = createRetryPolicy({
    baseMs: 1_000,
    maxMs: 60_000,
    maxAttempts: 4,
    random: () => 0.5,
  })
  const worker = createDeliveryWorker({
    queue,
    registry,
    sender: createWebhookSender({ guard, timeoutMs: DEADLINE_MS, clock }),
    policy,
    clock,
    onEvent: (event) => events.push(event),
  })
  return { registry, queue, publisher, worker }
}

beforeEach(() => {
  now = T0
  events = []
  world = makeWorld()
})

/** An endpoint whose receiver answers `answer` (its own path, so it can recover alone). */
async function endpointFor(answer: Answer) {
  const path = `${answer}/${++sequence}`
  const { endpoint, secret } = await world.registry.create({ url: receivers.url(path) })
  return { endpoint, secret, path: `/${path}` }
}

async function publish(type = 'order.created', created = Math.floor(now / 1000)) {
  const event = createEvent({ type, object: { id: `ord_${++sequence}` }, created })
  await world.publisher.publish(event)
  return event
}

async function delivery(eventId: string, endpointId: string): Promise<Delivery> {
  const found = await world.queue.get(eventId, endpointId)
  if (found === undefined) throw new Error('no such delivery')
  return found
}

/** Ticks until nothing is due at the current time. */
async function drain(): Promise<number> {
  let total = 0
  for (let n = await world.worker.tick(); n > 0; n = await world.worker.tick()) total += n
  return total
}

describe('the retry table of docs/spec.md §3.1 on loopback receivers', () => {
  it('200: succeeded after one attempt, signed, with the event id as webhook-id', async () => {
    const { endpoint, secret, path } = await endpointFor('ok')
    const event = await publish()
    expect(await world.worker.tick()).toBe(1)
    const done = await delivery(event.id, endpoint.id)
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1 })
    expect(done.log).toHaveLength(1)
    expect(done.log[0]).toMatchObject({
      attempt: 0,
      at: T0,
      status: 200,
      failure: null,
      body: 'thanks',
    })
    expect(done.log[0]!.latencyMs).toBeGreaterThanOrEqual(0)
    const request = receivers.received.findLast((r) => r.path === path)!
    expect(request.headers['webhook-id']).toBe(event.id)
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.body).toBe(JSON.stringify(event))
    const verified = await createVerifier({ secrets: secret, clock: () => now }).verify(
      request.headers as Record<string, string>,
      request.body,
    )
    expect(verified.id).toBe(event.id)
    now += 86_400_000
    expect(await world.worker.tick()).toBe(0)
  })

  it('400: permanently failed at once, never retried', async () => {
    const { endpoint } = await endpointFor('bad')
    const event = await publish()
    await world.worker.tick()
    const done = await delivery(event.id, endpoint.id)
    expect(done).toMatchObject({ status: 'failed', attempts: 1 })
    expect(done.log[0]).toMatchObject({
      attempt: 0,
      status: 400,
      failure: null,
      body: 'bad request',
    })
    now += 86_400_000
    expect(await world.worker.tick()).toBe(0)
    expect((await world.registry.get(endpoint.id)).status).toBe('enabled')
  })

  it('410: permanently failed, and the endpoint disabled (reason gone)', async () => {
    const { endpoint } = await endpointFor('gone')
    const event = await publish()
    await world.worker.tick()
    expect(await delivery(event.id, endpoint.id)).toMatchObject({ status: 'failed', attempts: 1 })
    expect((await delivery(event.id, endpoint.id)).log[0]).toMatchObject({
      status: 410,
      body: null,
    })
    expect(await world.registry.get(endpoint.id)).toMatchObject({
      status: 'disabled',
      disabledReason: 'gone',
    })
    expect(events).toContainEqual({
      type: 'endpoint-disabled',
      endpointId: endpoint.id,
      reason: 'gone',
    })
    // Later events are not even enqueued for it.
    const later = await publish()
    expect(await world.queue.get(later.id, endpoint.id)).toBeUndefined()
  })

  it('302: a failed attempt retried like a 5xx (after 1 s); the redirect is not followed', async () => {
    const { endpoint } = await endpointFor('redirect')
    const before = receivers.received.length
    const event = await publish()
    await world.worker.tick()
    expect(await delivery(event.id, endpoint.id)).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: now + 1_000,
    })
    expect((await delivery(event.id, endpoint.id)).log[0]).toMatchObject({ status: 302 })
    expect(receivers.received.slice(before).map((r) => r.path)).toEqual([
      new URL(endpoint.url).pathname,
    ])
  })

  it('429 with Retry-After: 120 s: retried exactly 120 s later, then dead at the fourth attempt', async () => {
    const { endpoint } = await endpointFor('busy')
    const event = await publish()
    const due: number[] = []
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await world.worker.tick()).toBe(1)
      const pending = await delivery(event.id, endpoint.id)
      expect(pending).toMatchObject({
        status: 'pending',
        attempts: attempt + 1,
        nextAttemptAt: now + 120_000,
      })
      due.push(pending.nextAttemptAt - T0)
      now += 119_999
      expect(await world.worker.tick()).toBe(0) // not due a millisecond early
      now += 1
    }
    expect(due).toEqual([120_000, 240_000, 360_000])
    expect(await world.worker.tick()).toBe(1)
    const dead = await delivery(event.id, endpoint.id)
    expect(dead).toMatchObject({ status: 'dead', attempts: 4 })
    expect(dead.log.map((line) => [line.attempt, line.status, line.body])).toEqual([
      [0, 429, 'slow down'],
      [1, 429, 'slow down'],
      [2, 429, 'slow down'],
      [3, 429, 'slow down'],
    ])
    expect(events).toContainEqual({
      type: 'dead-letter',
      eventId: event.id,
      endpointId: endpoint.id,
      attempts: 4,
    })
  })

  it('429 with a Retry-After over the cap waits the cap (one hour)', async () => {
    const { endpoint } = await endpointFor('busy-long')
    const event = await publish()
    await world.worker.tick()
    expect(await delivery(event.id, endpoint.id)).toMatchObject({
      status: 'pending',
      nextAttemptAt: T0 + 3_600_000,
    })
  })

  it('429 without Retry-After: the backoff delay', async () => {
    const { endpoint } = await endpointFor('busy-no-retry-after')
    const event = await publish()
    await world.worker.tick()
    expect(await delivery(event.id, endpoint.id)).toMatchObject({
      status: 'pending',
      nextAttemptAt: T0 + 1_000,
    })
  })

  it('500: retried after 1 s, 2 s, 4 s, then dead; the log keeps status, latency and 1 KiB of the body', async () => {
    const { endpoint } = await endpointFor('error')
    const event = await publish()
    const times: number[] = []
    for (const delay of [1_000, 2_000, 4_000]) {
      expect(await world.worker.tick()).toBe(1)
      const pending = await delivery(event.id, endpoint.id)
      expect(pending.status).toBe('pending')
      expect(pending.nextAttemptAt).toBe(now + delay)
      times.push(now - T0)
      now = pending.nextAttemptAt
    }
    times.push(now - T0)
    expect(await world.worker.tick()).toBe(1)
    const dead = await delivery(event.id, endpoint.id)
    expect(dead).toMatchObject({ status: 'dead', attempts: 4 })
    expect(dead.log.map((line) => [line.attempt, line.at - T0, line.status])).toEqual([
      [0, 0, 500],
      [1, 1_000, 500],
      [2, 3_000, 500],
      [3, 7_000, 500],
    ])
    expect(times).toEqual([0, 1_000, 3_000, 7_000])
    for (const line of dead.log) {
      expect(line.latencyMs).toBeGreaterThanOrEqual(0)
      expect(line.body!.length).toBeLessThanOrEqual(1024)
      expect(LONG_BODY.startsWith(line.body!)).toBe(true)
      expect(line.body!.length).toBeGreaterThan(100)
    }
    now += 86_400_000
    expect(await world.worker.tick()).toBe(0)
    expect(events.filter((e) => e.type === 'dead-letter')).toHaveLength(1)
  })

  it('a receiver that hangs past the deadline: a timeout, retried after 1 s', async () => {
    const { endpoint } = await endpointFor('hang')
    const event = await publish()
    await world.worker.tick()
    const pending = await delivery(event.id, endpoint.id)
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: T0 + 1_000 })
    expect(pending.log[0]).toMatchObject({ status: null, failure: 'timeout' })
    expect(pending.log[0]!.latencyMs).toBeGreaterThanOrEqual(0)
  })

  it('a connection reset: a connection failure, retried after 1 s', async () => {
    const { endpoint } = await endpointFor('reset')
    const event = await publish()
    await world.worker.tick()
    const pending = await delivery(event.id, endpoint.id)
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: T0 + 1_000 })
    expect(pending.log[0]).toMatchObject({ status: null, failure: 'connection' })
    expect(pending.log[0]!.body).toEqual(expect.any(String))
  })

  it('an address the guard refuses at connect time: permanently failed, no request made', async () => {
    // Registered without the guard (or its name resolved elsewhere then): localhost is not an
    // allowed origin, so the dispatcher refuses the connection.
    const unguarded = createEndpointRegistry({ store: world.registry.store, clock: () => now })
    const { endpoint } = await unguarded.create({
      url: receivers.url('ok/refused').replace('127.0.0.1', 'localhost'),
    })
    const before = receivers.received.length
    const event = await publish()
    await world.worker.tick()
    const failed = await delivery(event.id, endpoint.id)
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 })
    expect(failed.log[0]).toMatchObject({ status: null, failure: 'address-refused' })
    expect(receivers.received.length).toBe(before)
  })

  it('a closed port: a connection failure, dead after four attempts', async () => {
    const { endpoint } = await world.registry.create({ url: 'http://127.0.0.1:1/closed' })
    const event = await publish()
    for (let i = 0; i < 4; i++) {
      expect(await world.worker.tick()).toBe(1)
      now = (await delivery(event.id, endpoint.id)).nextAttemptAt
    }
    const dead = await delivery(event.id, endpoint.id)
    expect(dead).toMatchObject({ status: 'dead', attempts: 4 })
    expect(dead.log.every((line) => line.failure === 'connection')).toBe(true)
  })
})

describe('replay brings dead and failed deliveries back', () => {
  it('one delivery: dead, the receiver recovers, replayed, succeeded with the same webhook-id', async () => {
    const { endpoint, path } = await endpointFor('error')
    const event = await publish()
    for (let i = 0; i < 4; i++) {
      await world.worker.tick()
      now = (await delivery(event.id, endpoint.id)).nextAttemptAt
    }
    expect((await delivery(event.id, endpoint.id)).status).toBe('dead')
    receivers.recover(path)
    now += 60_000
    expect(await world.queue.replay({ eventId: event.id, endpointId: endpoint.id }, now)).toBe(1)
    expect(await world.worker.tick()).toBe(1)
    const done = await delivery(event.id, endpoint.id)
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1 })
    expect(done.log.map((line) => line.status)).toEqual([500, 500, 500, 500, 200])
    const ids = receivers.received
      .filter((r) => r.path === path)
      .map((r) => r.headers['webhook-id'])
    expect(ids).toEqual([event.id, event.id, event.id, event.id, event.id])
  })

  it("an endpoint's backlog: every failed delivery of it, and only of it", async () => {
    const bad = await endpointFor('bad')
    const other = await endpointFor('bad')
    const published = [await publish(), await publish(), await publish()]
    expect(await drain()).toBe(6)
    receivers.recover(bad.path)
    receivers.recover(other.path)
    expect(await world.queue.replay({ endpointId: bad.endpoint.id }, now)).toBe(3)
    expect(await drain()).toBe(3)
    for (const event of published) {
      expect((await delivery(event.id, bad.endpoint.id)).status).toBe('succeeded')
      expect((await delivery(event.id, other.endpoint.id)).status).toBe('failed')
    }
  })

  it('a time range: the deliveries of events created in [from, to)', async () => {
    const { endpoint, path } = await endpointFor('bad')
    const early = await publish('order.created', 1_000)
    const inside = await publish('order.created', 2_000)
    const late = await publish('order.created', 3_000)
    await drain()
    receivers.recover(path)
    expect(await world.queue.replay({ from: 2_000_000, to: 3_000_000 }, now)).toBe(1)
    await drain()
    expect((await delivery(early.id, endpoint.id)).status).toBe('failed')
    expect((await delivery(inside.id, endpoint.id)).status).toBe('succeeded')
    expect((await delivery(late.id, endpoint.id)).status).toBe('failed')
  })

  it('a disabled endpoint: replayed deliveries fail (endpoint-disabled) until it is enabled', async () => {
    const { endpoint, path } = await endpointFor('gone')
    const event = await publish()
    await world.worker.tick()
    receivers.recover(path)
    await world.queue.replay({ eventId: event.id, endpointId: endpoint.id }, now)
    await world.worker.tick()
    const refused = await delivery(event.id, endpoint.id)
    expect(refused.status).toBe('failed')
    expect(refused.log.at(-1)).toMatchObject({
      status: null,
      failure: 'endpoint-disabled',
      latencyMs: 0,
    })
    await world.registry.setStatus(endpoint.id, 'enabled', null)
    await world.queue.replay({ endpointId: endpoint.id }, now)
    await world.worker.tick()
    expect(await delivery(event.id, endpoint.id)).toMatchObject({ status: 'succeeded' })
  })

  it('a deleted endpoint: its pending deliveries fail (endpoint-deleted), without a request', async () => {
    const { endpoint, path } = await endpointFor('ok')
    const event = await publish()
    await world.registry.delete(endpoint.id)
    const before = receivers.received.filter((r) => r.path === path).length
    await world.worker.tick()
    const failed = await delivery(event.id, endpoint.id)
    expect(failed.status).toBe('failed')
    expect(failed.log.at(-1)).toMatchObject({ failure: 'endpoint-deleted' })
    expect(receivers.received.filter((r) => r.path === path)).toHaveLength(before)
  })
})

describe('any sequence of answers ends as the model of docs/spec.md §3.1 says (fast-check)', () => {
  /** The answer's outcome in the spec's table; `null` status for a failure without a response. */
  const outcome: Record<
    string,
    {
      status: number | null
      kind: 'final' | 'retry'
      final?: 'succeeded' | 'failed'
      delay?: number
    }
  > = {
    ok: { status: 200, kind: 'final', final: 'succeeded' },
    bad: { status: 400, kind: 'final', final: 'failed' },
    gone: { status: 410, kind: 'final', final: 'failed' },
    redirect: { status: 302, kind: 'retry' },
    busy: { status: 429, kind: 'retry', delay: 120_000 },
    'busy-no-retry-after': { status: 429, kind: 'retry' },
    error: { status: 500, kind: 'retry' },
    reset: { status: null, kind: 'retry' },
  }
  const answers = fc.array(fc.constantFrom(...(Object.keys(outcome) as Answer[])), {
    minLength: 1,
    maxLength: 5,
  })

  it('final state, attempt log, next-attempt times, and the endpoint disabled only after a 410', async () => {
    await fc.assert(
      fc.asyncProperty(answers, async (script) => {
        now = T0
        events = []
        world = makeWorld()
        const path = `script/${++sequence}`
        receivers.script(`/${path}`, script)
        const { endpoint } = await world.registry.create({ url: receivers.url(path) })
        const event = await publish()

        // The model: base 1 s, cap 60 s, 4 attempts, factor 1.
        const expected: { status: number | null; at: number }[] = []
        let at = T0
        let final: string | undefined
        for (let attempt = 0; final === undefined; attempt++) {
          const answer = script[attempt] ?? 'ok'
          const o = outcome[answer]!
          expected.push({ status: o.status, at: at - T0 })
          if (o.kind === 'final') final = o.final
          else if (attempt + 1 >= 4) final = 'dead'
          else at += o.delay ?? Math.min(1_000 * 2 ** attempt, 60_000)
        }

        for (let round = 0; round < 10; round++) {
          if ((await world.worker.tick()) === 0) break
          const current = await delivery(event.id, endpoint.id)
          if (current.status !== 'pending') break
          now = current.nextAttemptAt
        }
        const done = await delivery(event.id, endpoint.id)
        expect(done.status).toBe(final)
        expect(done.log.map((line) => ({ status: line.status, at: line.at - T0 }))).toEqual(
          expected,
        )
        const gone = expected.at(-1)!.status === 410
        expect((await world.registry.get(endpoint.id)).status).toBe(gone ? 'disabled' : 'enabled')
        expect(events.filter((e) => e.type === 'dead-letter')).toHaveLength(
          final === 'dead' ? 1 : 0,
        )
      }),
      { numRuns: 40, interruptAfterTimeLimit: 4_000 },
    )
  })
})
