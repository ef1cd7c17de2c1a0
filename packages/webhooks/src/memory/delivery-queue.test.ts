import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import type { DeliveryResolution, LeasedDelivery, NewDelivery } from '../delivery-queue.ts'
import { runDeliveryQueueConformance } from '../testing/index.ts'
import { MemoryDeliveryQueue } from './delivery-queue.ts'

runDeliveryQueueConformance('memory', () => new MemoryDeliveryQueue())

const T0 = 1_700_000_000_000
const DAY = 86_400_000

function delivery(n: number, endpointId = 'we_1'): NewDelivery {
  return {
    eventId: `evt_${n}`,
    eventType: 'order.created',
    endpointId,
    payload: '{}',
    createdAt: T0,
    nextAttemptAt: T0,
  }
}

const attempt = { attempt: 0, at: T0, latencyMs: 1, status: 200, failure: null, body: null }

describe('MemoryDeliveryQueue bounds', () => {
  test('the constructor refuses bad bounds', () => {
    for (const maxDeliveries of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryDeliveryQueue({ maxDeliveries })).toThrow(RangeError)
    }
    for (const retentionMs of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new MemoryDeliveryQueue({ retentionMs })).toThrow(RangeError)
    }
    const queue = new MemoryDeliveryQueue()
    expect([queue.maxDeliveries, queue.retentionMs]).toEqual([100_000, 7 * DAY])
  })

  test('when full, an enqueue rejects whole and drops nothing pending', async () => {
    const queue = new MemoryDeliveryQueue({ maxDeliveries: 3, clock: () => T0 })
    expect(await queue.enqueue([delivery(1), delivery(2)])).toBe(2)
    await expect(queue.enqueue([delivery(3), delivery(4)])).rejects.toThrow(
      /full \(maxDeliveries 3/,
    )
    expect(queue.size).toBe(2)
    expect(await queue.get('evt_3', 'we_1')).toBeUndefined()
    // Pairs already present need no room.
    expect(await queue.enqueue([delivery(1), delivery(2), delivery(3)])).toBe(1)
    expect(queue.size).toBe(3)
  })

  test('final deliveries past the retention are pruned to make room, pending and recent ones never', async () => {
    let now = T0
    const queue = new MemoryDeliveryQueue({ maxDeliveries: 3, retentionMs: DAY, clock: () => now })
    await queue.enqueue([delivery(1), delivery(2), delivery(3)])
    const [one, two] = await queue.claim({ now: T0, limit: 2, leaseMs: 1000 })
    await queue.settle(one!, attempt, { status: 'succeeded' }, T0)
    await queue.settle(two!, attempt, { status: 'dead' }, T0 + 500)
    now = T0 + DAY
    expect(await queue.enqueue([delivery(4)])).toBe(1)
    expect(await queue.get(one!.eventId, 'we_1')).toBeUndefined()
    expect(await queue.get(two!.eventId, 'we_1')).toBeDefined()
    expect(await queue.list({ endpointId: 'we_1', limit: 10 })).toHaveLength(3)
    // The dead one is within its retention until T0 + 1 day + 500 ms; pending ones are kept.
    await expect(queue.enqueue([delivery(5)])).rejects.toThrow(RangeError)
    now = T0 + DAY + 500
    expect(await queue.enqueue([delivery(5)])).toBe(1)
    expect(queue.size).toBe(3)
    expect((await queue.list({ endpointId: 'we_1', limit: 10 })).map((d) => d.status)).toEqual([
      'pending',
      'pending',
      'pending',
    ])
  })

  test('leases come from the injected random source', async () => {
    const queue = new MemoryDeliveryQueue({ random: (bytes) => bytes.fill(7) })
    await queue.enqueue([delivery(1)])
    const [leased] = await queue.claim({ now: T0, limit: 1, leaseMs: 1000 })
    expect(leased!.lease).toBe('BwcHBwcHBwcHBwcHBwcHBw')
  })

  test('claims pick the earliest due, whatever order they were enqueued in, with or without perEndpoint', async () => {
    const queue = new MemoryDeliveryQueue()
    const many = Array.from({ length: 300 }, (_, i) => ({
      ...delivery(i, `we_${i % 3}`),
      nextAttemptAt: T0 + 1000 - i,
    }))
    await queue.enqueue(many)
    const byTime = [...many].sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
    const ten = await queue.claim({ now: T0 + 1000, limit: 10, leaseMs: 1000 })
    expect(ten.map((d) => d.eventId)).toEqual(byTime.slice(0, 10).map((d) => d.eventId))
    const capped = await queue.claim({ now: T0 + 1000, limit: 5, leaseMs: 1000, perEndpoint: 5 })
    // Each endpoint already holds 3 or 4 of the first ten: 1 or 2 more each, earliest first.
    expect(capped.map((d) => d.eventId)).toEqual(byTime.slice(10, 15).map((d) => d.eventId))
    const rest = await queue.claim({ now: T0 + 1000, limit: 1000, leaseMs: 1000 })
    expect(rest.map((d) => d.eventId)).toEqual(byTime.slice(15).map((d) => d.eventId))
  })
})

