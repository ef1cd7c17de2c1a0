/**
 * The conformance suite of {@link DeliveryQueue}: every delivery queue (memory, PostgreSQL,
 * yours) registers it in its own test file and must pass it unchanged. It checks the contract
 * of `delivery-queue.ts`: enqueue is idempotent on (eventId, endpointId); claims lease due
 * deliveries earliest first, never one twice (50 racing claims), honour `perEndpoint` counting
 * the unexpired leases already held, and take back deliveries whose lease expired (a crashed
 * worker); only the holder of an unexpired lease settles (a wrong or expired lease writes
 * nothing); release; replay of one delivery (any status), an endpoint's backlog and a time
 * range (failed and dead only), resetting attempts and keeping the log; the log's bound of 50
 * lines; list order and paging.
 *
 * Time is only ever the `now` an operation is given. Claims see every delivery of the queue,
 * so each test runs in a time window of its own, earlier than every test before it: what an
 * earlier test left pending is never due in a later one, and range replays select only the
 * test's own window. A queue shared with another run of the suite (or leftovers of an earlier
 * run) must be emptied by `cleanup` or made fresh by `makeQueue`.
 *
 * @module
 */
import { describe } from 'vitest'
import type { DeliveryQueue } from '../delivery-queue.ts'
import { claimCases } from './delivery-queue-claim-cases.ts'
import { enqueueCases } from './delivery-queue-enqueue-cases.ts'
import type { QueueTest } from './delivery-queue-kit.ts'
import { WINDOW } from './delivery-queue-kit.ts'
import { replayCases } from './delivery-queue-replay-cases.ts'
import { settleCases } from './delivery-queue-settle-cases.ts'
import { randomId, registrar } from './shared.ts'

/**
 * Options of {@link runDeliveryQueueConformance}.
 *
 * @example
 * ```ts
 * const options: DeliveryQueueConformanceOptions = { concurrency: 20, timeoutMs: 60_000 }
 * ```
 */
export interface DeliveryQueueConformanceOptions {
  /**
   * The start of the first test's time window, ms since the epoch (default
   * 1,700,000,000,000); each later test starts 10^10 ms (about 116 days) earlier.
   */
  readonly now?: number
  /** Called after each test with its queue (close a client, empty the tables). */
  readonly cleanup?: (queue: DeliveryQueue) => void | Promise<void>
  /** Per-test timeout in milliseconds (default 20,000). */
  readonly timeoutMs?: number
  /** How many calls race in the concurrency tests (default 50, at least 2). */
  readonly concurrency?: number
}

/**
 * Registers the conformance tests of a {@link DeliveryQueue} with vitest (an optional peer
 * dependency of this package). Call it at the top level of a test file.
 *
 * @param name shown in the test names, e.g. `postgres`.
 * @param makeQueue gives a ready queue for one test; called once per test.
 *
 * @example
 * ```ts
 * import { MemoryDeliveryQueue } from '@api-blocks/webhooks'
 * import { runDeliveryQueueConformance } from '@api-blocks/webhooks/testing'
 *
 * runDeliveryQueueConformance('memory', () => new MemoryDeliveryQueue())
 * ```
 */
export function runDeliveryQueueConformance(
  name: string,
  makeQueue: () => DeliveryQueue | Promise<DeliveryQueue>,
  options: DeliveryQueueConformanceOptions = {},
): void {
  const origin = options.now ?? 1_700_000_000_000
  let tests = 0
  const next = (): QueueTest => ({ t0: origin - tests++ * WINDOW, run: randomId() })
  const { it, concurrency } = registrar('runDeliveryQueueConformance', makeQueue, options, next)
  const context = { it, concurrency }

  describe(`DeliveryQueue conformance: ${name}`, () => {
    describe('enqueue, get and list', () => enqueueCases(context))
    describe('claims and leases', () => claimCases(context))
    describe('settle and release', () => settleCases(context))
    describe('replay and the attempt log', () => replayCases(context))
  })
}
