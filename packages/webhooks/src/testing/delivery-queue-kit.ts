/**
 * What the delivery-queue cases share: the per-test context (a time window of its own and
 * fresh ids), record fixtures, and a claim-then-settle helper.
 *
 * @module
 */
import { expect } from 'vitest'
import type {
  AttemptRecord,
  DeliveryQueue,
  LeasedDelivery,
  NewDelivery,
} from '../delivery-queue.ts'
import type { Register } from './shared.ts'
import { AWKWARD } from './shared.ts'

/** What each test receives: its own time window and id prefix. */
export interface QueueTest {
  /** The start of this test's time window, ms since the epoch; the test stays below `t0 + WINDOW`. */
  readonly t0: number
  /** A random prefix of this test's ids. */
  readonly run: string
}

/** What each group of cases receives from `runDeliveryQueueConformance`. */
export interface QueueContext {
  readonly it: Register<DeliveryQueue, QueueTest>
  readonly concurrency: number
}

/** Each test's time window: earlier tests' leftovers (later windows) are never due in it. */
export const WINDOW = 10_000_000_000
export const MINUTE = 60_000
/** The lease of the cases, in ms. */
export const LEASE = 30_000

/** An endpoint id of this test. */
export function endpointId(test: QueueTest, n = 0): string {
  return `we_${test.run}_${n}`
}

/** A delivery of the event `evt_<run>_<n>` to `endpoint`, created and due at `t0`. */
export function newDelivery(
  test: QueueTest,
  n: number,
  endpoint: string = endpointId(test),
  extra: Partial<NewDelivery> = {},
): NewDelivery {
  const eventId = `evt_${test.run}_${String(n).padStart(4, '0')}`
  return {
    eventId,
    eventType: 'order.created',
    endpointId: endpoint,
    payload: JSON.stringify({
      id: eventId,
      type: 'order.created',
      data: { object: { note: AWKWARD } },
    }),
    createdAt: test.t0,
    nextAttemptAt: test.t0,
    ...extra,
  }
}

/** The attempt log line of attempt `attempt` at `at`. */
export function attemptAt(
  attempt: number,
  at: number,
  extra: Partial<AttemptRecord> = {},
): AttemptRecord {
  return {
    attempt,
    at,
    latencyMs: 12,
    status: 503,
    failure: null,
    body: `busy ${attempt}`,
    ...extra,
  }
}

/** Claims exactly the one delivery due at `now` of this test (the queue holds no other due one). */
export async function claimOne(queue: DeliveryQueue, now: number): Promise<LeasedDelivery> {
  const claimed = await queue.claim({ now, limit: 1, leaseMs: LEASE })
  expect(claimed).toHaveLength(1)
  return claimed[0]!
}

/** Sorted pair keys, for comparing sets of deliveries. */
export function keys(deliveries: readonly { eventId: string; endpointId: string }[]): string[] {
  return deliveries.map((d) => `${d.eventId} ${d.endpointId}`).sort()
}
