/**
 * Settle and release: only the holder of an unexpired lease settles, once; a wrong or expired
 * lease writes nothing; release gives the delivery back without an attempt.
 *
 * @module
 */
import { expect } from 'vitest'
import type { QueueContext } from './delivery-queue-kit.ts'
import {
  attemptAt,
  claimOne,
  endpointId,
  LEASE,
  MINUTE,
  newDelivery,
} from './delivery-queue-kit.ts'
import { AWKWARD } from './shared.ts'

/** Registers the settle and release cases. */
export function settleCases({ it, concurrency }: QueueContext): void {
  it('settle by the lease holder MUST append the attempt, add one to attempts, apply the resolution and end the lease', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const leased = await claimOne(queue, t0)
    const line = attemptAt(0, t0, {
      status: null,
      failure: 'timeout',
      body: AWKWARD,
      latencyMs: 10_000,
    })
    expect(
      await queue.settle(leased, line, { status: 'pending', nextAttemptAt: t0 + MINUTE }, t0 + 1),
    ).toBe(true)
    const { lease, leaseExpiresAt, ...stored } = leased
    const after = {
      ...stored,
      attempts: 1,
      log: [line],
      nextAttemptAt: t0 + MINUTE,
      updatedAt: t0 + 1,
    }
    expect(await queue.get(leased.eventId, leased.endpointId)).toEqual(after)
    // The lease ended: settling again with it writes nothing.
    expect(await queue.settle(leased, attemptAt(1, t0 + 2), { status: 'succeeded' }, t0 + 2)).toBe(
      false,
    )
    expect(await queue.get(leased.eventId, leased.endpointId)).toEqual(after)
    // Due again at nextAttemptAt, not before.
    expect(await queue.claim({ now: t0 + MINUTE - 1, limit: 1, leaseMs: LEASE })).toEqual([])
    const next = await claimOne(queue, t0 + MINUTE)
    expect(next).toMatchObject({ attempts: 1, log: [line] })
    const ok = attemptAt(1, t0 + MINUTE, { status: 200, body: null })
    expect(await queue.settle(next, ok, { status: 'succeeded' }, t0 + MINUTE + 1)).toBe(true)
    expect(await queue.get(leased.eventId, leased.endpointId)).toMatchObject({
      status: 'succeeded',
      attempts: 2,
      log: [line, ok],
      updatedAt: t0 + MINUTE + 1,
    })
  })

  it('settle with a wrong lease MUST answer false and write nothing', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const leased = await claimOne(queue, t0)
    const before = await queue.get(leased.eventId, leased.endpointId)
    const forged = {
      ...leased,
      lease: `${leased.lease.slice(0, -1)}${leased.lease.endsWith('A') ? 'B' : 'A'}`,
    }
    expect(await queue.settle(forged, attemptAt(0, t0), { status: 'succeeded' }, t0)).toBe(false)
    expect(
      await queue.settle({ ...leased, lease: '' }, attemptAt(0, t0), { status: 'dead' }, t0),
    ).toBe(false)
    expect(await queue.get(leased.eventId, leased.endpointId)).toEqual(before)
    // The real holder still can.
    expect(await queue.settle(leased, attemptAt(0, t0), { status: 'succeeded' }, t0)).toBe(true)
  })

  it('settle with an expired lease MUST answer false and write nothing, even before anyone claimed it again', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const leased = await claimOne(queue, t0)
    const before = await queue.get(leased.eventId, leased.endpointId)
    expect(
      await queue.settle(leased, attemptAt(0, t0), { status: 'succeeded' }, leased.leaseExpiresAt),
    ).toBe(false)
    expect(await queue.get(leased.eventId, leased.endpointId)).toEqual(before)
    // Taken back by another worker: the old lease stays refused, the new one holds.
    const taken = await claimOne(queue, leased.leaseExpiresAt)
    expect(
      await queue.settle(leased, attemptAt(0, t0), { status: 'succeeded' }, leased.leaseExpiresAt),
    ).toBe(false)
    expect(await queue.release(leased)).toBe(false)
    expect(
      await queue.settle(
        taken,
        attemptAt(0, taken.leaseExpiresAt - 1),
        { status: 'failed' },
        taken.leaseExpiresAt - 1,
      ),
    ).toBe(true)
    expect(await queue.get(leased.eventId, leased.endpointId)).toMatchObject({
      status: 'failed',
      attempts: 1,
    })
  })

  it(`of ${concurrency} concurrent settles with one lease exactly one MUST hold`, async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const leased = await claimOne(queue, t0)
    const answers = await Promise.all(
      Array.from({ length: concurrency }, (_, i) =>
        queue.settle(
          leased,
          attemptAt(0, t0, { body: `racer ${i}` }),
          { status: 'pending', nextAttemptAt: t0 + i },
          t0 + 1,
        ),
      ),
    )
    expect(answers.filter(Boolean)).toHaveLength(1)
    const stored = await queue.get(leased.eventId, leased.endpointId)
    expect(stored).toMatchObject({ attempts: 1, status: 'pending' })
    expect(stored!.log).toHaveLength(1)
  })

  it('release of an expired lease that nobody claimed again MUST still release (release takes no now)', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const [leased] = await queue.claim({ now: t0, limit: 1, leaseMs: LEASE })
    // A claim after the expiry that takes another delivery (due earlier), not this one.
    const earlier = newDelivery(test, 2, endpointId(test, 2), { nextAttemptAt: t0 - 1 })
    await queue.enqueue([earlier])
    const other = await queue.claim({ now: t0 + LEASE + 1, limit: 1, leaseMs: LEASE })
    expect(other.map((d) => d.eventId)).toEqual([earlier.eventId])
    expect(await queue.release(leased!, t0 + LEASE + MINUTE)).toBe(true)
    expect(await queue.get(leased!.eventId, leased!.endpointId)).toMatchObject({
      status: 'pending',
      attempts: 0,
      nextAttemptAt: t0 + LEASE + MINUTE,
    })
    expect(await queue.release(leased!)).toBe(false)
  })

  it('release MUST give the delivery back without an attempt, due as it was or at the time given', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1, undefined, { nextAttemptAt: t0 - 5 })])
    const leased = await claimOne(queue, t0)
    const before = await queue.get(leased.eventId, leased.endpointId)
    expect(await queue.release(leased)).toBe(true)
    expect(await queue.get(leased.eventId, leased.endpointId)).toMatchObject({
      status: 'pending',
      attempts: 0,
      log: [],
      nextAttemptAt: t0 - 5,
    })
    // Released leases end: the holder can neither settle nor release again.
    expect(await queue.settle(leased, attemptAt(0, t0), { status: 'succeeded' }, t0)).toBe(false)
    expect(await queue.release(leased)).toBe(false)
    const again = await claimOne(queue, t0)
    expect(again.lease).not.toBe(leased.lease)
    expect(await queue.release(again, t0 + MINUTE)).toBe(true)
    expect(await queue.get(leased.eventId, leased.endpointId)).toMatchObject({
      ...before,
      nextAttemptAt: t0 + MINUTE,
      updatedAt: expect.any(Number),
    })
    expect(await queue.claim({ now: t0 + MINUTE - 1, limit: 1, leaseMs: LEASE })).toEqual([])
    const third = await claimOne(queue, t0 + MINUTE)
    // A wrong lease, or one already settled, releases nothing.
    expect(await queue.release({ ...third, lease: `${third.lease}x` })).toBe(false)
    expect(
      await queue.settle(third, attemptAt(0, t0 + MINUTE), { status: 'dead' }, t0 + MINUTE),
    ).toBe(true)
    expect(await queue.release(third)).toBe(false)
    expect(await queue.get(leased.eventId, leased.endpointId)).toMatchObject({
      status: 'dead',
      attempts: 1,
    })
  })
}
