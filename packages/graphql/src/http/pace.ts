/**
 * Backpressure for event streams. graphql-sse pulls a subscription's results as fast as they
 * come and queues the events it has not yet sent without a bound, so a client that reads slowly
 * (or not at all) would grow that queue without end. The pacer stops pulling the subscription
 * while too many of its events wait unsent: the source (a pub/sub's bounded buffer) then holds
 * them, or drops them by its own rule.
 *
 * @module
 */
import { iteratorOf } from '../iterator.ts'

/** Events of one stream that may wait unsent before the subscription is no longer pulled. */
const MAX_UNSENT_EVENTS = 16

/**
 * Counts the events of one stream taken from its subscription but not yet written out.
 *
 * @example
 * ```ts
 * const pacer = new Pacer()
 * const events = paced(subscription, pacer) // pacer.sent() as each event is written
 * ```
 */
export class Pacer {
  #unsent = 0
  #closed = false
  #wake: (() => void) | undefined

  /** Waits until another event may be taken; false once the stream is closed. */
  async acquire(): Promise<boolean> {
    while (this.#unsent >= MAX_UNSENT_EVENTS && !this.#closed) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve
      })
    }
    if (this.#closed) return false
    this.#unsent++
    return true
  }

  /** One event was written out. */
  sent(): void {
    if (this.#unsent > 0) this.#unsent--
    this.#release()
  }

  /** The stream ended: nothing more is taken. */
  close(): void {
    this.#closed = true
    this.#release()
  }

  #release(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}

/**
 * `source` taken one result at a time, only while `pacer` allows it; returning it (the client
 * went away) returns `source`.
 *
 * @example
 * ```ts
 * for await (const result of paced(await subscribe(args), pacer)) send(result)
 * ```
 */
export function paced<T>(
  source: AsyncIterable<T>,
  pacer: Pacer,
): AsyncGenerator<T, undefined, undefined> {
  const iterator = source[Symbol.asyncIterator]()
  const end = async (): Promise<IteratorResult<T, undefined>> => {
    pacer.close()
    await iterator.return?.()
    return { done: true, value: undefined }
  }
  return iteratorOf(async () => {
    if (!(await pacer.acquire())) return { done: true, value: undefined }
    return (await iterator.next()) as IteratorResult<T, undefined>
  }, end)
}
