/**
 * Claims and leases: only due pending deliveries, earliest first, at most `limit`, never one
 * twice, `perEndpoint` counting the unexpired leases already held, expired leases taken back.
 *
 * @module
 */
import { expect } from 'vitest'
import type { QueueContext } from './delivery-queue-kit.ts'
import { attemptAt, endpointId, keys, LEASE, MINUTE, newDelivery } from './delivery-queue-kit.ts'

/** A lease that outlasts a whole case. */
const LONG = 1000 * MINUTE

/** Registers the claim cases. */
export function claimCases({ it, concurrency }: QueueContext): void {
  it('claim MUST lease only due deliveries (nextAttemptAt <= now), earliest first, at most `limit`', async (queue, test) => {
    const { t0 } = test
    const endpoint = endpointId(test)
    const deliveries = [3, 1, 4, 2, 0].map((k) =>
      newDelivery(test, k, endpoint, { nextAttemptAt: t0 + k * MINUTE }),
    )
    await queue.enqueue(deliveries)
    const byTime = [...deliveries].sort((a, b) => a.nextAttemptAt - b.nextAttemptAt)
    expect(await queue.claim({ now: t0 - 1, limit: 10, leaseMs: LONG })).toEqual([])
    const first = await queue.claim({ now: t0 + 2 * MINUTE, limit: 2, leaseMs: LONG })
    expect(first.map((d) => d.eventId)).toEqual(byTime.slice(0, 2).map((d) => d.eventId))
    const second = await queue.claim({ now: t0 + 2 * MINUTE, limit: 10, leaseMs: LONG })
    expect(second.map((d) => d.eventId)).toEqual([byTime[2]!.eventId])
    const third = await queue.claim({ now: t0 + 10 * MINUTE, limit: 10, leaseMs: LONG })
    expect(third.map((d) => d.eventId)).toEqual(byTime.slice(3).map((d) => d.eventId))
  })

  it('a claimed delivery MUST carry the stored record, a fresh lease and leaseExpiresAt = now + leaseMs', async (queue, test) => {
    const { t0 } = test
    const delivery = newDelivery(test, 1)
    await queue.enqueue([delivery])
    const [leased] = await queue.claim({ now: t0 + 5, limit: 5, leaseMs: LEASE })
    expect(leased).toMatchObject({
      ...delivery,
      status: 'pending',
      attempts: 0,
      log: [],
      leaseExpiresAt: t0 + 5 + LEASE,
    })
    expect(typeof leased!.lease).toBe('string')
    expect(leased!.lease.length).toBeGreaterThanOrEqual(16)
    const { lease, leaseExpiresAt, ...stored } = leased!
    expect(await queue.get(delivery.eventId, delivery.endpointId)).toEqual(stored)
    // Taken back after expiry with another lease.
    const [again] = await queue.claim({ now: leaseExpiresAt, limit: 5, leaseMs: LEASE })
    expect(again!.lease).not.toBe(lease)
    expect(again!.leaseExpiresAt).toBe(leaseExpiresAt + LEASE)
  })

  it('a leased delivery MUST NOT be claimed again before its lease expires, and MUST be after (a crashed worker)', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const [leased] = await queue.claim({ now: t0, limit: 1, leaseMs: LEASE })
    expect(await queue.claim({ now: t0 + LEASE - 1, limit: 10, leaseMs: LEASE })).toEqual([])
    const [taken] = await queue.claim({ now: t0 + LEASE, limit: 10, leaseMs: LEASE })
    expect(taken!.eventId).toBe(leased!.eventId)
    expect(taken!.attempts).toBe(0)
    expect(await queue.claim({ now: t0 + LEASE, limit: 10, leaseMs: LEASE })).toEqual([])
  })

  it('final deliveries MUST NOT be claimed', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([1, 2, 3].map((n) => newDelivery(test, n)))
    const leased = await queue.claim({ now: t0, limit: 3, leaseMs: LEASE })
    const statuses = ['succeeded', 'failed', 'dead'] as const
    for (const [i, delivery] of leased.entries()) {
      expect(await queue.settle(delivery, attemptAt(0, t0), { status: statuses[i]! }, t0)).toBe(
        true,
      )
    }
    expect(await queue.claim({ now: t0 + 1000 * MINUTE, limit: 10, leaseMs: LEASE })).toEqual([])
  })

  it(`${concurrency} concurrent claims MUST NOT lease one delivery twice`, async (queue, test) => {
    const { t0 } = test
    const total = concurrency * 2
    await queue.enqueue(
      Array.from({ length: total }, (_, n) =>
        newDelivery(test, n, endpointId(test, n % 7), { nextAttemptAt: t0 + (n % 5) }),
      ),
    )
    const claims = await Promise.all(
      Array.from({ length: concurrency }, () =>
        queue.claim({ now: t0 + 10, limit: 3, leaseMs: LEASE }),
      ),
    )
    // What the racing claims left is claimed after them; no delivery is leased twice.
    const rest = await queue.claim({ now: t0 + 10, limit: total, leaseMs: LEASE })
    const leased = [...claims.flat(), ...rest]
    expect(leased).toHaveLength(total)
    expect(new Set(keys(leased)).size).toBe(total)
    expect(new Set(leased.map((d) => d.lease)).size).toBe(total)
    // Expired, every one is claimed again exactly once.
    const again = await Promise.all(
      Array.from({ length: concurrency }, () =>
        queue.claim({ now: t0 + 10 + LEASE, limit: 5, leaseMs: LEASE }),
      ),
    )
    const restAgain = await queue.claim({ now: t0 + 10 + LEASE, limit: total, leaseMs: LEASE })
    expect(keys([...again.flat(), ...restAgain])).toEqual(keys(leased))
  })

  it(`${concurrency} concurrent claims with perEndpoint k MUST lease at most k of one endpoint in all`, async (queue, test) => {
    const { t0 } = test
    const endpoint = endpointId(test, 1)
    const k = 3
    await queue.enqueue(
      Array.from({ length: concurrency * 4 }, (_, n) => newDelivery(test, n, endpoint)),
    )
    const claims = await Promise.all(
      Array.from({ length: concurrency }, () =>
        queue.claim({ now: t0 + 1, limit: 2, leaseMs: LEASE, perEndpoint: k }),
      ),
    )
    const leased = claims.flat()
    expect(leased.length).toBeLessThanOrEqual(k)
    expect(new Set(keys(leased)).size).toBe(leased.length)
    // And the cap is reached: a claim alone after them adds up to k, no more.
    const after = await queue.claim({ now: t0 + 1, limit: 10, leaseMs: LEASE, perEndpoint: k })
    expect(leased.length + after.length).toBe(k)
  })

  it('perEndpoint MUST cap the leases of one endpoint, counting the unexpired leases of earlier claims', async (queue, test) => {
    const { t0 } = test
    const a = endpointId(test, 1)
    const b = endpointId(test, 2)
    await queue.enqueue([
      ...[0, 1, 2, 3, 4].map((n) => newDelivery(test, n, a, { nextAttemptAt: t0 + n })),
      ...[5, 6, 7].map((n) => newDelivery(test, n, b, { nextAttemptAt: t0 + n })),
    ])
    const count = (list: readonly { endpointId: string }[], id: string) =>
      list.filter((d) => d.endpointId === id).length
    const first = await queue.claim({ now: t0 + 10, limit: 10, leaseMs: LEASE, perEndpoint: 2 })
    expect([count(first, a), count(first, b)]).toEqual([2, 2])
    // Earliest first within the endpoint.
    expect(first.filter((d) => d.endpointId === a).map((d) => d.nextAttemptAt)).toEqual([
      t0,
      t0 + 1,
    ])
    expect(await queue.claim({ now: t0 + 10, limit: 10, leaseMs: LEASE, perEndpoint: 2 })).toEqual(
      [],
    )
    const third = await queue.claim({ now: t0 + 10, limit: 10, leaseMs: LEASE, perEndpoint: 3 })
    expect([count(third, a), count(third, b)]).toEqual([1, 1])
    // A settled lease no longer counts.
    const settled = first.find((d) => d.endpointId === a)!
    expect(
      await queue.settle(settled, attemptAt(0, t0 + 11), { status: 'succeeded' }, t0 + 11),
    ).toBe(true)
    const fourth = await queue.claim({ now: t0 + 11, limit: 10, leaseMs: LEASE, perEndpoint: 3 })
    expect([count(fourth, a), count(fourth, b)]).toEqual([1, 0])
    // Expired leases no longer count: at t0 + 10 + LEASE only the lease of the fourth claim
    // (one of a) still holds.
    const fifth = await queue.claim({
      now: t0 + 10 + LEASE,
      limit: 10,
      leaseMs: LEASE,
      perEndpoint: 2,
    })
    expect([count(fifth, a), count(fifth, b)]).toEqual([1, 2])
    // Without perEndpoint there is no per-endpoint cap: a has 3 deliveries free (one expired
    // lease of the fourth claim among them), b one.
    const sixth = await queue.claim({ now: t0 + 11 + LEASE, limit: 10, leaseMs: LEASE })
    expect([count(sixth, a), count(sixth, b)]).toEqual([3, 1])
  })
}
