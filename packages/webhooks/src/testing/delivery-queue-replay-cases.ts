/**
 * Replay and the attempt log: one delivery (any status), an endpoint's backlog and a time
 * range (`failed` and `dead` only), each made `pending` with 0 attempts, due at `now`, its log
 * kept; the log keeps the last 50 lines.
 *
 * @module
 */
import { expect } from 'vitest'
import type { DeliveryQueue, DeliveryStatus } from '../delivery-queue.ts'
import type { QueueContext, QueueTest } from './delivery-queue-kit.ts'
import {
  attemptAt,
  claimOne,
  endpointId,
  LEASE,
  MINUTE,
  newDelivery,
} from './delivery-queue-kit.ts'

/**
 * Enqueues one delivery per status to `endpoint` (created at `t0 + createdOffset`), settled
 * to that status at `t0` (`pending` ones after one attempt), and answers their event ids.
 */
async function onePerStatus(
  queue: DeliveryQueue,
  test: QueueTest,
  endpoint: string,
  first: number,
  createdOffset = 0,
): Promise<Record<DeliveryStatus, string>> {
  const { t0 } = test
  const statuses: DeliveryStatus[] = ['succeeded', 'failed', 'dead', 'pending']
  const ids = {} as Record<DeliveryStatus, string>
  for (const [i, status] of statuses.entries()) {
    const delivery = newDelivery(test, first + i, endpoint, { createdAt: t0 + createdOffset })
    await queue.enqueue([delivery])
    const leased = await claimOne(queue, t0)
    const resolution =
      status === 'pending' ? { status, nextAttemptAt: t0 + 1000 * MINUTE } : { status }
    expect(await queue.settle(leased, attemptAt(0, t0), resolution, t0)).toBe(true)
    ids[status] = delivery.eventId
  }
  return ids
}