describe('MemoryDeliveryQueue claims through its due-order index (fast-check)', () => {
  /** The contract as a scan of every record: what the index must answer, the way the first version computed it. */
  interface Model {
    id: string
    endpointId: string
    seq: number
    due: number
    final: boolean
    lease: string | undefined
    expires: number
  }
  function expected(models: readonly Model[], now: number, limit: number, cap?: number) {
    const held = new Map<string, number>()
    for (const m of models) {
      if (!m.final && m.lease !== undefined && now < m.expires) {
        held.set(m.endpointId, (held.get(m.endpointId) ?? 0) + 1)
      }
    }
    const due = models
      .filter((m) => !m.final && !(m.lease !== undefined && now < m.expires) && m.due <= now)
      .sort((a, b) => a.due - b.due || a.seq - b.seq)
    const out: Model[] = []
    for (const m of due) {
      if (out.length >= limit) break
      const h = held.get(m.endpointId) ?? 0
      if (cap !== undefined && h >= cap) continue
      held.set(m.endpointId, h + 1)
      out.push(m)
    }
    return out.map((m) => m.id)
  }

  const op = fc.oneof(
    fc.record({
      kind: fc.constant('enqueue' as const),
      n: fc.nat(40),
      endpoint: fc.nat(3),
      at: fc.nat(50),
    }),
    fc.record({
      kind: fc.constant('claim' as const),
      step: fc.nat(20),
      limit: fc.integer({ min: 1, max: 6 }),
      cap: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      lease: fc.integer({ min: 1, max: 40 }),
    }),
    fc.record({
      kind: fc.constant('settle' as const),
      pick: fc.nat(),
      final: fc.boolean(),
      at: fc.nat(50),
    }),
    fc.record({
      kind: fc.constant('release' as const),
      pick: fc.nat(),
      at: fc.option(fc.nat(50), { nil: undefined }),
    }),
    fc.record({ kind: fc.constant('replay' as const), n: fc.nat(40), endpoint: fc.nat(3) }),
  )

  test('any sequence of enqueues, claims, settles, releases and replays leases what a scan of every record would', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const queue = new MemoryDeliveryQueue()
        const models = new Map<string, Model>()
        const leased: LeasedDelivery[] = []
        let now = T0
        let seq = 0
        for (const o of ops) {
          if (o.kind === 'enqueue') {
            const d = { ...delivery(o.n, `we_${o.endpoint}`), nextAttemptAt: T0 + o.at }
            const id = `${d.eventId} ${d.endpointId}`
            await queue.enqueue([d])
            if (!models.has(id)) {
              models.set(id, {
                id,
                endpointId: d.endpointId,
                seq: seq++,
                due: d.nextAttemptAt,
                final: false,
                lease: undefined,
                expires: 0,
              })
            }
          } else if (o.kind === 'claim') {
            now += o.step
            const want = expected([...models.values()], now, o.limit, o.cap)
            const got = await queue.claim({
              now,
              limit: o.limit,
              leaseMs: o.lease,
              ...(o.cap === undefined ? {} : { perEndpoint: o.cap }),
            })
            expect(got.map((d) => `${d.eventId} ${d.endpointId}`)).toEqual(want)
            for (const d of got) {
              const m = models.get(`${d.eventId} ${d.endpointId}`)!
              m.lease = d.lease
              m.expires = d.leaseExpiresAt
              leased.push(d)
            }
          } else if (o.kind === 'settle' || o.kind === 'release') {
            const d = leased[o.pick % Math.max(1, leased.length)]
            if (d === undefined) continue
            const m = models.get(`${d.eventId} ${d.endpointId}`)!
            if (o.kind === 'settle') {
              const resolution: DeliveryResolution = o.final
                ? { status: 'dead' }
                : { status: 'pending', nextAttemptAt: now + o.at }
              const holds = !m.final && m.lease === d.lease && now < m.expires
              expect(await queue.settle(d, attempt, resolution, now)).toBe(holds)
              if (holds) {
                m.lease = undefined
                if (o.final) m.final = true
                else m.due = now + o.at
              }
            } else {
              const holds = !m.final && m.lease === d.lease
              expect(await queue.release(d, o.at === undefined ? undefined : now + o.at)).toBe(
                holds,
              )
              if (holds) {
                m.lease = undefined
                if (o.at !== undefined) m.due = now + o.at
              }
            }
          } else {
            const m = models.get(`evt_${o.n} we_${o.endpoint}`)
            expect(
              await queue.replay({ eventId: `evt_${o.n}`, endpointId: `we_${o.endpoint}` }, now),
            ).toBe(m === undefined ? 0 : 1)
            if (m === undefined) continue
            const inFlight = !m.final && m.lease !== undefined && now < m.expires
            if (!inFlight) m.lease = undefined
            m.final = false
            m.due = now
          }
        }
      }),
      { numRuns: 300, interruptAfterTimeLimit: 4_000 },
    )
  })
})
