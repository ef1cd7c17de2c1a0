/**
 * Ordering is not guaranteed (docs/spec.md §6 rule 2): retries and parallel workers deliver
 * events out of order. A receiver that applies fat events keeps, per object, the last version
 * (or `created`) it applied, and skips an event older than that.
 *
 * @module
 */

/**
 * What {@link FreshnessTracker.observe} says about an event: `fresh` (newer than anything seen
 * for the object: apply it), `stale` (older: skip it, or fetch the current state), `same` (the
 * position already seen: a repeat).
 *
 * @example
 * ```ts
 * const verdict: Freshness = tracker.observe('order:ord_1', 3)
 * ```
 */
export type Freshness = 'fresh' | 'stale' | 'same'

/**
 * Options of {@link createFreshnessTracker}.
 *
 * @example
 * ```ts
 * const options: FreshnessTrackerOptions = { maxObjects: 10_000 }
 * ```
 */
export interface FreshnessTrackerOptions {
  /** How many objects are remembered (default 100,000); past it the least recently seen is forgotten. */
  maxObjects?: number
}

/**
 * Remembers the last position seen per object.
 *
 * @example
 * ```ts
 * if (tracker.observe(`order:${order.id}`, order.version) === 'fresh') await save(order)
 * ```
 */
export interface FreshnessTracker {
  /**
   * Compares `position` (a version number, or the event's `created`) with the last one seen for
   * `objectKey`, and keeps it when it is newer. An object not seen before (or forgotten past
   * the bound) is `fresh`.
   */
  observe(objectKey: string, position: number): Freshness
  /** How many objects are remembered. */
  readonly size: number
}

/**
 * Makes a freshness tracker: an in-memory map from object key to the highest position seen,
 * bounded (least recently seen evicted first). It lives in one process; for several, keep the
 * version beside the object in your database and compare there.
 *
 * @example
 * ```ts
 * const tracker = createFreshnessTracker()
 * const receiver = createWebhookReceiver({
 *   secrets: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
 *   handler: async (event) => {
 *     const order = event.data.object as { id: string; version: number }
 *     if (tracker.observe(`order:${order.id}`, order.version) !== 'fresh') return // out of order or a repeat
 *     console.log('apply', order)
 *   },
 * })
 * ```
 */
export function createFreshnessTracker(options: FreshnessTrackerOptions = {}): FreshnessTracker {
  const maxObjects = options.maxObjects ?? 100_000
  if (!Number.isSafeInteger(maxObjects) || maxObjects < 1) {
    throw new RangeError('maxObjects is a positive integer')
  }
  // A Map iterates in insertion order: re-inserting on every observation makes its first key
  // the least recently seen.
  const last = new Map<string, number>()
  return {
    observe(objectKey: string, position: number): Freshness {
      if (typeof position !== 'number' || Number.isNaN(position)) {
        throw new TypeError('position is a number')
      }
      const seen = last.get(objectKey)
      if (seen !== undefined) last.delete(objectKey)
      const verdict: Freshness =
        seen === undefined || position > seen ? 'fresh' : position === seen ? 'same' : 'stale'
      last.set(objectKey, verdict === 'fresh' ? position : seen!)
      if (last.size > maxObjects) last.delete(last.keys().next().value!)
      return verdict
    },
    get size() {
      return last.size
    },
  }
}