/** Registers the replay and log cases. */
export function replayCases({ it }: QueueContext): void {
  it('replay of one delivery MUST reset it to pending, 0 attempts, due at now, log kept, whatever its status', async (queue, test) => {
    const { t0 } = test
    const endpoint = endpointId(test)
    const ids = await onePerStatus(queue, test, endpoint, 1)
    const now = t0 + 5 * MINUTE
    for (const eventId of Object.values(ids)) {
      expect(await queue.replay({ eventId, endpointId: endpoint }, now)).toBe(1)
      expect(await queue.get(eventId, endpoint)).toMatchObject({
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        updatedAt: now,
        log: [attemptAt(0, t0)],
      })
    }
    expect(await queue.replay({ eventId: `${ids.failed}x`, endpointId: endpoint }, now)).toBe(0)
    expect(await queue.replay({ eventId: ids.failed, endpointId: endpointId(test, 9) }, now)).toBe(
      0,
    )
    const claimed = await queue.claim({ now, limit: 10, leaseMs: LEASE })
    expect(claimed.map((d) => d.eventId).sort()).toEqual(Object.values(ids).sort())
    // A replayed delivery's next attempt is number 0 again, and the log grows.
    const one = claimed[0]!
    expect(
      await queue.settle(one, attemptAt(one.attempts, now), { status: 'succeeded' }, now),
    ).toBe(true)
    expect(await queue.get(one.eventId, endpoint)).toMatchObject({
      attempts: 1,
      log: [attemptAt(0, t0), attemptAt(0, now)],
    })
  })

  it('replay of a delivery whose lease expired MUST end that lease', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const leased = await claimOne(queue, t0)
    const now = t0 + LEASE
    expect(
      await queue.replay({ eventId: leased.eventId, endpointId: leased.endpointId }, now),
    ).toBe(1)
    expect(await queue.release(leased)).toBe(false)
    const again = await claimOne(queue, now)
    expect(again.lease).not.toBe(leased.lease)
    expect(await queue.get(leased.eventId, leased.endpointId)).toMatchObject({
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      log: [],
    })
  })

  it("replay during an attempt in flight (an unexpired lease) MUST keep the lease: the holder's settle lands on the reset delivery", async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    const first = await claimOne(queue, t0)
    expect(
      await queue.settle(
        first,
        attemptAt(0, t0),
        { status: 'pending', nextAttemptAt: t0 + 5 },
        t0 + 1,
      ),
    ).toBe(true)
    const leased = await claimOne(queue, t0 + 5)
    expect(leased.attempts).toBe(1)
    const pair = { eventId: leased.eventId, endpointId: leased.endpointId }
    expect(await queue.replay(pair, t0 + 6)).toBe(1)
    expect(await queue.get(pair.eventId, pair.endpointId)).toMatchObject({
      status: 'pending',
      attempts: 0,
      nextAttemptAt: t0 + 6,
    })
    // Still leased: nobody else claims it while the attempt runs.
    expect(await queue.claim({ now: t0 + 7, limit: 10, leaseMs: LEASE })).toEqual([])
    // The attempt in flight ends: its line is appended and its resolution applies, counted
    // from the replay's reset.
    expect(
      await queue.settle(
        leased,
        attemptAt(1, t0 + 5),
        { status: 'pending', nextAttemptAt: t0 + 9 },
        t0 + 8,
      ),
    ).toBe(true)
    expect(await queue.get(pair.eventId, pair.endpointId)).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: t0 + 9,
      log: [attemptAt(0, t0), attemptAt(1, t0 + 5)],
    })
    const next = await claimOne(queue, t0 + 9)
    expect(next.lease).not.toBe(leased.lease)
  })

  it("replay of an endpoint's backlog MUST select its failed and dead deliveries only", async (queue, test) => {
    const { t0 } = test
    const endpoint = endpointId(test, 1)
    const other = endpointId(test, 2)
    const ids = await onePerStatus(queue, test, endpoint, 1)
    const others = await onePerStatus(queue, test, other, 11)
    const now = t0 + MINUTE
    expect(await queue.replay({ endpointId: endpoint }, now)).toBe(2)
    for (const status of ['failed', 'dead'] as const) {
      expect(await queue.get(ids[status], endpoint)).toMatchObject({
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        log: [attemptAt(0, t0)],
      })
      expect(await queue.get(others[status], other)).toMatchObject({ status, attempts: 1 })
    }
    expect(await queue.get(ids.succeeded, endpoint)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    })
    expect(await queue.get(ids.pending, endpoint)).toMatchObject({
      status: 'pending',
      attempts: 1,
      nextAttemptAt: t0 + 1000 * MINUTE,
    })
    // Nothing failed or dead is left.
    expect(await queue.replay({ endpointId: endpoint }, now)).toBe(0)
    expect(await queue.replay({ endpointId: endpointId(test, 3) }, now)).toBe(0)
  })

  it('replay of a time range MUST select failed and dead deliveries whose event was created in [from, to)', async (queue, test) => {
    const { t0 } = test
    const a = endpointId(test, 1)
    const b = endpointId(test, 2)
    const early = await onePerStatus(queue, test, a, 1, 0)
    const inside = await onePerStatus(queue, test, a, 11, MINUTE)
    const insideB = await onePerStatus(queue, test, b, 21, 2 * MINUTE - 1)
    const late = await onePerStatus(queue, test, b, 31, 2 * MINUTE)
    const now = t0 + 10 * MINUTE
    expect(await queue.replay({ from: t0 + MINUTE, to: t0 + 2 * MINUTE }, now)).toBe(4)
    for (const status of ['failed', 'dead'] as const) {
      expect(await queue.get(inside[status], a)).toMatchObject({
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
      })
      expect(await queue.get(insideB[status], b)).toMatchObject({
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
      })
      expect(await queue.get(early[status], a)).toMatchObject({ status, attempts: 1 })
      expect(await queue.get(late[status], b)).toMatchObject({ status, attempts: 1 })
    }
    expect(await queue.get(inside.succeeded, a)).toMatchObject({ status: 'succeeded' })
    // A range and an endpoint together; an endpoint with only `from` or only `to`.
    expect(await queue.replay({ endpointId: b, from: t0, to: t0 + 10 * MINUTE }, now)).toBe(2)
    expect(await queue.get(late.dead, b)).toMatchObject({ status: 'pending', attempts: 0 })
    expect(await queue.get(early.dead, a)).toMatchObject({ status: 'dead' })
    expect(await queue.replay({ endpointId: a, from: t0 + 1 }, now)).toBe(0)
    expect(await queue.replay({ endpointId: a, to: t0 + 1 }, now)).toBe(2)
  })

  it('the attempt log MUST keep the last 50 lines, oldest first, while attempts keeps counting', async (queue, test) => {
    const { t0 } = test
    await queue.enqueue([newDelivery(test, 1)])
    let now = t0
    for (let attempt = 0; attempt < 55; attempt++) {
      const leased = await claimOne(queue, now)
      expect(leased.attempts).toBe(attempt)
      expect(
        await queue.settle(
          leased,
          attemptAt(attempt, now),
          { status: 'pending', nextAttemptAt: now + 1 },
          now,
        ),
      ).toBe(true)
      now += 1
    }
    const delivery = (await queue.get(`evt_${test.run}_0001`, endpointId(test)))!
    expect(delivery.attempts).toBe(55)
    expect(delivery.log).toHaveLength(50)
    expect(delivery.log.map((line) => line.attempt)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 5),
    )
    // A replay keeps the log; the next line still pushes the oldest out.
    expect(
      await queue.replay({ eventId: delivery.eventId, endpointId: delivery.endpointId }, now),
    ).toBe(1)
    const leased = await claimOne(queue, now)
    await queue.settle(leased, attemptAt(0, now), { status: 'dead' }, now)
    const after = (await queue.get(delivery.eventId, delivery.endpointId))!
    expect(after.log).toHaveLength(50)
    expect(after.log[0]!.attempt).toBe(6)
    expect(after.log[49]).toEqual(attemptAt(0, now))
    expect(after.attempts).toBe(1)
  })
}
