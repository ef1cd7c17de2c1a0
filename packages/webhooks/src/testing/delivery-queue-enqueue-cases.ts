/**
 * Enqueue, get and list: records round-trip, enqueueing is idempotent on (eventId,
 * endpointId), copies, list order and paging.
 *
 * @module
 */
import { expect } from 'vitest'
import type { Delivery, NewDelivery } from '../delivery-queue.ts'
import type { QueueContext } from './delivery-queue-kit.ts'
import {
  attemptAt,
  claimOne,
  endpointId,
  LEASE,
  MINUTE,
  newDelivery,
} from './delivery-queue-kit.ts'
import { promised } from './shared.ts'

/** A delivery as enqueued, before any attempt (`updatedAt` is the store's). */
function fresh(delivery: NewDelivery): Omit<Delivery, 'updatedAt'> {
  return { ...delivery, status: 'pending', attempts: 0, log: [] }
}

/** Registers the enqueue, get and list cases. */
export function enqueueCases({ it, concurrency }: QueueContext): void {
  it('every method MUST return a Promise', async (queue, test) => {
    const { t0 } = test
    const delivery = newDelivery(test, 1)
    expect(await promised(queue.enqueue([delivery]))).toBe(1)
    expect(await promised(queue.get(delivery.eventId, delivery.endpointId))).toMatchObject(
      fresh(delivery),
    )
    expect(await promised(queue.list({ endpointId: delivery.endpointId, limit: 10 }))).toHaveLength(
      1,
    )
    const [leased] = await promised(queue.claim({ now: t0, limit: 1, leaseMs: LEASE }))
    expect(await promised(queue.release(leased!))).toBe(true)
    const again = await claimOne(queue, t0)
    expect(await promised(queue.settle(again, attemptAt(0, t0), { status: 'dead' }, t0))).toBe(true)
    expect(
      await promised(
        queue.replay({ eventId: delivery.eventId, endpointId: delivery.endpointId }, t0),
      ),
    ).toBe(1)
  })

  it('enqueue MUST add pending deliveries with 0 attempts and an empty log, unchanged', async (queue, test) => {
    const a = newDelivery(test, 1, endpointId(test, 1), {
      nextAttemptAt: test.t0 + MINUTE,
      eventType: "a'b.c",
    })
    const b = newDelivery(test, 2, endpointId(test, 2), {
      payload: '{"x":"\\u0000 ü 🎉 \'"}',
      createdAt: test.t0 - 5,
    })
    expect(await queue.enqueue([a, b])).toBe(2)
    const got = await queue.get(a.eventId, a.endpointId)
    expect(got).toMatchObject(fresh(a))
    expect(typeof got!.updatedAt).toBe('number')
    expect(await queue.get(b.eventId, b.endpointId)).toMatchObject(fresh(b))
    expect(await queue.get(a.eventId, b.endpointId)).toBeUndefined()
    expect(await queue.get(`${a.eventId}x`, a.endpointId)).toBeUndefined()
    expect(await queue.enqueue([])).toBe(0)
  })

  it('enqueue MUST be idempotent on (eventId, endpointId) and leave the first record as it is', async (queue, test) => {
    const first = newDelivery(test, 1)
    expect(await queue.enqueue([first])).toBe(1)
    const settled = await claimOne(queue, test.t0)
    await queue.settle(settled, attemptAt(0, test.t0), { status: 'failed' }, test.t0)
    const before = await queue.get(first.eventId, first.endpointId)
    const changed = { ...first, payload: '{"other":true}', nextAttemptAt: test.t0 + 1 }
    expect(await queue.enqueue([changed])).toBe(0)
    expect(await queue.get(first.eventId, first.endpointId)).toEqual(before)
    // The same pair twice in one batch counts once; the same event to another endpoint is another delivery.
    const second = newDelivery(test, 2)
    expect(
      await queue.enqueue([second, second, newDelivery(test, 2, endpointId(test, 9)), first]),
    ).toBe(2)
  })

  it(`of ${concurrency} concurrent enqueues of one pair exactly one MUST add it`, async (queue, test) => {
    const delivery = newDelivery(test, 1)
    const added = await Promise.all(
      Array.from({ length: concurrency }, () => queue.enqueue([delivery])),
    )
    expect(added.reduce((sum, n) => sum + n, 0)).toBe(1)
    expect(await queue.list({ endpointId: delivery.endpointId, limit: 10 })).toHaveLength(1)
  })

  it('records MUST NOT change when a caller mutates what it passed or got', async (queue, test) => {
    const delivery = newDelivery(test, 1)
    await queue.enqueue([delivery])
    delivery.payload = 'changed'
    const leased = await claimOne(queue, test.t0)
    const line = attemptAt(0, test.t0)
    await queue.settle(
      leased,
      line,
      { status: 'pending', nextAttemptAt: test.t0 + MINUTE },
      test.t0,
    )
    line.body = 'changed'
    const got = (await queue.get(leased.eventId, leased.endpointId))!
    ;(got.log[0] as { body: string | null }).body = 'mutated'
    got.status = 'dead'
    const again = (await queue.get(leased.eventId, leased.endpointId))!
    expect(again.payload).not.toBe('changed')
    expect(again.status).toBe('pending')
    expect(again.log).toEqual([attemptAt(0, test.t0)])
    const [listed] = await queue.list({ endpointId: leased.endpointId, limit: 1 })
    ;(listed!.log as unknown[]).length = 0
    expect((await queue.get(leased.eventId, leased.endpointId))!.log).toHaveLength(1)
  })

  it('list MUST answer one endpoint newest event first (createdAt, then eventId, descending), paged by `after`', async (queue, test) => {
    const { t0 } = test
    const endpoint = endpointId(test, 1)
    const deliveries = [
      newDelivery(test, 1, endpoint, { createdAt: t0 + 2 }),
      newDelivery(test, 2, endpoint, { createdAt: t0 + 1 }),
      newDelivery(test, 3, endpoint, { createdAt: t0 + 1 }),
      newDelivery(test, 4, endpoint, { createdAt: t0 }),
      newDelivery(test, 5, endpoint, { createdAt: t0 + 3 }),
    ]
    await queue.enqueue([
      ...deliveries,
      newDelivery(test, 6, endpointId(test, 2), { createdAt: t0 + 9 }),
    ])
    const order = [4, 0, 2, 1, 3].map((i) => deliveries[i]!.eventId)
    const ids = (list: readonly Delivery[]) => list.map((d) => d.eventId)
    expect(ids(await queue.list({ endpointId: endpoint, limit: 10 }))).toEqual(order)
    const page1 = await queue.list({ endpointId: endpoint, limit: 2 })
    expect(ids(page1)).toEqual(order.slice(0, 2))
    const page2 = await queue.list({ endpointId: endpoint, limit: 2, after: page1[1]! })
    expect(ids(page2)).toEqual(order.slice(2, 4))
    const last = page2[1]!
    expect(
      ids(
        await queue.list({
          endpointId: endpoint,
          limit: 2,
          after: { createdAt: last.createdAt, eventId: last.eventId },
        }),
      ),
    ).toEqual(order.slice(4))
    expect(
      await queue.list({
        endpointId: endpoint,
        limit: 2,
        after: { createdAt: t0, eventId: order[4]! },
      }),
    ).toEqual([])
    expect(await queue.list({ endpointId: endpointId(test, 3), limit: 10 })).toEqual([])
  })

  it('list MUST filter by status when given', async (queue, test) => {
    const { t0 } = test
    const endpoint = endpointId(test, 1)
    await queue.enqueue([1, 2, 3].map((n) => newDelivery(test, n, endpoint, { createdAt: t0 + n })))
    const [first] = await queue.claim({ now: t0, limit: 1, leaseMs: LEASE })
    await queue.settle(first!, attemptAt(0, t0), { status: 'dead' }, t0)
    const [second] = await queue.claim({ now: t0, limit: 1, leaseMs: LEASE })
    await queue.settle(second!, attemptAt(0, t0), { status: 'succeeded' }, t0)
    expect(
      (await queue.list({ endpointId: endpoint, status: 'dead', limit: 10 })).map((d) => d.eventId),
    ).toEqual([first!.eventId])
    expect(
      (await queue.list({ endpointId: endpoint, status: 'succeeded', limit: 10 })).map(
        (d) => d.eventId,
      ),
    ).toEqual([second!.eventId])
    expect(await queue.list({ endpointId: endpoint, status: 'pending', limit: 10 })).toHaveLength(1)
    expect(await queue.list({ endpointId: endpoint, status: 'failed', limit: 10 })).toEqual([])
    const all = await queue.list({ endpointId: endpoint, limit: 10 })
    expect(all).toHaveLength(3)
    expect(all.find((d) => d.eventId === first!.eventId)).toMatchObject({
      status: 'dead',
      attempts: 1,
      log: [attemptAt(0, t0)],
    })
  })
}
