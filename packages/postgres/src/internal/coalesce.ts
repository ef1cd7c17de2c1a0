/**
 * Coalesces concurrent calls into one statement: the first call goes at once, alone; the calls
 * made while a statement is in flight wait and go together in the next one, up to a bound.
 * No timer: a lone call is never held back, and under load each statement (and its commit)
 * carries every call that arrived during the previous one.
 *
 * @module
 */

/** A call waiting for its statement. */
interface Waiter<T> {
  readonly item: T
  resolve(settled: boolean): void
  reject(error: unknown): void
}

/**
 * Runs `run` on batches of items, one batch in flight at a time, at most `max` items each;
 * `run` answers each item's result in the order of the items. When `run` rejects, every call
 * of that batch rejects with its error; the next batch goes on.
 *
 * @example
 * ```ts
 * const settles = new Coalescer<Row>(256, (rows) => settleAll(rows))
 * const settled = await settles.add(row)
 * ```
 */
export class Coalescer<T> {
  readonly #max: number
  readonly #run: (items: T[]) => Promise<boolean[]>
  /** The calls that came while a batch was in flight: at most one per caller awaiting it. */
  readonly #waiting: Waiter<T>[] = []
  #running = false

  constructor(max: number, run: (items: T[]) => Promise<boolean[]>) {
    this.#max = max
    this.#run = run
  }

  /** The item's result, once the batch it joined has run. */
  add(item: T): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject })
      if (!this.#running) void this.#drain()
    })
  }

  async #drain(): Promise<void> {
    this.#running = true
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0, this.#max)
        try {
          const results = await this.#run(batch.map((waiter) => waiter.item))
          for (const [i, waiter] of batch.entries()) waiter.resolve(results[i] === true)
        } catch (error) {
          for (const waiter of batch) waiter.reject(error)
        }
      }
    } finally {
      this.#running = false
    }
  }
}
